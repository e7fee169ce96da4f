"""Commands that change a repository's state, run directly or handed to its daemon.

``seed add``, ``seed remove``, ``pause`` and ``resume`` must not write behind a running
daemon's back (it holds queues and flags in memory). So the CLI runs them itself only while
it can take the repository's lock (:mod:`xyleme.lock`); when a daemon holds it, the CLI
writes the command into a table kept in the metadata's named state (``command/<id>``), the
daemon polls the table, runs the command on its live objects and writes the answer
(``answer/<id>``), which the CLI prints. Both ways run the same :func:`execute` on a
:class:`CommandTarget`. ``status`` goes the same way to ask a running daemon for its figures
of this instant (only a daemon has them; without one the CLI reads the last checkpoint).
``stop`` only ever goes to a daemon: :func:`stop_daemon` asks for it and waits until the
daemon lets go of the repository.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from metadata import InvalidURL, canonicalize_url

if TYPE_CHECKING:  # the manager's imports are heavy; `xyleme status` reads without it
    from metadata import Metadata, NamedStateAPI

COMMAND_PREFIX = "command/"
ANSWER_PREFIX = "answer/"
SEEDS_KEY = "seeds"
PAUSED_KEY = "paused"


class CommandFailed(RuntimeError):
    """A command was refused (bad arguments) or the daemon did not answer in time."""


@dataclass(slots=True)
class Answer:
    """What a command reports: a sentence for people and fields for ``--json``."""

    message: str
    data: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    def to_json(self) -> bytes:
        return json.dumps({"ok": self.ok, "message": self.message, "data": self.data}).encode()

    @classmethod
    def from_json(cls, blob: bytes) -> Answer:
        fields = json.loads(blob)
        return cls(fields["message"], fields["data"], fields["ok"])


class CommandTarget(Protocol):
    """What runs a command: the repository itself, or the daemon that holds it.

    A method may be a coroutine function (the daemon waits for its workers to stop); the
    daemon awaits what :func:`execute` returns then.
    """

    def add_seeds(self, urls: list[str]) -> Answer | Awaitable[Answer]: ...

    def remove_seeds(self, urls: list[str]) -> Answer | Awaitable[Answer]: ...

    def set_paused(self, paused: bool) -> Answer | Awaitable[Answer]: ...

    def recheck(self, args: dict[str, Any]) -> Answer | Awaitable[Answer]:
        """The daemon only: without one, ``xyleme recheck`` runs the re-check by itself."""
        ...

    def compute_ranking(self) -> Answer | Awaitable[Answer]:
        """The daemon only: without one, ``xyleme rank compute`` ranks by itself."""
        ...

    def live_status(self) -> dict[str, Any]:
        """The daemon only: its in-memory figures of this instant, for ``xyleme status``."""
        ...

    def stop(self) -> None:
        """The daemon only: stop taking work, finish (or abandon) what is in flight, write a
        checkpoint and release the repository, as on SIGTERM."""
        ...


def execute(target: CommandTarget, name: str, args: dict[str, Any]) -> Answer | Awaitable[Answer]:
    """Run the command ``name`` on ``target``; an unknown name is an error answer."""
    if name == "seed add":
        return target.add_seeds(list(args["urls"]))
    if name == "seed remove":
        return target.remove_seeds(list(args["urls"]))
    if name in ("pause", "resume"):
        return target.set_paused(name == "pause")
    if name == "recheck":  # only ever handed to a daemon, like `rank compute`
        return target.recheck(args)
    if name == "rank compute":  # only ever handed to a daemon: `xyleme rank compute` runs it
        return target.compute_ranking()
    if name == "status":  # only ever handed to a daemon: its live figures, not a checkpoint
        return Answer("live figures", {"live": target.live_status(), "written": time.time()})
    if name == "stop":  # only ever handed to a daemon: `xyleme stop`
        target.stop()
        return Answer(f"daemon (pid {os.getpid()}) stopping", {"pid": os.getpid()})
    return Answer(f"unknown command {name!r}", ok=False)


# ---------------------------------------------------------------------- the repository


@dataclass(frozen=True, slots=True)
class Seed:
    """A seed URL (canonical) and when it was added (the repository's clock; None for a
    seed stored before the dates were kept)."""

    url: str
    added: float | None = None


def seed_entries(md: Metadata) -> list[Seed]:
    """Every seed of the repository with its date, oldest first.

    Stored as one JSON array in the named state ``seeds``: objects ``{"url", "added"}``, or
    plain URL strings in repositories made before seeds were dated (read as undated).
    """
    blob = md.get_state(SEEDS_KEY)
    if blob is None:
        return []
    return [
        Seed(item) if isinstance(item, str) else Seed(item["url"], item.get("added"))
        for item in json.loads(blob)
    ]


def stored_seeds(md: Metadata) -> list[str]:
    """Every seed URL added to the repository, oldest first."""
    return [seed.url for seed in seed_entries(md)]


def _store_seeds(md: Metadata, seeds: list[Seed]) -> None:
    entries = [{"url": seed.url, "added": seed.added} for seed in seeds]
    md.put_state(SEEDS_KEY, json.dumps(entries).encode())


def is_paused(md: Metadata) -> bool:
    """Whether the operator paused fetching (the daemon starts paused then)."""
    return md.get_state(PAUSED_KEY) == b"1"


class RepositoryTarget:
    """Runs commands on a repository no daemon holds: they only change stored state."""

    def __init__(self, md: Metadata) -> None:
        self.md = md

    def add_seeds(self, urls: list[str]) -> Answer:
        ids = self.md.ids_for(urls)
        accepted = [url for url, url_id in zip(urls, ids, strict=True) if url_id is not None]
        canonical = self.md.urls_of([url_id for url_id in ids if url_id is not None])
        seeds = seed_entries(self.md)
        known = {seed.url for seed in seeds}
        added = [url for url in dict.fromkeys(canonical) if url not in known]
        now = self.md.clock.now()
        _store_seeds(self.md, seeds + [Seed(url, now) for url in added])
        refused = len(urls) - len(accepted)
        message = f"{len(added)} seed(s) added, {len(canonical) - len(added)} already known"
        if refused:
            message += f", {refused} refused as invalid (see the rejected links)"
        return Answer(message, {"added": added, "refused": refused}, ok=not refused)

    def remove_seeds(self, urls: list[str]) -> Answer:
        """Stop URLs being seeds; their pages, history and links stay in the repository."""
        seeds = seed_entries(self.md)
        known = {seed.url for seed in seeds}
        wanted: dict[str, str] = {}  # canonical URL -> as given
        not_seeds: list[str] = []
        for url in urls:
            try:
                canonical = canonicalize_url(url)
            except InvalidURL:
                canonical = None
            if canonical in known:
                wanted.setdefault(canonical, url)
            else:
                not_seeds.append(url)
        _store_seeds(self.md, [seed for seed in seeds if seed.url not in wanted])
        message = (
            f"{len(wanted)} seed(s) removed; their pages and history stay in the repository"
            if wanted
            else "no seed removed"
        )
        if not_seeds:
            message += f"; not a seed: {', '.join(not_seeds)} (see `xyleme seed list`)"
        return Answer(message, {"removed": list(wanted), "not_seeds": not_seeds}, ok=not not_seeds)

    def set_paused(self, paused: bool) -> Answer:
        self.md.put_state(PAUSED_KEY, b"1" if paused else b"0")
        state = "paused" if paused else "running"
        return Answer(f"fetching {state}", {"paused": paused})


# ---------------------------------------------------------------------- the table


def submit(md: NamedStateAPI, name: str, args: dict[str, Any]) -> str:
    """Queue a command for the daemon; returns its id (keys sort in submission order)."""
    command_id = f"{time.time_ns():020d}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    md.put_state(COMMAND_PREFIX + command_id, json.dumps({"name": name, "args": args}).encode())
    return command_id


def wait_for_answer(
    md: NamedStateAPI, command_id: str, timeout: float, poll: float = 0.1
) -> Answer:
    """The daemon's answer to a queued command (the answer is removed once read)."""
    deadline = time.monotonic() + timeout
    while True:
        blob = md.get_state(ANSWER_PREFIX + command_id)
        if blob is not None:
            md.delete_state(ANSWER_PREFIX + command_id)
            return Answer.from_json(blob)
        late = time.monotonic() - deadline
        if late > 0 and md.delete_state(COMMAND_PREFIX + command_id):
            raise CommandFailed(f"the daemon did not take the command within {timeout:g} s")
        if late > timeout:  # taken, but no answer: the daemon died while running it
            raise CommandFailed(f"the daemon took the command but did not answer in {timeout:g} s")
        time.sleep(poll)


def take_pending(md: Metadata, only: str | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """The daemon's side: remove and return the queued commands, oldest first (``only``:
    those of that name, the others left for whoever runs them: the workers' supervisor
    takes ``stop`` only)."""
    taken = []
    for key in md.state_keys(COMMAND_PREFIX):
        blob = md.get_state(key)
        command = json.loads(blob) if blob is not None else None
        if command is None or (only is not None and command["name"] != only):
            continue
        if md.delete_state(key):
            taken.append((key.removeprefix(COMMAND_PREFIX), command["name"], command["args"]))
    return taken


def answer(md: Metadata, command_id: str, reply: Answer) -> None:
    """The daemon's side: store the answer the waiting CLI will read."""
    md.put_state(ANSWER_PREFIX + command_id, reply.to_json())


# ---------------------------------------------------------------------- stopping


@dataclass(frozen=True, slots=True)
class StopOutcome:
    """What became of a stop request: ``stopped`` when the daemon let go of the repository
    in time; ``taken`` when it had read the request (else it was withdrawn)."""

    stopped: bool
    taken: bool
    seconds: float


def stop_daemon(
    md: Metadata, running: Callable[[], bool], timeout: float, poll: float = 0.1
) -> StopOutcome:
    """Ask the daemon holding the repository to stop, and wait up to ``timeout`` seconds
    until ``running()`` says it let go of the repository (its lock).

    The request goes through the command table like ``pause``. It never outlives the call:
    a request the daemon has not taken is withdrawn, so a daemon started later is not
    stopped by a stale one; an answer nobody will read is removed.
    """
    started = time.monotonic()
    command_id = submit(md, "stop", {})
    taken = False
    try:
        while True:
            if not taken and md.get_state(COMMAND_PREFIX + command_id) is None:
                taken = True
            if not running():
                return StopOutcome(True, taken, time.monotonic() - started)
            if time.monotonic() - started >= timeout:
                return StopOutcome(False, taken, time.monotonic() - started)
            time.sleep(poll)
    finally:
        md.delete_state(COMMAND_PREFIX + command_id)
        md.delete_state(ANSWER_PREFIX + command_id)
