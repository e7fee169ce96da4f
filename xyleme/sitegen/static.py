"""A folder served by ``python -m http.server`` in a process of its own, as a user serves one.

Why the standard library's server: it is the plain static server a user reaches for, and it
answers as most do (Content-Type guessed from the suffix, ``Last-Modified``, a 301 for a
folder without its slash, a listing for a folder without an index, no compression, no
robots.txt unless the folder has one); :class:`~xyleme.sitegen.folder.StaticServer` models
exactly these answers for the truth.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 30.0
"""Real seconds for the server to start and say its port (a loaded machine is slow)."""


class StaticProcess:
    """``python -m http.server`` serving ``root`` on a free loopback port, or with
    ``production`` options (``["--charset", "utf-8"]``, may be empty) the production-headers
    server of :mod:`.webserver` (gzip, ETag, 304, a charset, the operator's types)."""

    def __init__(self, root: Path, production: list[str] | None = None) -> None:
        self.root = root
        self.production = production
        self.process: subprocess.Popen[str] | None = None
        self.origin = ""

    def __enter__(self) -> StaticProcess:
        if self.production is None:
            command = [sys.executable, "-u", "-m", "http.server", "--bind", "127.0.0.1"]
            command += ["--directory", str(self.root), "0"]
        else:
            command = [sys.executable, "-u", "-m", "xyleme.sitegen.webserver", str(self.root)]
            command += self.production
        environment = dict(os.environ)  # the child imports this checkout's xyleme
        environment["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(_CHECKOUT), environment.get("PYTHONPATH")])
        )
        # Its stderr (one line a request) goes to a file: a pipe nobody reads would fill.
        self._log = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self._log, text=True, env=environment
        )
        assert self.process.stdout is not None
        # A blocking readline waits for ever on a child that neither prints nor exits: the
        # watchdog kills it at the deadline, which ends the read.
        watchdog = threading.Timer(START_TIMEOUT_S, self.process.kill)
        watchdog.start()
        try:
            for line in self.process.stdout:
                match = re.search(r"port (\d+)", line)
                if match:
                    self.origin = f"http://127.0.0.1:{match.group(1)}"
                    return self
        finally:
            watchdog.cancel()
        self.__exit__()
        raise RuntimeError(
            f"http.server did not start within {START_TIMEOUT_S:g} s: {self.log()[-2000:]}"
        )

    def log(self) -> str:
        """What the server wrote to stderr so far (its request log, or why it failed)."""
        self._log.seek(0)
        return self._log.read()

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.process.stdout.close()
            self._log.close()
