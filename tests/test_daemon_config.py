"""xyleme.toml: documented defaults, refused keys and values named, the init file round-trips."""

import tomllib

import pytest

from xyleme.config import (
    Config,
    ConfigError,
    as_dict,
    as_toml,
    config_from_mapping,
    field_doc,
    load_config,
    sections,
)


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
        ({"bandwidth": {"g": 1}}, r"unknown key 'g' in \[bandwidth\]"),
        ({"bandwidth": {"G": "lots"}}, r"\[bandwidth\] G must be a number, got 'lots'"),
        ({"bandwidth": {"theta": 1.5}}, r"\[bandwidth\] theta must lie in \[0, 1\)"),
        ({"metadata": {"cache_mb": 1.5}}, r"\[metadata\] cache_mb must be an integer"),
        ({"daemon": {"scope": "a.test"}}, r"\[daemon\] scope must be a list of a string"),
        ({"clock": 3}, r"clock must be a \[clock\] table"),
        ({"clock": {"speed": True}}, r"\[clock\] speed must be a number, got True"),
    ],
)
def test_wrong_keys_and_values_are_refused_by_name(data, message):
    with pytest.raises(ConfigError, match=message):
        config_from_mapping(data, source="x.toml")


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
    with pytest.raises(ConfigError, match="theta"):
        Config().replace("bandwidth", theta=-1)
