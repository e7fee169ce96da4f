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

import contextlib
import json
import math
import os
import resource
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loader import Warehouse

NICEST = 19
AUTOGROUP = Path("/proc/self/autogroup")
"""This process's scheduling group, where the kernel groups processes by session."""
AUTOGROUPS_ON = Path("/proc/sys/kernel/sched_autogroup_enabled")


def in_a_group_of_its_own() -> bool:
    """Whether the kernel schedules by session groups (autogroups, the default of most Linux
    systems): the dashboard starts each worker in a session of its own, so the worker then
    has a group of its own."""
    try:
        return AUTOGROUPS_ON.read_text().strip() == "1"
    except OSError:
        return False


def group_niceness(value: int) -> None:
    """Set the niceness of this process's group (any user may raise it and lower it back to
    0; nothing where there are no groups)."""
    with contextlib.suppress(OSError):
        AUTOGROUP.write_text(f"{value}\n")


def lowest_priority(idle: bool = False) -> None:
    """Yield the CPU to everything else: nice 19; with ``idle``, also the group's niceness 19
    and, on Linux, ``SCHED_IDLE``, so the worker only takes CPU nobody else wants.

    Why the group: where the kernel groups processes by session, niceness only ranks the
    processes of one group and groups share the CPU equally, so a worker in the daemon's
    group spent the daemon's share (``benchmarks/bench_dashboard.py``, docs/dashboard.md).
    """
    os.nice(NICEST - os.nice(0))
    if idle:
        group_niceness(NICEST)
        if hasattr(os, "SCHED_IDLE"):
            with contextlib.suppress(OSError):  # a kernel that refuses: nice 19 only
                os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def limit_this_process(cpu_seconds: float, memory_mb: int, idle: bool = False) -> None:
    """CPU time, address space beyond what the interpreter already maps, lowest priority
    (:func:`lowest_priority`)."""
    lowest_priority(idle)
    cpu = max(1, math.ceil(cpu_seconds))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    with open("/proc/self/statm") as statm:  # Linux: pages of address space mapped now
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    budget = mapped + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (budget, budget))


def open_warehouse(folder: Path) -> Warehouse:
    """The warehouse in ``folder`` with its version store connected: the connection checks
    the store's schema under its write lock for a moment, which the daemon's loader waits
    for, so it is taken before the priority drops (a starved worker would hold it for
    seconds). Raises the loader's and the store's errors."""
    from loader import Warehouse  # imported by main() at the lowest priority

    warehouse = Warehouse(folder)
    warehouse.repository.latest(0)
    return warehouse


def answer(request: dict[str, Any], warehouse: Warehouse) -> dict[str, Any]:
    """``limit`` matches after the key ``after`` (else from ``offset``), whether more follow,
    and the key of the last one. Matches come document by document in URL-Id order, so a
    key stays valid while documents are added."""
    from loader import LoaderError, query_documents
    from metadata import MetadataError

    offset, limit = int(request["offset"]), int(request["limit"])
    after = tuple(request["after"]) if request.get("after") is not None else None
    page: list[dict[str, Any]] = []
    last, more, key = None, False, (0, -1)
    try:
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
    """Priority first. While a crawl runs (``"idle": true``) the worker takes only idle CPU
    (:func:`lowest_priority`), the imports (lxml and the loader: 0.3 s of CPU) included, but
    for the store's write lock (:func:`open_warehouse`), taken at the group's normal
    priority; otherwise its group of its own runs at the normal priority, and the query at
    nice 19. Without groups, all at nice 19 (a process cannot raise its priority back). The
    memory limit comes after the imports, so it bounds the query, not them."""
    request = json.load(sys.stdin)
    idle, grouped = bool(request.get("idle")), in_a_group_of_its_own()
    if idle and grouped:
        group_niceness(NICEST)
    elif not grouped:
        lowest_priority()  # no group: the process's own niceness, which cannot go back
    from loader import LoaderError
    from metadata import MetadataError

    if idle and grouped:
        group_niceness(0)
    try:
        warehouse = open_warehouse(Path(request["folder"]))
    except (LoaderError, MetadataError) as error:
        json.dump({"error": str(error)}, sys.stdout)
        return
    limit_this_process(float(request["cpu_seconds"]), int(request["memory_mb"]), idle)
    json.dump(answer(request, warehouse), sys.stdout)


if __name__ == "__main__":
    main()
