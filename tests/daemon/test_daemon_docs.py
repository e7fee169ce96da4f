"""docs/daemon.md lists every configuration key with its default, and every command I own."""

import json

import pytest
from click.testing import CliRunner

from tests.paths import ROOT
from xyleme.cli import cli
from xyleme.config import Config, as_dict, field_doc, sections

DOCS = (ROOT / "docs" / "daemon.md").read_text()
CONFIGURATION = DOCS.split("## Configuration", 1)[1]


@pytest.mark.parametrize("section", list(sections()))
def test_every_key_is_in_the_configuration_section_with_its_default(section):
    body = CONFIGURATION.split(f"### [{section}]", 1)[1].split("###", 1)[0]
    for key, value in as_dict(Config())[section].items():
        default = "(unset)" if value is None else json.dumps(value)
        row = f"| `{key}` | `{default}` | {field_doc(sections()[section], key)} |"
        assert row in body, f"docs/daemon.md lacks [{section}] {key}: {row}"


@pytest.mark.parametrize(
    "command",
    [
        ["run"],
        ["status"],
        ["export"],
        ["seed", "add"],
        ["pause"],
        ["resume"],
        ["config", "show"],
    ],
)
def test_each_command_has_help_and_is_documented(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output
    assert f"xyleme {' '.join(command)}" in DOCS or f"`{' '.join(command)}`" in DOCS
