"""xyleme.toml: documented defaults, refused keys and values named, the init file round-trips."""

import dataclasses
import math
import tomllib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from xyleme.config import (
    LINKED,
    Config,
    ConfigError,
    allowed,
    as_dict,
    as_toml,
    config_from_mapping,
    explain,
    field_doc,
    load_config,
    sections,
)
from xyleme.crawler import CrawlerSettings
from xyleme.settings import BandwidthSettings


def test_defaults_when_the_file_is_missing(tmp_path):
    assert load_config(tmp_path / "xyleme.toml") == Config()


def test_a_required_file_that_is_missing_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "nope.toml", required=True)


def test_values_are_read_and_ints_widen_to_floats(tmp_path):
    path = tmp_path / "xyleme.toml"
    path.write_text('[bandwidth]\nG = 250\ntheta = 0.2\n[daemon]\nscope = ["simweb.test"]\n')
    config = load_config(path)
    assert config.bandwidth.G == 250.0 and isinstance(config.bandwidth.G, float)
    assert config.bandwidth.theta == 0.2
    assert config.daemon.scope == ("simweb.test",)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"nonsense": {}}, r"unknown section \[nonsense\]"),
        ({"a\nb": {}}, r"unknown section \[\"a\\nb\"\]"),
        ({"bandwidth": {"g": 1}}, r"unknown key 'g' in \[bandwidth\] \(known: G, theta\)"),
        ({"bandwidth": {"G": "lots"}}, r"\[bandwidth\] G = \"lots\": must be a number in \(0, "),
        ({"bandwidth": {"theta": 1.5}}, r"\[bandwidth\] theta = 1.5: must be a number in \[0, 1\)"),
        ({"metadata": {"cache_mb": 1.5}}, r"\[metadata\] cache_mb = 1.5: must be an integer in"),
        ({"daemon": {"scope": "a.test"}}, r"\[daemon\] scope = \"a.test\": must be a list of"),
        ({"clock": 3}, r"clock must be a \[clock\] table"),
        ({"clock": {"speed": True}}, r"\[clock\] speed = true: must be a number in \(0, "),
        ({"refresh": {"bandwidth_per_unit": 5}}, r"\[refresh\] bandwidth_per_unit is set by"),
        ({"crawler": {"user_agent": "bot"}}, r"\[crawler\] the user agent must carry a contact"),
    ],
)
def test_wrong_keys_and_values_are_refused_by_name(data, message):
    with pytest.raises(ConfigError, match=message):
        config_from_mapping(data, source="x.toml")


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [  # issue 18, fault 4: each was accepted, or a traceback
        ("crawler", "concurrency", 10**9, r"concurrency = 1000000000: .* in \[1, 1024\]"),
        ("crawler", "min_delay", math.nan, r"min_delay = nan: must be a number in \[0, 3600\]"),
        ("crawler", "expected_urls", 1e12, r"expected_urls = 1000000000000.0: must be an integ"),
        ("crawler", "expected_urls", 10**12, r"expected_urls = 1000000000000: .* 134217728\]"),
        ("bandwidth", "G", math.inf, r"G = inf: must be a number in \(0, 1000000000000\]"),
        ("bandwidth", "G", -math.inf, r"G = -inf: must be"),
        ("ranking", "memory", "5PB", r"memory = \"5PB\": .* from 1MB to 1TB"),
        (
            "metadata",
            "synchronous",
            "SOMETIMES",
            r"synchronous = \"SOMETIMES\": must be one of \"OFF\"",
        ),
        ("daemon", "scope", ["a.test", 3], r"scope = \['a.test', 3\]: must be a list of"),
        ("paths", "spool", "", r"spool = \"\": must be a string of 1 to 4096 characters"),
        (
            "crawler",
            "per_ip_concurrency",
            0,
            r"per_ip_concurrency = 0: .* \[1, 64\] \(or left unset\)",
        ),
    ],
)
def test_out_of_range_values_are_refused_naming_key_value_and_range(section, key, value, message):
    with pytest.raises(ConfigError, match=rf"^x.toml: \[{section}\] {message}"):
        config_from_mapping({section: {key: value}}, source="x.toml")


@pytest.mark.parametrize("section", list(sections()))
def test_every_setting_declares_a_bounded_range_and_its_default_is_in_it(section):
    cls = sections()[section]
    for item in dataclasses.fields(cls):
        if (section, item.name) in LINKED:
            continue
        text = allowed(cls, item.name)
        assert not text.startswith("a number") or " in " in text, f"{item.name}: {text}"
        assert not text.startswith("an integer") or " in " in text, f"{item.name}: {text}"
        assert not text.startswith("a string") or "characters" in text, f"{item.name}: {text}"
        default = getattr(cls(), item.name)
        if default is not None:
            assert config_from_mapping({section: {item.name: _toml(default)}}) is not None


def _toml(value):
    return list(value) if isinstance(value, tuple) else value


def test_settings_built_in_code_are_validated_too():
    with pytest.raises(ValidationError, match="concurrency"):
        CrawlerSettings(concurrency=100_000)
    with pytest.raises(ValueError, match="finite"):
        BandwidthSettings(G=math.inf)
    with pytest.raises(ValidationError, match="concurency"):
        CrawlerSettings(concurency=8)  # a misspelt name is never ignored
    assert CrawlerSettings(concurrency=np.int64(8)).concurrency == 8


def test_a_validation_error_reads_as_one_line():
    with pytest.raises(ValidationError) as caught:
        CrawlerSettings(concurrency=0, min_delay=math.nan)
    assert explain(caught.value, CrawlerSettings) == (
        "concurrency = 0: must be an integer in [1, 1024]; "
        "min_delay = nan: must be a number in [0, 3600]"
    )


def test_invalid_toml_is_refused_with_the_file_name(tmp_path):
    path = tmp_path / "xyleme.toml"
    path.write_text("[bandwidth\n")
    with pytest.raises(ConfigError, match=f"{path}: not valid TOML"):
        load_config(path)


def test_every_key_is_documented():
    for name, cls in sections().items():
        for key in as_dict(Config())[name]:
            assert field_doc(cls, key), f"[{name}] {key} has no documentation"


def test_toml_output_parses_back_to_the_same_configuration():
    config = config_from_mapping({"bandwidth": {"G": 42}, "daemon": {"scope": ["a.test"]}})
    assert config_from_mapping(tomllib.loads(as_toml(config))) == config
    assert tomllib.loads(as_toml(config, commented=True)) == {name: {} for name in sections()}


def test_replace_validates_like_a_file():
    config = Config().replace("bandwidth", G=7)
    assert config.bandwidth.G == 7.0
    with pytest.raises(ConfigError, match=r"theta = -1: must be a number in \[0, 1\)"):
        Config().replace("bandwidth", theta=-1)


@pytest.mark.parametrize(
    ("content", "message"),
    [  # issue 18, fault 5: a binary file gave a UnicodeDecodeError traceback
        (b"\xff\xfe\x00\x81", r"not UTF-8 text \(byte 0 is invalid\)"),
        (b"a = " + b"[" * 5000 + b"]" * 5000, r"not valid TOML \(arrays or tables nested"),
        (b"# " + b"x" * (1 << 20), r"larger than 1048576 bytes"),
    ],
)
def test_a_file_that_is_not_a_configuration_is_refused_in_one_line(tmp_path, content, message):
    path = tmp_path / "xyleme.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_a_folder_is_not_a_configuration(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path, required=True)


TOML_VALUES = st.recursive(
    st.one_of(
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(),
        st.text(max_size=20),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@st.composite
def toml_documents(draw):
    """Sections and keys the configuration knows (and some it does not), any TOML values."""
    names = draw(st.lists(st.sampled_from([*sections(), "nonsense"]), max_size=3, unique=True))
    document = {}
    for name in names:
        known = [item.name for item in dataclasses.fields(sections().get(name, Config))]
        keys = draw(st.lists(st.sampled_from([*known, "nonsense"]), max_size=4, unique=True))
        document[name] = {key: draw(TOML_VALUES) for key in keys}
    return document


@settings(max_examples=150, deadline=None, derandomize=True)
@given(toml_documents())
def test_any_toml_document_is_a_configuration_or_a_one_line_error(document):
    try:
        config = config_from_mapping(document, source="x.toml")
    except ConfigError as error:
        assert "\n" not in str(error) and str(error).startswith("x.toml: ")
    else:
        assert config_from_mapping(tomllib.loads(as_toml(config))) == config


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.binary(max_size=300))
def test_any_file_is_a_configuration_or_a_one_line_error(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("any") / "xyleme.toml"
    path.write_bytes(content)
    try:
        load_config(path)
    except ConfigError as error:
        assert "\n" not in str(error)
