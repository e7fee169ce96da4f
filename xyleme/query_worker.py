"""One dashboard XPath query in a process of its own: ``python -m xyleme.query_worker``.

Why a fresh process (not a thread, not a fork of the server): an expression can be cubic in a
document's size, and lxml holds the GIL while it evaluates, so in the server's process it
would stall the event loop a daemon shares; a forked copy of a threaded server is unsafe.
Here the query gets its own interpreter, whose limits the kernel enforces: CPU seconds
(``RLIMIT_CPU``: SIGXCPU, then SIGKILL), address space (``RLIMIT_AS``: an allocation past it
fails, lxml and Python report it as a memory error) and the lowest scheduling priority, so a
daemon's fetchers and writers keep their CPU. The parent (:mod:`xyleme.dashboard.queries`)
also kills it at the wall-clock limit. It lives outside the dashboard package, whose imports
(aiohttp, the refresh and ranking modules: 0.75 s) a process per query must not pay.

Reads one JSON request on stdin: ``folder``, ``xpath``, ``offset``, ``limit``, ``after``
(null, or the ``[url_id, n]`` key of the last match already shown: the n-th match, from 0, of
that document), ``cpu_seconds``, ``memory_mb``; writes one JSON answer on stdout:
``{"results": [...], "more": bool, "last": [url_id, n] or null}`` or ``{"error": message}``.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

NICEST = 19


def lowest_priority() -> None:
    """Yield the CPU to everything else (a daemon's fetchers and writers)."""
    os.nice(NICEST - os.nice(0))


def limit_this_process(cpu_seconds: float, memory_mb: int) -> None:
    """CPU time, address space beyond what the interpreter already maps, lowest priority."""
    lowest_priority()
    cpu = max(1, math.ceil(cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    with open("/proc/self/statm") as statm:  # Linux: pages of address space mapped now
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    budget = mapped + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (budget, budget))


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """``limit`` matches after the key ``after`` (else from ``offset``), whether more follow,
    and the key of the last one. Matches come document by document in URL-Id order, so a
    key stays valid while documents are added."""
    from loader import LoaderError, Warehouse  # imported by main() at the lowest priority
    from loader.query import query_documents
    from metadata import MetadataError

    offset, limit = int(request["offset"]), int(request["limit"])
    after = tuple(request["after"]) if request.get("after") is not None else None
    page: list[dict[str, Any]] = []
    last, more, key = None, False, (0, -1)
    try:
        warehouse = Warehouse(Path(request["folder"]))
        for match in query_documents(warehouse, request["xpath"], limit=sys.maxsize):
            key = (match.url_id, key[1] + 1 if match.url_id == key[0] else 0)
            if after is not None:
                if key <= after:
                    continue
            elif offset > 0:
                offset -= 1
                continue
            if len(page) == limit:
                more = True
                break
            page.append(asdict(match))
            last = list(key)
    except (LoaderError, MetadataError) as error:  # the version store's own errors too
        return {"error": str(error)}
    except MemoryError:
        return {"error": f"the query ran out of its memory limit ({request['memory_mb']} MiB)"}
    return {"results": page, "more": more, "last": last}


def main() -> None:
    """Priority first: the imports (lxml, the loader: 0.2 s of CPU per query) already yield
    to the daemon; the memory limit after them, so it bounds the query, not the imports."""
    lowest_priority()
    request = json.load(sys.stdin)
    import loader.query  # noqa: F401  (the imports, at the lowest priority)

    limit_this_process(float(request["cpu_seconds"]), int(request["memory_mb"]))
    json.dump(answer(request), sys.stdout)


if __name__ == "__main__":
    main()
