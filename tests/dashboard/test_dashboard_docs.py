"""docs/dashboard.md documents every setting, every API endpoint and the screenshots."""

from __future__ import annotations

import dataclasses
import re

from metadata import Metadata
from tests.paths import ROOT
from xyleme.dashboard import DashboardSettings, create_app

DOC = (ROOT / "docs" / "dashboard.md").read_text()


def test_every_setting_is_in_the_table():
    for field in dataclasses.fields(DashboardSettings):
        assert f"| `{field.name}` | " in DOC, field.name


def test_every_api_endpoint_is_documented_and_routed(tmp_path):
    Metadata.create(tmp_path / "metadata.db").close()
    routes = {r.resource.canonical for r in create_app(tmp_path).router.routes()}
    api = {path for path in routes if path.startswith("/api/")} | {"/metrics"}
    for path in api:
        assert f"`{path}`" in DOC, path
    assert set(re.findall(r"`(/api/[a-z/]+)`", DOC)) <= api


def test_the_screenshots_shown_exist():
    for image in re.findall(r"\]\((screenshots/[a-z]+\.png)\)", DOC):
        assert (ROOT / "docs" / image).is_file(), image
