"""One daemon per repository: an exclusive ``flock`` on ``DIR/daemon.lock``.

The kernel drops a ``flock`` when its holder dies, however it dies, so a lock file left by a
crashed daemon (kill -9, power cut) is simply taken again: a *stale* lock needs no cleaning.
The file holds the holder's pid so a refused command can say who holds the repository.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with DaemonLock(folder):
...     holder_pid(folder) is not None
True
>>> holder_pid(folder) is None
True
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

LOCK_FILE = "daemon.lock"
SUPERVISOR_LOCK_FILE = "supervisor.lock"
"""Held by ``xyleme run --workers`` (:mod:`xyleme.supervisor`): ``xyleme stop`` finds it
there; the daemon's lock stays free, so the other commands run directly as beside workers."""


class RepositoryLocked(RuntimeError):
    """Another process holds the repository's daemon lock."""

    def __init__(self, path: Path, pid: int | None) -> None:
        self.path, self.pid = path, pid
        who = f"process {pid}" if pid else "another process"
        super().__init__(f"{path.parent} is held by a running daemon ({who}; lock {path})")


class DaemonLock:
    """The exclusive lock of a repository, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, repository: Path, file: str = LOCK_FILE) -> None:
        self.path = repository / file
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`RepositoryLocked` naming its holder."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RepositoryLocked(self.path, _read_pid(self.path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        """Let go of the lock (the file stays: removing it would race with a new holder)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> DaemonLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def holder_pid(repository: Path, file: str = LOCK_FILE) -> int | None:
    """The pid of the daemon holding ``repository`` (0 if not yet written), or None if free
    (``file``: another lock of the repository, the supervisor's)."""
    path = repository / file
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _read_pid(path) or 0
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
