"""The convention every package's settings follow, at the bottom of the import graph.

A settings class is a frozen pydantic dataclass built with :data:`SETTINGS`. Each field
declares its type and its allowed range, and is followed by its one-line documentation::

    busy_timeout: Annotated[float, Field(ge=0.0, le=3600.0)] = 10.0
    \"\"\"seconds a writer waits for another process's write lock\"\"\"

so a value out of range (or NaN, or infinite) raises ``pydantic.ValidationError`` (a
``ValueError``) naming the field, and ``xyleme init`` writes the docstring next to the default
in the repository's ``xyleme.toml``. Rules between fields go in ``__post_init__``.

It lives in a package of its own so that the pure algorithms (``ranking``, ``refresh``) can
follow it without importing the store.
"""

from __future__ import annotations

from pydantic import ConfigDict

from conventions.hosts import host_hash, host_key, host_keys, part_of

SETTINGS = ConfigDict(allow_inf_nan=False, extra="forbid", use_attribute_docstrings=True)
"""The configuration of every settings class: no NaN nor infinity, no unknown name, and
each field's docstring as its documentation."""


__all__ = ["SETTINGS", "host_hash", "host_key", "host_keys", "part_of"]
