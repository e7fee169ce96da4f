"""How the daemon stops: on SIGTERM / SIGINT, and on a full disk, with a reason to give.

A signal asks for a clean stop (no new work; in-flight fetches get the crawler's
``shutdown_deadline``; running jobs end; a last checkpoint). A full disk (or the database's
quota) cannot be worked around: the daemon stops and says so (:class:`DaemonStopped`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import signal
from collections.abc import Callable, Iterator

from metadata import StoreFull

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class DaemonStopped(RuntimeError):
    """The daemon had to stop on an error it cannot work around (a full disk, say)."""


def disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or the database's quota) is full."""
    return isinstance(error, StoreFull) or (
        isinstance(error, OSError) and error.errno == errno.ENOSPC
    )


@contextlib.contextmanager
def stopping_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """SIGTERM and SIGINT call ``stop`` while the block runs (on the running loop)."""
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        name = signal.Signals(signum).name
        log.info("%s received: finishing in-flight work, then stopping", name)
        stop()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        yield
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


def first_failure(current: str | None, failure: str | None) -> str | None:
    """Why a process stops: the first failure it was given (logged when it comes); a later
    one, often a consequence of the first, does not replace it."""
    if failure is not None and current is None:
        log.error("stopping: %s", failure)
        return failure
    return current
