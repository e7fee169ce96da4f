"""``xyleme export warc|documents``: the archive and the stored XML (the rest of
``xyleme export`` is in :mod:`xyleme.cli.ops`). Defines no command of its own."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from loader import LoaderError
from metadata import MetadataError, VersionStore
from xyleme.config import CONFIG_FILE, ConfigError, load_config

ARCHIVE_KINDS = ("warc", "documents")


def archive_export(
    repository: Path,
    kind: str,
    fmt: str | None,
    output: str,
    *,
    all_versions: bool,
    url_prefix: str,
    since: float | None,
    until: float | None,
) -> None:
    """Run ``xyleme export warc`` or ``xyleme export documents`` (errors as ClickException)."""
    try:
        config = load_config(repository / CONFIG_FILE)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    if kind == "warc":
        if fmt is not None or all_versions:
            raise click.UsageError("export warc takes no --format nor --all-versions")
        _warc(repository / config.archive.folder, output, since, until, url_prefix)
        return
    if since is not None or until is not None:
        raise click.UsageError("--since/--until are for export warc")
    folder = repository / config.paths.documents
    if not (folder / "versions.db").is_file():
        raise click.ClickException(f"no stored documents in {folder} (is it a repository?)")
    from xyleme.archive import write_folder, write_jsonl

    repo = VersionStore(folder, config.loader.versions_kept)
    try:
        if fmt == "folder":
            if output == "-":
                raise click.UsageError("--format folder needs -o FOLDER")
            count = write_folder(
                repo, Path(output), all_versions=all_versions, url_prefix=url_prefix
            )
        elif fmt in (None, "jsonl"):
            with click.open_file(output, "w", encoding="utf-8") as out:
                count = write_jsonl(repo, out, all_versions=all_versions, url_prefix=url_prefix)
        else:
            raise click.UsageError(f"export documents writes jsonl or folder, not {fmt}")
    except (LoaderError, MetadataError, FileExistsError, OSError) as error:
        raise click.ClickException(str(error)) from None
    finally:
        repo.close()
    click.echo(f"{count} version(s) exported", err=True)


def _warc(
    archive: Path, output: str, since: float | None, until: float | None, prefix: str
) -> None:
    from xyleme.archive import OPEN_SUFFIX, WARC_SUFFIX, RecordFilter, export_warc
    from xyleme.archive.export_warc import archive_folders

    if not archive.is_dir():
        raise click.ClickException(f"no archive at {archive} ([archive] enabled = false?)")
    keep = RecordFilter(since, until, prefix or None)
    try:
        if output == "-":
            if sys.stdout.isatty():
                raise click.UsageError("WARC files are binary: give -o FILE, -o FOLDER/ or a pipe")
            files, records = export_warc(archive, sys.stdout.buffer, keep)
        elif Path(output).is_dir() or output.endswith("/"):
            files, records = export_warc(archive, Path(output), keep)
        else:
            with open(output, "wb") as out:
                files, records = export_warc(archive, out, keep)
    except OSError as error:
        raise click.ClickException(f"cannot export the archive: {error}") from None
    written = "whole files" if records < 0 else f"{records} record(s)"
    click.echo(f"{files} WARC file(s) read, {written} exported", err=True)
    still_open = [
        path
        for folder in archive_folders(archive)
        for path in folder.glob(f"*{WARC_SUFFIX}{OPEN_SUFFIX}")
    ]
    if still_open:
        click.echo(
            f"{len(still_open)} file(s) still being written (daemon running) left out", err=True
        )
