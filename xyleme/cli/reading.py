"""What every reading command needs, and nothing heavier: the repository's metadata opened
as a CLI error when it is not a repository, and the ``--json`` flag of one-object answers.

Kept apart from :mod:`xyleme.cli.ops` (which loads the configuration, and with it the
refresh and crawler settings) so that ``xyleme status`` starts fast; :func:`glance` opens
the repository without the manager's imports for the commands that only count. Defines no
command.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from metadata import MetadataError

if TYPE_CHECKING:
    from metadata import Glance, Metadata

DATABASE = "metadata.db"


def has_metadata(repository: Path) -> bool:
    """Whether ``repository`` names a metadata store: its ``metadata.db``, or the store its
    ``xyleme.toml`` names (``[store] url``, PostgreSQL) when that file is absent, resolved as
    :func:`open_metadata` resolves it (``metadata.target_of``). Nothing is opened."""
    from metadata import target_of

    try:
        target = target_of(repository / DATABASE)
    except MetadataError:  # a store URL of an unknown scheme: opening it says so
        return True
    return target.path is None or target.path.exists()


@contextmanager
def open_metadata(repository: Path, *, readonly: bool) -> Iterator[Metadata]:
    """The repository's metadata; a folder that is not a repository is a clear CLI error."""
    from metadata import Metadata  # numpy, sqlite-utils, pydantic: a command that opens pays

    try:
        md = Metadata.open(repository / DATABASE, readonly=readonly)
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    with md:
        yield md


def json_option(function: Any) -> Any:
    """``--json``: print one JSON object (the commands that answer one, not a listing)."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(function)


@contextmanager
def glance(repository: Path, *, writable: bool = False) -> Iterator[Glance]:
    """The repository read with :mod:`sqlite3` alone (:class:`metadata.glance.Glance`): named
    state, counts by type, the latest time (``writable``: and named state written); not a
    repository is a clear CLI error."""
    from metadata import Glance

    try:
        reader = Glance.open(repository / DATABASE, writable=writable)
    except MetadataError as error:
        raise click.ClickException(str(error)) from None
    with reader:
        yield reader
