"""What every reading command needs, and nothing heavier: the repository's metadata opened
as a CLI error when it is not a repository, and the ``--json`` flag of one-object answers.

Kept apart from :mod:`xyleme.cli.ops` (which loads the configuration, and with it the
refresh and crawler settings) so that ``xyleme status`` starts fast. Defines no command.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from metadata import Metadata, MetadataError

DATABASE = "metadata.db"


@contextmanager
def open_metadata(repository: Path, *, readonly: bool) -> Iterator[Metadata]:
    """The repository's metadata; a folder that is not a repository is a clear CLI error."""
    try:
        md = Metadata.open(repository / DATABASE, readonly=readonly)
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    with md:
        yield md


def json_option(function: Any) -> Any:
    """``--json``: print one JSON object (the commands that answer one, not a listing)."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(function)
