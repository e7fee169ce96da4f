"""What the loader benchmark's whole job spends outside the parts it times alone, by call.

``benchmarks/bench_loader.py`` times each part of the whole job on its own (parse and
validate, links, compress, version rows); what is left of the whole job is measured here in
one more run, by wrapping the calls the loader makes (their CPU time) and by the garbage
collector's own callbacks (on in the whole job, off while the parts are timed).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from contextlib import ExitStack, contextmanager

from loader import Loader

CALLS = (
    "link_url_ids",
    "batch_reads",
    "link_data_rows",
    "status_and_type_rows",
    "metadata_commit",
    "garbage_collector",
)
"""The names of ``metadata_us``, in the order they are printed."""


class Meter:
    """CPU seconds spent in named calls of one whole-job run."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(CALLS, 0.0)

    def wrap(self, owner: object, attribute: str, part: str) -> None:
        """Count the CPU time of ``owner.attribute``'s calls towards ``part``."""
        inner, seconds = getattr(owner, attribute), self.seconds

        def timed(*args, **kwargs):
            started = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                seconds[part] += time.process_time() - started

        setattr(owner, attribute, timed)

    def commits(self, owner: object, attribute: str, part: str) -> None:
        """Count the CPU time of leaving ``owner.attribute()``'s block (a commit)."""
        inner, seconds = getattr(owner, attribute), self.seconds

        @contextmanager
        def timed(*args, **kwargs):
            with ExitStack() as stack:
                stack.enter_context(inner(*args, **kwargs))
                yield
                started = time.process_time()
            seconds[part] += time.process_time() - started

        setattr(owner, attribute, timed)

    def collector(self, phase: str, _: dict) -> None:
        """A ``gc.callbacks`` entry: the collections' CPU time."""
        if phase == "start":
            self._collecting = time.process_time()
        else:
            self.seconds["garbage_collector"] += time.process_time() - self._collecting


def metered_run(run: Callable[[Callable[[Loader], None]], object]) -> dict[str, float]:
    """CPU seconds by call of ``run(metered)``, a whole-job run that calls ``metered(loader)``
    once its loader is warmed up, before the timed loads: the links' URL-Ids (Map-Data),
    the batch's reads, Link-Data rows, Status-Data and type rows, the metadata commit, the
    garbage collector."""
    meter = Meter()

    def metered(loader: Loader) -> None:
        meter.wrap(loader.metadata, "ids_for", "link_url_ids")
        meter.wrap(loader.repository, "latest_many", "batch_reads")
        meter.wrap(loader.metadata, "statuses", "batch_reads")
        meter.wrap(loader.metadata, "awaited", "batch_reads")
        meter.wrap(loader.metadata, "set_children_many", "link_data_rows")
        meter.wrap(loader.metadata, "set_type_many", "status_and_type_rows")
        meter.wrap(loader.metadata, "set_status_many", "status_and_type_rows")
        meter.commits(loader.metadata, "transaction", "metadata_commit")
        gc.callbacks.append(meter.collector)

    try:
        run(metered)
    finally:
        if meter.collector in gc.callbacks:
            gc.callbacks.remove(meter.collector)
    return meter.seconds
