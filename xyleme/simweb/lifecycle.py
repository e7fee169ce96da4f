"""When pages appear and die: a replaceable model.

The generator of the web calls one :class:`LifecycleModel` with the web's static structure
and gets back, per page, its birth time, its death time and how it answers once dead. The
default, :func:`independent_lifecycles`, kills a fixed share of pages at exponential times
and makes another share appear uniformly over a horizon, each page independently. A richer
model (whole hosts dying, survival correlated with in-degree, death spreading along same-host
links, soft-404 pages; see the LiveRank paper §2) only has to be another function with the
same signature, passed as ``SimWeb(settings, lifecycle=...)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from xyleme.simweb.settings import DAY
from xyleme.simweb.streams import numpy_stream

if TYPE_CHECKING:
    from xyleme.simweb.structure import WebStructure

SOFT_404 = 200
"""A dead page's status when it answers "page not found" with 200 OK (a soft 404)."""


@dataclass(frozen=True)
class Lifecycles:
    """Per page: ``birth`` and ``death`` (simulated seconds, whole; ``inf`` = never dies), and
    ``dead_status``, the HTTP status a dead page answers (404, 410 or :data:`SOFT_404`).

    ``host_death`` (optional, per host, ``inf`` = never) is when a whole host stops
    resolving: from then on its names fail DNS for a client using the server's resolver
    (:meth:`SimWebServer.resolver`). Its pages must die by then too (the ground truth is per
    page); through the proxy they answer their ``dead_status``.
    """

    birth: np.ndarray
    death: np.ndarray
    dead_status: np.ndarray
    host_death: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not (len(self.birth) == len(self.death) == len(self.dead_status)):
            raise ValueError("birth, death and dead_status must have one entry per page")
        if np.any(self.death <= self.birth):
            raise ValueError("a page must die after it is born")
        finite_deaths = self.death[np.isfinite(self.death)]
        if np.any(self.birth % 1) or np.any(finite_deaths % 1):
            raise ValueError("births and deaths must be whole seconds (HTTP dates are)")


class LifecycleModel(Protocol):
    """Decides every page's birth, death and dead answer from the web's structure."""

    def __call__(self, structure: WebStructure) -> Lifecycles: ...


def independent_lifecycles(structure: WebStructure) -> Lifecycles:
    """Each non-home page independently may be born late and may die.

    Exactly ``new_page_fraction`` of the non-home pages are born uniformly within
    ``birth_horizon_days`` after the epoch, and exactly ``dying_fraction`` die an exponential
    time (mean ``mean_lifetime_days``) after their birth, answering 410 with probability
    ``gone_fraction`` and 404 otherwise. Home pages live for ever, so every host stays
    reachable.

    Parameters
    ----------
    structure
        The generated web (its settings, its pages and their hosts).

    Returns
    -------
    Lifecycles
        Whole-second birth and death times, and the status of each dead page.
    """
    settings, faults = structure.settings, structure.settings.faults
    n = structure.page_count
    rng = numpy_stream(settings.seed, "lifecycle")
    epoch = settings.epoch
    birth = np.full(n, epoch)
    death = np.full(n, math.inf)
    status = np.full(n, 404, dtype=np.int16)
    candidates = np.flatnonzero(~structure.is_home)

    born_late = rng.permutation(candidates)[: round(faults.new_page_fraction * len(candidates))]
    birth[born_late] = epoch + np.ceil(
        rng.uniform(1.0, faults.birth_horizon_days * DAY, born_late.size)
    )

    dying = rng.permutation(candidates)[: round(faults.dying_fraction * len(candidates))]
    lifetimes = rng.exponential(faults.mean_lifetime_days * DAY, dying.size)
    death[dying] = birth[dying] + np.ceil(lifetimes) + 1.0
    status[dying[rng.random(dying.size) < faults.gone_fraction]] = 410
    return Lifecycles(birth=birth, death=death, dead_status=status)
