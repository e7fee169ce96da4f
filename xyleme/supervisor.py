"""``xyleme run --workers N``: N crawl worker processes and one coordinator on this machine
(issue 20, docs/scaleout.md), each restarted when it dies.

The processes are ``xyleme worker --part I/N`` and ``xyleme coordinator`` themselves, so a
worker started here and one started by hand on another machine are the same program. Their
logs go to this process's stderr. A child that dies is started again after
``restart_delay`` seconds, and the log says so with its exit code (a worker killed with
``kill -9`` comes back and claims its part's pages again once their leases end). A child that
fails again and again right after its start (a wrong setting, an unreachable store) stops
everything with an error instead of restarting forever. SIGTERM/SIGINT is passed on to
every child, which stops cleanly (in-flight fetches committed, claims given back); a child
still running after ``stop_deadline`` seconds is killed. ``xyleme stop`` does the same
through the command table, as it stops the daemon (``stop_requested``, asked every
``command_poll`` seconds).
"""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

EARLY_EXIT_S = 10.0
"""A child that exits within this many seconds of its start failed at start."""
EARLY_FAILURES = 3
"""Failures at start in a row after which the supervisor gives up."""


class SupervisorFailed(RuntimeError):
    """A child kept failing right after its start: everything was stopped."""


@dataclass
class Child:
    """One supervised process: its label, its command, the running process."""

    label: str
    command: list[str]
    process: subprocess.Popen | None = None
    started: float = 0.0
    early_failures: int = 0
    restart_at: float | None = None
    restarts: int = field(default=0)

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL)
        self.started = time.monotonic()
        self.restart_at = None
        log.info("%s started (pid %d)", self.label, self.process.pid)


def ended(code: int) -> str:
    """How a child ended, from its exit code (negative: the signal that killed it)."""
    return f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"


def child_commands(
    repository: Path, workers: int, worker_options: list[str], coordinator_options: list[str]
) -> list[tuple[str, list[str]]]:
    """The coordinator's and each worker's command line, with their labels."""
    base = [sys.executable, "-m", "xyleme", "--repo", str(repository)]
    children = [("coordinator", [*base, "coordinator", *coordinator_options])]
    for part in range(workers):
        label = f"worker {part}/{workers}"
        children.append((label, [*base, "worker", "--part", f"{part}/{workers}", *worker_options]))
    return children


class Supervisor:
    """Start every child, restart the ones that die, stop them all on a signal."""

    def __init__(
        self,
        children: list[tuple[str, list[str]]],
        *,
        restart_delay: float = 1.0,
        stop_deadline: float = 60.0,
        stop_requested: Callable[[], bool] | None = None,
        command_poll: float = 0.5,
    ) -> None:
        self.children = [Child(label, command) for label, command in children]
        self.restart_delay = restart_delay
        self.stop_deadline = stop_deadline
        self.stop_requested = stop_requested
        self.command_poll = command_poll
        self._stopping = threading.Event()

    def run(self) -> None:
        """Supervise until SIGTERM/SIGINT; :class:`SupervisorFailed` if a child keeps
        failing at start."""
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            for child in self.children:
                child.start()
            asked = time.monotonic()
            while not self._stopping.wait(0.2):
                self._watch()
                if (
                    self.stop_requested is not None
                    and time.monotonic() - asked >= self.command_poll
                ):
                    asked = time.monotonic()
                    if self.stop_requested():
                        log.info("`xyleme stop`: stopping the workers and the coordinator")
                        self.stop()
        finally:
            unclean = self._stop_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if unclean:
            raise SupervisorFailed(
                f"{', '.join(unclean)} did not stop cleanly (its log is above); what it "
                "committed is kept, and claims it did not give back end with their lease"
            )

    def stop(self) -> None:
        """Ask :meth:`run` to stop every child and return."""
        self._stopping.set()

    def _on_signal(self, signum: int, _frame: object) -> None:
        log.info(
            "%s received: stopping the workers and the coordinator", signal.Signals(signum).name
        )
        self.stop()

    def _obey_stop(self) -> None:
        """Stop if ``xyleme stop`` asked for it (the command table, as the daemon reads it)."""
        if self.stop_requested is not None and self.stop_requested():
            log.info("`xyleme stop`: stopping the workers and the coordinator")
            self.stop()

    def _watch(self) -> None:
        now = time.monotonic()
        for child in self.children:
            if child.restart_at is not None:
                if now >= child.restart_at:
                    child.restarts += 1
                    child.start()
                continue
            code = child.process.poll()
            if code is None:
                continue
            early = now - child.started < EARLY_EXIT_S and code != 0
            child.early_failures = child.early_failures + 1 if early else 0
            if child.early_failures >= EARLY_FAILURES:
                raise SupervisorFailed(
                    f"{child.label} failed {child.early_failures} times right after its "
                    f"start (exit code {code}; its log is above): stopping everything"
                )
            log.warning(
                "%s (pid %d) %s: restarting it in %g s",
                child.label,
                child.process.pid,
                ended(code),
                self.restart_delay,
            )
            child.restart_at = now + self.restart_delay

    def _stop_all(self) -> list[str]:
        """SIGTERM to every running child, a kill past ``stop_deadline``; the labels of the
        children that did not stop cleanly (killed, or a non-zero exit code: a stop that
        failed is told, never hidden behind the supervisor's own clean exit)."""
        running = [c for c in self.children if c.process is not None and c.process.poll() is None]
        for child in running:
            child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_deadline
        unclean = []
        for child in running:
            try:
                code = child.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.error("%s did not stop within %g s: killed", child.label, self.stop_deadline)
                child.process.kill()
                child.process.wait()
                unclean.append(child.label)
                continue
            if code != 0:
                log.error("%s (pid %d) %s at the stop", child.label, child.process.pid, ended(code))
                unclean.append(child.label)
        if running:
            log.info("every worker and the coordinator stopped")
        return unclean
