"""Helpers of the loader's tests: in-memory stand-ins for its neighbours, and the CLI runner.

They follow docs/interfaces.md so the loader is tested on its own; tests/loader/test_loader_metadata
checks the same flows against the real ``metadata.Metadata`` once it exists.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from urllib.parse import urlsplit

from click.testing import CliRunner

from metadata import LoadStatus
from xyleme.cli import cli

WAITING = {LoadStatus.WAITING_DTD, LoadStatus.WAITING_ENTITY, LoadStatus.WAITING_SCHEMA}


class FakeMetadata:
    """Map-, Link- and Status-Data in dictionaries."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.urls: dict[int, str] = {}
        self.types: dict[int, tuple] = {}
        self.status_rows: dict[int, tuple] = {}
        self.waiting: dict[int, tuple[int, ...]] = {}
        self.children: dict[int, list[int]] = {}
        self.dependencies: dict[int, list[int]] = {}

    def id_for(self, url: str, create: bool = True) -> int | None:
        return self.ids_for([url], create=create)[0]

    def ids_for(self, urls, *, referrer=None, create=True, canonical=False):
        result = []
        for url in urls:
            if urlsplit(url).scheme not in ("http", "https"):
                result.append(None)
            elif url in self.ids or not create:
                result.append(self.ids.get(url))
            else:
                self.ids[url] = len(self.ids) + 1
                self.urls[self.ids[url]] = url
                result.append(self.ids[url])
        return result

    def url_of(self, url_id: int) -> str:
        return self.urls[url_id]

    def set_children(self, url_id, child_ids, *, dependencies=()):
        self.children[url_id] = list(child_ids)
        self.dependencies[url_id] = list(dependencies)

    @contextlib.contextmanager
    def transaction(self):
        yield

    def set_children_many(self, rows):
        for url_id, child_ids, dependencies in rows:
            self.set_children(url_id, child_ids, dependencies=dependencies)

    def set_type(self, url_id, page_type, reason=None):
        self.types[url_id] = (page_type, reason)

    def set_type_many(self, rows):
        for url_id, page_type, reason in rows:
            self.set_type(url_id, page_type, reason)

    def set_status_many(self, rows):
        for url_id, status, detail in rows:
            self.set_status(url_id, status, detail)

    def set_status(self, url_id, status, detail=None, waiting_for=()):
        self.status_rows[url_id] = (status, detail)
        self.waiting[url_id] = tuple(waiting_for) if status in WAITING else ()

    def status(self, url_id):
        return self.status_rows.get(url_id)

    def statuses(self, url_ids):
        return {i: self.status_rows[i] for i in url_ids if i in self.status_rows}

    def waiting_for(self, url_id: int) -> list[int]:
        return list(self.waiting.get(url_id, ()))

    def waiting_on(self, dependency_id: int) -> list[int]:
        return sorted(d for d, deps in self.waiting.items() if dependency_id in deps)

    def awaited(self, dependency_ids):
        return {i for i in dependency_ids if self.waiting_on(i)}

    def links_of(self, url_id: int) -> list[str]:
        return [self.urls[i] for i in self.children.get(url_id, [])]

    def dependencies_of(self, url_id: int) -> list[str]:
        return [self.urls[i] for i in self.dependencies.get(url_id, [])]


class QueueFetcher:
    """``DependencyFetcher`` for a loader in a worker thread: the URL goes to the event loop,
    where an aiohttp client playing the crawler fetches it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[str] = asyncio.Queue()

    def request(self, url: str, referrer_id: int) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, url)


class FakeFetcher:
    """Records what the loader asks the crawler for."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, int]] = []

    def request(self, url: str, referrer_id: int) -> None:
        self.requests.append((url, referrer_id))

    @property
    def urls(self) -> list[str]:
        return [url for url, _ in self.requests]


@dataclass(frozen=True)
class Ran:
    """What a CLI run printed and returned."""

    returncode: int
    stdout: str
    stderr: str


def xyleme(repo, *args) -> Ran:
    """Run the CLI on the repository ``repo`` (in-process: a fresh interpreter per call
    would cost a second each; ``test_module_entry_point_runs`` covers ``python -m xyleme``)."""
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args], env={"XYLEME_REPO": None})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


class OneByOneSink:
    """The batch and dependency calls of a DocumentSink, made of the subclass's ``load``
    (the crawler's tests record what ``load`` is handed)."""

    def load_many(self, fetched):
        return [self.load(*item[:5]) for item in fetched]

    def dependency_arrived(self, url_id, url, body, fetched_at):
        return self.load(url_id, url, body, {"Content-Type": "application/xml-dtd"}, fetched_at)
