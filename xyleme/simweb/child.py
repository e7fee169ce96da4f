"""The child process of :class:`~xyleme.simweb.process.SimWebProcess`: serve, say where, wait.

``python -m xyleme.simweb.child --settings FILE [--speed S] [--start-days D] [--port P]
[--frozen] [--precompute]`` serves the web of the settings file (JSON of
:class:`SimWebSettings`) on 127.0.0.1, prints one JSON line (port, seed URLs, hosts, clock)
for the parent, and serves until SIGINT or SIGTERM. It imports the simulated web only, not
the CLI (which imports every part of xyleme): that is half its memory, and the demo runs one
beside the daemon. People start a simulated web with ``xyleme simweb serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from xyleme.simweb.server import SimWebServer
from xyleme.simweb.settings import DAY, SimWebSettings
from xyleme.simweb.timebase import ClockSpec, shared_clock


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m xyleme.simweb.child")
    parser.add_argument("--settings", type=Path, required=True)
    parser.add_argument("--speed", type=float, default=DAY)
    parser.add_argument("--start-days", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--frozen", action="store_true")
    parser.add_argument("--precompute", action="store_true")
    return parser.parse_args(argv)


async def serve_until_stopped(
    server: SimWebServer, precompute: bool, started: Callable[[], None]
) -> None:
    """Serve until SIGINT or SIGTERM; ``started`` is called once the server listens (this
    child and ``xyleme simweb serve`` both)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    if precompute:
        server.precompute()
    async with server:
        started()
        await stop.wait()


def _announce(server: SimWebServer, spec: ClockSpec) -> None:
    """The one JSON line :class:`~xyleme.simweb.process.SimWebProcess` reads."""
    started = {
        "port": server.port,
        "seed_urls": server.seed_urls,
        "hosts": server.web.host_names,
        "clock": spec.to_dict(),
    }
    print(json.dumps(started), flush=True)


def main(argv: list[str]) -> int:
    """Serve until told to stop; 1 (the error on stderr, nothing on stdout) if it cannot."""
    options = _arguments(argv)
    try:
        settings = SimWebSettings.from_dict(json.loads(options.settings.read_text("utf-8")))
        spec = ClockSpec(
            epoch=settings.epoch + options.start_days * DAY,
            speed=options.speed,
            anchor=time.time(),
            frozen=options.frozen,
        )
        server = SimWebServer(settings, shared_clock(spec), port=options.port)
        asyncio.run(
            serve_until_stopped(server, options.precompute, lambda: _announce(server, spec))
        )
    except (OSError, ValueError) as error:
        print(f"simweb: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
