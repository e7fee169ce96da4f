"""The one-line errors the CLI prints: bad input (exit 2), and what reading a repository can
raise (exit 1). This module defines no command."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from metadata import InvalidURL, MetadataError, StoreError


class InputError(click.ClickException):
    """The user's input (an argument, a file, a configuration) is wrong: exit status 2."""

    exit_code = 2


@contextmanager
def repository_errors(database: Path) -> Iterator[None]:
    """Turn a bad URL, a metadata error or an unreadable ``database`` into a ClickException."""
    try:
        yield
    except InvalidURL as error:
        raise click.ClickException(f"{error.url!r} is not a valid URL: {error.reason}") from None
    except StoreError as error:
        raise click.ClickException(f"{database}: unreadable database ({error.why})") from None
    except MetadataError as error:
        raise click.ClickException(str(error)) from None


@contextmanager
def settings_errors(*classes: type) -> Iterator[None]:
    """Settings of one of ``classes`` built from options or a file: a value out of its range
    is bad input, named with its allowed range in one line. (pydantic and the configuration
    are imported here: a command that builds no settings does not load them.)"""
    from pydantic import ValidationError

    from xyleme.config import explain

    try:
        yield
    except ValidationError as error:
        cls = next(cls for cls in classes if cls.__name__ == error.title)
        raise InputError(explain(error, cls)) from None
