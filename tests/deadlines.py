"""Reading a child process's output with a deadline, so a hung child fails a test, never hangs it.

A blocking ``readline`` on a pipe waits for ever if the child neither prints nor exits; the
watchdog kills the child at the deadline, which ends the read, and the test fails saying so.
"""

from __future__ import annotations

import subprocess
import threading

import pytest


def readline_within(process: subprocess.Popen, timeout: float = 60.0) -> str:
    """The next line of ``process``'s stdout ("" once it exits); fails the test if none comes
    within ``timeout`` seconds, killing the child so nothing is left waiting."""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        process.kill()

    watchdog = threading.Timer(timeout, expire)
    watchdog.start()
    try:
        line = process.stdout.readline()
    finally:
        watchdog.cancel()
    if expired.is_set():
        pytest.fail(f"no line from {process.args!r} within {timeout:g} s")
    return line
