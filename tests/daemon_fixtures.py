"""Helpers for the daemon tests: a repository, and `xyleme run` as a child process."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from click.testing import CliRunner

from xyleme.cli import cli


def make_repository(folder: Path, config: str = "", *, db: str | None = None) -> Path:
    """``xyleme init`` (on the store ``db`` when given), then ``config`` as its whole
    ``xyleme.toml``."""
    result = CliRunner().invoke(cli, ["init", str(folder), *(["--db", db] if db else [])])
    assert result.exit_code == 0, result.output
    if config:
        (folder / "xyleme.toml").write_text(config)
    return folder


class RunningDaemon:
    """``python -m xyleme run`` (or ``command``) in a child process, its stderr collected
    line by line."""

    def __init__(self, repository: Path, *extra: str, command: str = "run") -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "xyleme", "--repo", str(repository), command, *extra],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            with self._seen:
                self.lines.append(line.rstrip("\n"))
                self._seen.notify_all()
        with self._seen:
            self._seen.notify_all()

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        """The first log line containing ``text`` (fails if the daemon exits first)."""
        with self._seen:
            found = self._seen.wait_for(
                lambda: any(text in line for line in self.lines) or self.process.poll() is not None,
                timeout,
            )
            matches = [line for line in self.lines if text in line]
        assert found and matches, f"no {text!r} in the daemon's log:\n" + "\n".join(self.lines)
        return matches[0]

    def stop(self, signum: int, timeout: float = 30.0) -> int:
        self.process.send_signal(signum)
        code = self.process.wait(timeout)
        self._reader.join(timeout)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


FAST_CRAWL = """
[daemon]
scope = ["simweb.test"]
checkpoint_seconds = 0.5
command_poll = 0.2

[crawler]
min_delay = 0.0
max_crawl_delay = 0.0
per_host_concurrency = 4
shutdown_deadline = 2.0
"""
"""A configuration that crawls the loopback simulated web without politeness delays."""


def read_pages(repository: Path) -> dict[int, float]:
    """URL-Id → first access of every page read so far (from the committed database)."""
    from metadata import Metadata

    with Metadata.open(repository / "metadata.db", readonly=True) as md:
        view = md.refresh_view()
    first = view["first_access"]
    read = ~(first != first)  # not NaN
    return dict(zip(view["id"][read].tolist(), first[read].tolist(), strict=True))


def wait_until(condition, timeout: float = 60.0, every: float = 0.2) -> None:
    """Poll ``condition`` until it holds (fails the test after ``timeout`` seconds)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(every)
