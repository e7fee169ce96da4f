"""``xyleme.toml``: one file, a section per component, every key with a documented default.

The configuration is composed from the settings dataclasses the packages own (Scrapy's one
settings module, split by owner): :class:`Config` has one field per TOML section, typed by
that section's dataclass, whose fields declare their type and range (``conventions``).
Loading refuses an unknown section or key, or a value of the wrong type or out of range,
with a one-line :class:`ConfigError` that names the file, the section, the key, the value
and what is allowed, so a daemon never starts on a configuration it misread.

>>> config = config_from_mapping({"bandwidth": {"G": 500}})
>>> config.bandwidth.G, config.clock.time_unit
(500.0, 86400.0)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from loader import LoaderSettings
from metadata import MetadataSettings, StoreSettings
from ranking import RankingSettings
from ranking.opic import OPICSettings
from refresh import RefreshSettings
from xyleme.archive import ArchiveSettings
from xyleme.crawler import CrawlerSettings
from xyleme.settings import BandwidthSettings, ClockSettings, DaemonSettings, PathSettings

CONFIG_FILE = "xyleme.toml"
MAX_CONFIG_BYTES = 1 << 20
"""A bigger file is refused unread: every key of every section fits in a few kilobytes."""

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
    store: StoreSettings = field(default_factory=StoreSettings)
    crawler: CrawlerSettings = field(default_factory=CrawlerSettings)
    opic: OPICSettings = field(default_factory=OPICSettings)
    refresh: RefreshSettings = field(default_factory=RefreshSettings)
    ranking: RankingSettings = field(default_factory=RankingSettings)
    loader: LoaderSettings = field(default_factory=LoaderSettings)
    archive: ArchiveSettings = field(default_factory=ArchiveSettings)

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
        with path.open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"{path}: no such configuration file") from None
        return Config()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read ({error.strerror})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes, not a configuration")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8 text (byte {error.start} is invalid)") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: not valid TOML ({error})") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML (arrays or tables nested too deep)") from None
    return config_from_mapping(data, source=str(path))


def config_from_mapping(data: Mapping[str, Any], source: str = "configuration") -> Config:
    """Build a :class:`Config` from parsed TOML, refusing anything it does not know."""
    known = sections()
    built = {}
    for name, values in data.items():
        if name not in known:
            raise ConfigError(
                f"{source}: unknown section [{_name(name)}] (known: {', '.join(sorted(known))})"
            )
        if not isinstance(values, Mapping):
            raise ConfigError(f"{source}: {name} must be a [{name}] table")
        built[name] = _build(name, values, source)
    return Config(**built)


def _build(section: str, values: Mapping[str, Any], source: str) -> Any:
    cls = sections()[section]
    names = [item.name for item in dataclasses.fields(cls)]
    where = f"{source}: [{section}]"
    kwargs = {}
    for key, value in values.items():
        if (section, key) in LINKED:
            owner, owner_key = LINKED[section, key]
            raise ConfigError(f"{where} {key} is set by [{owner}] {owner_key}")
        if key not in names:
            known = ", ".join(names)
            raise ConfigError(f"{source}: unknown key {key!r} in [{section}] (known: {known})")
        try:
            kwargs[key] = _strict(cls, key).validate_python(_as_tuple(value), strict=True)
        except ValidationError as error:
            message = f"{where} {key} = {_shown(value)}: must be {allowed(cls, key)}"
            # A field's own validator (a scope rule's parser) says precisely what is wrong.
            said = [
                problem["msg"].removeprefix("Value error, ")
                for problem in error.errors()
                if problem["type"] == "value_error"
            ]
            raise ConfigError("; ".join([message, *said])) from None
    try:
        return cls(**kwargs)
    except ValidationError as error:
        raise ConfigError(f"{where} {explain(error, cls)}") from None


@functools.cache
def _strict(cls: type, key: str) -> TypeAdapter:
    """A validator of one field that takes no string for a number, nor a number for a bool."""
    hint = typing.get_type_hints(cls, include_extras=True)[key]
    return TypeAdapter(hint, config=cls.__pydantic_config__)


def _as_tuple(value: Any) -> Any:
    """A TOML array as the tuple a settings field holds (in a table too)."""
    if isinstance(value, dict):
        return {key: _as_tuple(item) for key, item in value.items()}
    return tuple(value) if isinstance(value, list) else value


def explain(error: ValidationError, cls: type) -> str:
    """One line naming each refused field of ``cls``, its value and its allowed range."""
    parts = []
    for problem in error.errors():
        location = problem["loc"]
        name = "".join(f"[{step}]" if isinstance(step, int) else str(step) for step in location)
        if not location:  # a rule between fields
            parts.append(problem["msg"].removeprefix("Value error, "))
        elif location[0] in cls.__dataclass_fields__:
            shown = _shown(problem["input"])
            parts.append(f"{name} = {shown}: must be {allowed(cls, location[0])}")
        else:
            parts.append(f"unknown setting {name!r} (known: {', '.join(cls.__dataclass_fields__)})")
    return "; ".join(parts)


def _name(name: str) -> str:
    """A TOML name as written, quoted when it would not read as one word."""
    return name if name.isidentifier() else _shown(name)


def _shown(value: Any, limit: int = 60) -> str:
    """``value`` as TOML writes it where that differs from Python (true, "text"), cut short."""
    text = json.dumps(value) if isinstance(value, bool | str) else repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


# ---------------------------------------------------------------------- ranges


def allowed(cls: type, name: str) -> str:
    """The type and range a field of ``cls`` accepts, in words (``an integer in [1, 1024]``)."""
    return _describe(typing.get_type_hints(cls, include_extras=True)[name])


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        base, *extras = typing.get_args(hint)
        rules = [rule for extra in extras for rule in getattr(extra, "metadata", [extra])]
        return _describe_annotated(base, rules)
    if origin in (typing.Union, types.UnionType):
        options = [option for option in typing.get_args(hint) if option is not type(None)]
        return " or ".join(_describe(option) for option in options) + " (or left unset)"
    if origin is typing.Literal:
        return "one of " + ", ".join(json.dumps(option) for option in typing.get_args(hint))
    if origin is tuple:
        return f"a list of {_describe(typing.get_args(hint)[0])}"
    if origin is dict:
        return f"a table of {_describe(typing.get_args(hint)[1])}"
    return _TYPE_NAMES.get(hint, getattr(hint, "__name__", str(hint)))


def _describe_annotated(base: Any, rules: list[Any]) -> str:
    """``base`` with its bounds (annotated_types' Ge, Gt, Le, Lt, MinLen, MaxLen) in words."""
    bound = {type(rule).__name__.lower(): rule for rule in rules}
    text = _describe(base)
    low = next((key for key in ("ge", "gt") if key in bound), None)
    high = next((key for key in ("le", "lt") if key in bound), None)
    if low and high:
        opening, closing = "[" if low == "ge" else "(", "]" if high == "le" else ")"
        low_value, high_value = getattr(bound[low], low), getattr(bound[high], high)
        text += f" in {opening}{_number(low_value)}, {_number(high_value)}{closing}"
    if "maxlen" in bound:
        least = bound["minlen"].min_length if "minlen" in bound else 0
        most = bound["maxlen"].max_length
        count = f"{least} to {most}" if least else f"at most {most}"
        if typing.get_origin(base) is tuple:
            text = f"a list of {count} items, each {_describe(typing.get_args(base)[0])}"
        elif typing.get_origin(base) is dict:
            text = f"a table of {count} keys, each {_describe(typing.get_args(base)[1])}"
        else:
            text += f" of {count} characters"
    for rule in rules:  # a validator function's docstring says what it accepts
        function = getattr(rule, "func", None)
        if function is not None and function.__doc__:
            text += f": {function.__doc__.strip()}"
    return text


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


# ---------------------------------------------------------------------- documentation


def field_doc(cls: type, name: str) -> str:
    """A setting's one-line documentation: the docstring that follows its declaration."""
    return " ".join((cls.__pydantic_fields__[name].description or "").split())


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
