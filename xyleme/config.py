"""``xyleme.toml``: one file, a section per component, every key with a documented default.

The configuration is composed from the settings dataclasses the packages own (Scrapy's one
settings module, split by owner): :class:`Config` has one field per TOML section, typed by
that section's dataclass. Loading refuses an unknown section or key, or a value of the
wrong type or out of range, with a :class:`ConfigError` that names the file, the section and
the key, so a daemon never starts on a configuration it misread.

>>> config = config_from_mapping({"bandwidth": {"G": 500}})
>>> config.bandwidth.G, config.clock.time_unit
(500.0, 86400.0)
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import itertools
import json
import textwrap
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loader import LoaderSettings
from metadata import MetadataSettings
from ranking.opic_settings import OPICSettings
from ranking.settings import RankingSettings
from refresh.settings import RefreshSettings
from xyleme.crawler import CrawlerSettings
from xyleme.settings import BandwidthSettings, ClockSettings, DaemonSettings, PathSettings

CONFIG_FILE = "xyleme.toml"

LINKED: dict[tuple[str, str], tuple[str, str]] = {
    ("refresh", "time_unit_s"): ("clock", "time_unit"),
    ("refresh", "bandwidth_per_unit"): ("bandwidth", "G"),
    ("refresh", "discovery_share"): ("bandwidth", "theta"),
}
"""Keys of a component's settings that one section sets for all (``[bandwidth] G`` is the
refresh policy's ``bandwidth_per_unit``): refused in the component's own section, copied in."""


class ConfigError(ValueError):
    """A configuration the daemon refuses: the message names where and what is wrong."""


@dataclass(frozen=True, slots=True)
class Config:
    """The effective configuration: one settings object per ``xyleme.toml`` section."""

    clock: ClockSettings = field(default_factory=ClockSettings)
    bandwidth: BandwidthSettings = field(default_factory=BandwidthSettings)
    daemon: DaemonSettings = field(default_factory=DaemonSettings)
    paths: PathSettings = field(default_factory=PathSettings)
    metadata: MetadataSettings = field(default_factory=MetadataSettings)
    crawler: CrawlerSettings = field(default_factory=CrawlerSettings)
    opic: OPICSettings = field(default_factory=OPICSettings)
    refresh: RefreshSettings = field(default_factory=RefreshSettings)
    ranking: RankingSettings = field(default_factory=RankingSettings)
    loader: LoaderSettings = field(default_factory=LoaderSettings)

    def __post_init__(self) -> None:
        for (section, key), (source, source_key) in LINKED.items():
            value = getattr(getattr(self, source), source_key)
            linked = dataclasses.replace(getattr(self, section), **{key: value})
            object.__setattr__(self, section, linked)

    def replace(self, section: str, **values: Any) -> Config:
        """A copy with some keys of one section changed (validated like a file's values)."""
        merged = {**as_dict(self)[section], **values}
        return dataclasses.replace(self, **{section: _build(section, merged, "override")})


def sections() -> dict[str, type]:
    """Section name → settings dataclass, in the order the file lists them."""
    hints = typing.get_type_hints(Config)
    return {item.name: hints[item.name] for item in dataclasses.fields(Config)}


def load_config(path: Path, *, required: bool = False) -> Config:
    """Read ``path``; a missing file means every default unless ``required``."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise ConfigError(f"{path}: no such configuration file") from None
        return Config()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    return config_from_mapping(data, source=str(path))


def config_from_mapping(data: Mapping[str, Any], source: str = "configuration") -> Config:
    """Build a :class:`Config` from parsed TOML, refusing anything it does not know."""
    known = sections()
    built = {}
    for name, values in data.items():
        if name not in known:
            raise ConfigError(
                f"{source}: unknown section [{name}] (known: {', '.join(sorted(known))})"
            )
        if not isinstance(values, Mapping):
            raise ConfigError(f"{source}: {name} must be a [{name}] table")
        built[name] = _build(name, values, source)
    return Config(**built)


def _build(section: str, values: Mapping[str, Any], source: str) -> Any:
    cls = sections()[section]
    hints = typing.get_type_hints(cls)
    names = [item.name for item in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in values.items():
        if (section, key) in LINKED:
            owner, owner_key = LINKED[section, key]
            raise ConfigError(f"{source}: [{section}] {key} is set by [{owner}] {owner_key}")
        if key not in hints:
            raise ConfigError(
                f"{source}: unknown key {key!r} in [{section}] (known: {', '.join(names)})"
            )
        kwargs[key] = _coerce(value, hints[key], f"{source}: [{section}] {key}")
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: [{section}] {error}") from None


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """``value`` as the type ``hint`` names, or a ConfigError saying what was expected."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    for option in options:
        if option is type(None):
            if value is None:  # only from Python (Config.replace): TOML has no null
                return None
            continue
        if typing.get_origin(option) is tuple and isinstance(value, list):
            item_type = typing.get_args(option)[0]
            return tuple(_coerce(item, item_type, where) for item in value)
        if typing.get_origin(option) is Mapping and isinstance(value, Mapping):
            key_type, value_type = typing.get_args(option)
            return {
                _coerce(key, key_type, where): _coerce(item, value_type, f"{where}.{key}")
                for key, item in value.items()
            }
        if option is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if option in (int, str, bool) and type(value) is option:
            return value
    raise ConfigError(f"{where} must be {_type_name(hint)}, got {value!r}")


def _type_name(hint: Any) -> str:
    if isinstance(hint, types.UnionType):
        return " or ".join(_type_name(option) for option in typing.get_args(hint))
    if typing.get_origin(hint) is tuple:
        return f"a list of {_type_name(typing.get_args(hint)[0])}"
    if typing.get_origin(hint) is Mapping:
        return f"a table of {_type_name(typing.get_args(hint)[1])}"
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(
        hint, getattr(hint, "__name__", str(hint))
    )


# ---------------------------------------------------------------------- documentation


def field_doc(cls: type, name: str) -> str:
    """A setting's one-line documentation: its ``doc`` metadata or its attribute docstring."""
    for item in dataclasses.fields(cls):
        if item.name == name and "doc" in item.metadata:
            return item.metadata["doc"]
    return _attribute_docstrings(cls).get(name) or _numpydoc_attributes(cls).get(name, "")


@functools.cache
def _numpydoc_attributes(cls: type) -> dict[str, str]:
    """The entries of the class docstring's numpydoc ``Attributes`` section.

    An entry may name several attributes (``a, b, c``); they share its description.
    """
    doc = inspect.getdoc(cls) or ""
    if "Attributes\n----------\n" not in doc:
        return {}
    section = doc.split("Attributes\n----------\n", 1)[1]
    docs: dict[str, str] = {}
    names: list[str] = []
    for line in section.splitlines():
        if line and not line.startswith(" "):
            if line.endswith("---"):  # the next section's underline: we are past ours
                break
            names = [name.strip() for name in line.split(":")[0].split(",")]
            for name in names:
                docs[name] = ""
        elif line.strip():
            for name in names:
                docs[name] = f"{docs[name]} {line.strip()}".strip()
    return docs


@functools.cache
def _attribute_docstrings(cls: type) -> dict[str, str]:
    """The string literals that follow annotated attributes in the class body (PEP 257)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body
    docs = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = " ".join(following.value.value.split())
    return docs


def as_dict(config: Config) -> dict[str, dict[str, Any]]:
    """Every effective value, by section (JSON-ready: tuples become lists)."""
    return {
        name: {
            item.name: _plain(getattr(getattr(config, name), item.name))
            for item in dataclasses.fields(cls)
            if (name, item.name) not in LINKED
        }
        for name, cls in sections().items()
    }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return list(value) if isinstance(value, tuple) else value


def _toml_value(value: Any) -> str:
    """A value in TOML (JSON's, but a table is inline: ``{ "k" = [...] }``)."""
    if isinstance(value, Mapping):
        items = ", ".join(f"{json.dumps(key)} = {_toml_value(item)}" for key, item in value.items())
        return f"{{ {items} }}" if items else "{}"
    return json.dumps(value)


def as_toml(config: Config, *, commented: bool = False) -> str:
    """The configuration as TOML, each key followed by its documentation.

    ``commented`` writes every line as a comment (a new repository's file shows the
    defaults without pinning them). A value of None has no TOML form: it is shown commented.
    """
    lines: list[str] = []
    for name, values in as_dict(config).items():
        cls = sections()[name]
        lines += ["", f"[{name}]"]
        for key, value in values.items():
            text = f"{key} = {_toml_value(value)}" if value is not None else f"{key} = (unset)"
            prefix = "# " if commented or value is None else ""
            doc = field_doc(cls, key)
            lines.append(f"{prefix}{text}  # {doc}" if doc else f"{prefix}{text}")
    return "\n".join(lines[1:]) + "\n"
