"""Run the simulated web in a child process (benchmarks keep its CPU out of their figures).

:class:`SimWebProcess` starts ``python -m xyleme.simweb.child`` (the simulated web without the
CLI) with the given settings, reads the port and seed URLs it prints, and stops it with SIGINT
on exit. The child's pid lets a benchmark measure the server's CPU time separately (e.g. with
psutil).
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from metadata.clock import Clock
from xyleme.children import child_environment, python_command
from xyleme.simweb.resolver import SimWebResolver
from xyleme.simweb.settings import SimWebSettings
from xyleme.simweb.timebase import ClockSpec, shared_clock


class SimWebProcessError(RuntimeError):
    """The child server did not start; the message carries its error output."""


class SimWebProcess:
    """A simulated-web server in another process; a context manager.

    Parameters
    ----------
    settings
        The web to serve.
    speed
        Simulated seconds per real second of the child's accelerated clock.
    frozen
        Freeze the child's clock at the web's epoch plus ``start_days`` (nothing changes).
        Either way :meth:`clock` gives this process a clock reading the child's time.
    start_days
        Simulated days after the epoch at which the child's clock starts.
    precompute
        Render every live page before serving (with a frozen clock, serving renders nothing).
    port
        The port on 127.0.0.1 (0 picks a free one).
    """

    def __init__(
        self,
        settings: SimWebSettings,
        *,
        speed: float = 86_400.0,
        frozen: bool = False,
        start_days: float = 0.0,
        precompute: bool = False,
        port: int = 0,
    ) -> None:
        self.settings = settings
        self._options = ["--speed", repr(speed), "--start-days", repr(start_days)]
        self._options += ["--port", str(port)]
        if frozen:
            self._options.append("--frozen")
        if precompute:
            self._options.append("--precompute")
        self.process: subprocess.Popen | None = None
        self.port: int = 0
        self.seed_urls: list[str] = []
        self.host_names: list[str] = []
        self._settings_file: Path | None = None
        self.clock_spec: ClockSpec | None = None
        self._errors = None

    def __enter__(self) -> SimWebProcess:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(self.settings.to_dict(), handle)
            self._settings_file = Path(handle.name)
        command = python_command("xyleme.simweb.child", "--settings", str(self._settings_file))
        command += self._options
        # The child's errors go to a file: a pipe nobody reads would fill and stall it.
        self._errors = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self._errors, text=True, env=child_environment()
        )
        try:
            started = json.loads(self.process.stdout.readline() or "null")
            if started is None:
                self.process.wait()
                raise SimWebProcessError(f"simweb serve failed: {self.errors()}")
            self.port, self.seed_urls = started["port"], started["seed_urls"]
            self.host_names = started["hosts"]
            self.clock_spec = ClockSpec(**started["clock"])
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def errors(self) -> str:
        """What the child wrote to its standard error so far."""
        if self._errors is None:
            return ""
        self._errors.seek(0)
        return self._errors.read()

    def stop(self) -> None:
        """Stop the child with SIGINT (its clean shutdown path) and wait for it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None:
            self.process.stdout.close()
        if self._settings_file is not None:
            self._settings_file.unlink(missing_ok=True)
            self._settings_file = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def clock(self) -> Clock:
        """A clock in this process that reads the same simulated time as the server's."""
        return shared_clock(self.clock_spec)

    def resolver(self) -> SimWebResolver:
        """A resolver for an aiohttp connector in this process."""
        return SimWebResolver(self.port, self.host_names)
