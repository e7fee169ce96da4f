"""The stop of ``xyleme run --workers`` is told truly: the supervisor names a child that did
not stop cleanly (its own exit would otherwise say all went well), and a worker whose claims
the store refuses to give back still marks its row stopped (CI once saw a worker row left
``running`` after a stop that exited 0)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from xyleme.supervisor import Supervisor, SupervisorFailed

HANDLES = "import pathlib, signal, sys, time; signal.signal(signal.SIGTERM, {handler}); "
"""A child's SIGTERM handler, set before it says it is ready (a file named by its argument)."""


def child(ready: Path, handler: str) -> list[str]:
    """A child that sets ``handler`` for SIGTERM, then says so in ``ready`` and waits."""
    script = HANDLES.format(handler=handler) + "pathlib.Path(sys.argv[1]).touch(); time.sleep(60)"
    return [sys.executable, "-c", script, str(ready)]


def exits_with(code: int) -> str:
    """The handler of a child that exits with ``code`` on SIGTERM (a worker's stop)."""
    return f"lambda *_: sys.exit({code})"


def stop_when_ready(supervisor: Supervisor, files: list[Path]) -> threading.Thread:
    """Stop ``supervisor`` once every child has set its handler (or after 60 s)."""

    def later() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(f.exists() for f in files):
            time.sleep(0.05)
        supervisor.stop()

    thread = threading.Thread(target=later, daemon=True)
    thread.start()
    return thread


def supervise(tmp_path: Path, handlers: dict[str, str], **options) -> Supervisor:
    """Run a supervisor of one child per ``{label: handler}`` until they are all ready, then
    stop it (what :meth:`Supervisor.run` raised goes on)."""
    files = [tmp_path / f"ready-{n}" for n in range(len(handlers))]
    children = [(label, child(f, h)) for f, (label, h) in zip(files, handlers.items(), strict=True)]
    supervisor = Supervisor(children, **options)
    stopper = stop_when_ready(supervisor, files)
    try:
        supervisor.run()
    finally:
        stopper.join(5)
    return supervisor


def test_children_that_stop_cleanly_end_the_run_quietly(tmp_path):
    done = supervise(tmp_path, {"worker 0/2": exits_with(0), "worker 1/2": exits_with(0)})
    assert all(c.process.returncode == 0 for c in done.children)


def test_a_child_whose_stop_failed_fails_the_run_and_is_named(tmp_path):
    with pytest.raises(SupervisorFailed, match=r"^worker 1/2 did not stop cleanly"):
        supervise(tmp_path, {"worker 0/2": exits_with(0), "worker 1/2": exits_with(1)})


def test_a_child_killed_past_the_deadline_fails_the_run(tmp_path):
    with pytest.raises(SupervisorFailed, match=r"^coordinator did not stop cleanly"):
        supervise(tmp_path, {"coordinator": "signal.SIG_IGN"}, stop_deadline=0.5)


async def test_a_worker_whose_claims_cannot_be_given_back_still_marks_its_row_stopped(
    tmp_path, postgres_url, monkeypatch
):
    """The stop's release failing (a store error) costs nothing committed: the claims end
    with their lease, the row says stopped, and the stop is told as a failure."""
    from click.testing import CliRunner

    from metadata import Metadata, StoreError
    from xyleme.cli import cli
    from xyleme.config import load_config
    from xyleme.worker import CrawlWorker, WorkerSettings

    repo = tmp_path / "repo"
    assert CliRunner().invoke(cli, ["init", str(repo), "--db", postgres_url]).exit_code == 0
    (repo / "xyleme.toml").write_text(
        f'[store]\nurl = "{postgres_url}"\n[daemon]\nscope = ["a.test"]\n'
    )
    seeded = CliRunner().invoke(cli, ["--repo", str(repo), "seed", "add", "http://a.test/"])
    assert seeded.exit_code == 0, seeded.output
    worker = CrawlWorker(repo, load_config(repo / "xyleme.toml"), WorkerSettings(0, 1))
    worker.open()

    def refused() -> int:
        raise StoreError(postgres_url, "deadlock detected")

    monkeypatch.setattr(worker.feed, "release", refused)
    worker.close()
    assert worker.failure is not None and "end with their lease" in worker.failure
    with Metadata.open(postgres_url) as md:
        assert [row["state"] for row in md.workers() if row["role"] == "worker"] == ["stopped"]


async def test_the_crawler_closed_at_the_stop_is_not_started_again():
    """A heartbeat (``_follow_pause``) or a ``resume`` under way when the stop came used to
    start the crawler again beside the stop's last writes."""
    import asyncio

    from xyleme.workers import Workers

    class Crawler:
        def __init__(self) -> None:
            self.runs = 0
            self._stopped = asyncio.Event()

        async def run(self, until_idle: bool) -> None:
            self.runs += 1
            self._stopped.clear()
            await self._stopped.wait()

        def stop(self) -> None:
            self._stopped.set()

    crawler = Crawler()
    fetching = Workers(crawler)
    fetching.start()
    await asyncio.sleep(0)
    await fetching.stop()  # a pause: start runs it again
    fetching.start()
    await asyncio.sleep(0)
    assert fetching.running and crawler.runs == 2
    await asyncio.wait_for(fetching.close(), 10)
    fetching.start()
    await asyncio.sleep(0)
    assert not fetching.running and crawler.runs == 2
