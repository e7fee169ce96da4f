"""One daemon per repository: the lock refuses a second holder and survives a crash."""

import os
import subprocess
import sys

import pytest

from xyleme.lock import DaemonLock, RepositoryLocked, holder_pid


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path):
    held = r"held by a running daemon \(process \d+"
    with DaemonLock(tmp_path), pytest.raises(RepositoryLocked, match=held):
        DaemonLock(tmp_path).acquire()
    DaemonLock(tmp_path).acquire()  # free again


def test_holder_pid(tmp_path):
    assert holder_pid(tmp_path) is None
    lock = DaemonLock(tmp_path)
    lock.acquire()
    assert holder_pid(tmp_path) == os.getpid()
    lock.release()
    assert holder_pid(tmp_path) is None


def test_the_lock_of_a_killed_process_is_taken_again(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from xyleme.lock import DaemonLock;"
            f"DaemonLock(Path({str(tmp_path)!r})).acquire(); print('held', flush=True);"
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert holder_pid(tmp_path) == holder.pid
        with pytest.raises(RepositoryLocked):
            DaemonLock(tmp_path).acquire()
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "daemon.lock").exists()  # the stale file stays ...
    with DaemonLock(tmp_path):  # ... and is simply taken again
        assert holder_pid(tmp_path) is not None
