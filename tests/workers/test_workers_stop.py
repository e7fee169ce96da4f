"""The stop of ``xyleme run --workers`` is told truly: the supervisor names a child that did
not stop cleanly (its own exit would otherwise say all went well), and a worker whose claims
the store refuses to give back still marks its row stopped (CI once saw a worker row left
``running`` after a stop that exited 0)."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from xyleme.supervisor import Supervisor, SupervisorFailed

READY = "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *_: sys.exit({code}))"
"""A child that exits with ``code`` on SIGTERM, as a worker does after its clean stop."""


def child(code: int) -> list[str]:
    return [sys.executable, "-c", READY.format(code=code) + "; time.sleep(60)"]


def stop_when_started(supervisor: Supervisor, timeout: float = 20.0) -> threading.Thread:
    """Stop ``supervisor`` once every child has had time to set its SIGTERM handler."""

    def later() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(c.process is not None for c in supervisor.children):
                time.sleep(1.0)  # the children's interpreters set their handlers
                break
            time.sleep(0.05)
        supervisor.stop()

    thread = threading.Thread(target=later, daemon=True)
    thread.start()
    return thread


def test_children_that_stop_cleanly_end_the_run_quietly():
    supervisor = Supervisor([("worker 0/2", child(0)), ("worker 1/2", child(0))])
    stopper = stop_when_started(supervisor)
    supervisor.run()
    stopper.join(5)
    assert all(c.process.returncode == 0 for c in supervisor.children)


def test_a_child_whose_stop_failed_fails_the_run_and_is_named():
    supervisor = Supervisor([("worker 0/2", child(0)), ("worker 1/2", child(1))])
    stopper = stop_when_started(supervisor)
    with pytest.raises(SupervisorFailed, match=r"worker 1/2 did not stop cleanly"):
        supervisor.run()
    stopper.join(5)


def test_a_child_killed_past_the_deadline_fails_the_run():
    stubborn = [
        sys.executable,
        "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)",
    ]
    supervisor = Supervisor([("coordinator", stubborn)], stop_deadline=0.5)
    stopper = stop_when_started(supervisor)
    with pytest.raises(SupervisorFailed, match=r"coordinator did not stop cleanly"):
        supervisor.run()
    stopper.join(5)
    assert supervisor.children[0].process.returncode == -9


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
