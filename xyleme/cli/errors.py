"""What reading a repository can raise, as the one-line errors the CLI prints (no command)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from metadata import InvalidURL, MetadataError


@contextmanager
def repository_errors(database: Path) -> Iterator[None]:
    """Turn a bad URL, a metadata error or an unreadable ``database`` into a ClickException."""
    try:
        yield
    except InvalidURL as error:
        raise click.ClickException(f"{error.url!r} is not a valid URL: {error.reason}") from None
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    except sqlite3.DatabaseError as error:
        raise click.ClickException(f"{database}: unreadable database ({error})") from None
