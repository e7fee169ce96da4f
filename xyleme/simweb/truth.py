"""The ground truth of the simulated web, for tests and benchmarks (never for the daemon).

Everything the crawler and the refresh policy try to learn, known exactly: each page's
type, true change rate λ, change times, liveness, links at any simulated time, and the true
link graph. Benchmarks score estimators against it (e.g. the λ of §6.1 of the Xyleme
acquisition paper, or a LiveRank ordering against the pages really alive).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from xyleme.simweb.settings import DAY
from xyleme.simweb.structure import Fault, Kind, LastModified, PageState, Robots
from xyleme.simweb.web import SimWeb


class UnknownURL(KeyError):
    """The URL names no page of the simulated web."""


@dataclass(frozen=True)
class PageTruth:
    """What is true of one page at one simulated time."""

    page_id: int
    url: str
    host: str
    kind: str
    """``HTML``, ``XML``, ``RSS`` or ``ATOM``."""
    page_type: str
    """As the metadata types it: ``HTML`` or ``XML`` (feeds are XML)."""
    change_rate: float
    """λ, changes per simulated second."""
    changes_per_day: float
    changes: list[float]
    """Change times at or before the time asked, oldest first."""
    version: int
    state: str
    """``unborn``, ``alive`` or ``dead``."""
    status: int
    """What a GET answers at that time (200, 404, 410; 200 for a soft 404)."""
    born: float
    dies: float | None
    links: list[int]
    """Page ids linked to at that time (none when the page does not exist)."""
    other_links: list[str]
    """Links that lead to no page: the spider trap's calendar, a host that does not resolve."""
    dependencies: list[str]
    """What an XML document needs besides its links: style sheet, DTD, entity, schema."""
    fault: str
    robots_allowed: bool
    relinks: bool
    """Whether the page's links change with its versions."""
    has_dtd: bool
    valid: bool | None
    """For a document with a DTD, whether it is valid against it."""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class HostTruth:
    """What is true of one host."""

    host: str
    robots: str
    """``normal``, ``not_found`` (404), ``server_error`` (500) or ``timeout``."""
    disallows_private: bool
    crawl_delay: float | None
    last_modified: str
    """``honest``, ``missing``, ``always_now`` or ``never_updated``."""
    spider_trap: bool
    pages: int

    def to_dict(self) -> dict:
        return asdict(self)


class GroundTruth:
    """Read-only truth about a :class:`SimWeb` at any simulated time.

    Examples
    --------
    >>> from xyleme.simweb.settings import SimWebSettings
    >>> truth = GroundTruth(SimWeb(SimWebSettings(hosts=2, pages=30, seed=4)))
    >>> truth.page(0, truth.web.settings.epoch).state
    'alive'
    """

    def __init__(self, web: SimWeb) -> None:
        self.web = web
        self._url_index: dict[str, int] | None = None

    @property
    def page_count(self) -> int:
        return self.web.structure.page_count

    def page_id(self, url: str) -> int:
        """The page a canonical URL names; raises :class:`UnknownURL`."""
        if self._url_index is None:
            self._url_index = {self.web.url(p): p for p in range(self.page_count)}
        try:
            return self._url_index[url]
        except KeyError:
            raise UnknownURL(url) from None

    def change_rates(self) -> np.ndarray:
        """λ of every page, changes per simulated second (float64, by page id)."""
        return self.web.structure.rate.copy()

    def kinds(self) -> np.ndarray:
        """Every page's :class:`~xyleme.simweb.structure.Kind` code (int8, by page id)."""
        return self.web.structure.kind.copy()

    def change_times(self, page: int, at: float) -> list[float]:
        """The times ``page`` changed at or before ``at``."""
        return self.web.changes.until(page, at)

    def versions(self, at: float) -> np.ndarray:
        """Every page's version at ``at`` (int64, by page id): a stored copy of page *i* is
        fresh exactly when it is of version ``versions(at)[i]`` (unborn pages: 0)."""
        version = self.web.changes.version
        return np.fromiter(
            (version(page, at) for page in range(self.page_count)), np.int64, self.page_count
        )

    def last_changes(self, at: float) -> np.ndarray:
        """When each page's current version began (its birth if it never changed; NaN if
        it is not born yet), float64 by page id: what an honest Last-Modified says."""
        web, versions = self.web, self.versions(at)
        began = np.array([web.last_change(p, int(v)) for p, v in enumerate(versions.tolist())])
        began[web.lifecycles.birth > at] = np.nan
        return began

    def alive(self, at: float) -> np.ndarray:
        """Which pages exist at ``at`` (bool, by page id)."""
        life = self.web.lifecycles
        return (life.birth <= at) & (at < life.death)

    def state(self, page: int, at: float) -> PageState:
        return self.web.state(page, at)

    def links(self, page: int, at: float) -> np.ndarray:
        """The pages ``page`` links to at ``at`` (empty when it does not exist then)."""
        if self.web.state(page, at) is not PageState.ALIVE:
            return np.empty(0, dtype=np.int32)
        return np.array(self.web.links(page, self.web.version(page, at)), dtype=np.int32)

    def link_graph(self, at: float, *, alive_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The true link graph at ``at`` as (source, target) int32 arrays, sorted by source.

        Sources are the pages alive at ``at``; with ``alive_only`` the targets are too
        (otherwise links to dead or unborn pages stay, as the pages hold them). Pages whose
        links never change are taken from the base graph at once; only the others are asked
        one by one for their links at their current version.
        """
        st, alive = self.web.structure, self.alive(at)
        sources = np.repeat(np.arange(st.page_count, dtype=np.int32), np.diff(st.link_offsets))
        fixed = (alive & ~self.web.versioned_links)[sources]
        src_parts, dst_parts = [sources[fixed]], [st.link_targets[fixed]]
        for page in np.flatnonzero(alive & self.web.versioned_links).tolist():
            out = self.links(page, at)
            src_parts.append(np.full(out.size, page, dtype=np.int32))
            dst_parts.append(out)
        src, dst = np.concatenate(src_parts), np.concatenate(dst_parts).astype(np.int32)
        order = np.argsort(src, kind="stable")
        src, dst = src[order], dst[order]
        if alive_only:
            keep = alive[dst]
            src, dst = src[keep], dst[keep]
        return src, dst

    def sitemap(self, host: int, at: float) -> list[int]:
        """The pages ``host``'s sitemaps list at ``at`` (live, not under ``/private/``)."""
        return self.web.sitemap_pages(host, at)

    def robots_allowed(self, page: int) -> bool:
        """Whether a crawler obeying the host's robots.txt may fetch ``page``."""
        st = self.web.structure
        host = int(st.host_of[page])
        blocks = st.robots[host] == Robots.NORMAL and st.disallow[host]
        return not bool(blocks and st.private[page])

    def page(self, page: int, at: float) -> PageTruth:
        """Everything true of ``page`` at ``at``."""
        web, st = self.web, self.web.structure
        state = web.state(page, at)
        status = {PageState.ALIVE: 200, PageState.UNBORN: 404}.get(
            state, int(web.lifecycles.dead_status[page])
        )
        death = float(web.lifecycles.death[page])
        kind = Kind(st.kind[page])
        rate = float(st.rate[page])
        return PageTruth(
            page_id=page,
            url=web.url(page),
            host=web.host_names[int(st.host_of[page])],
            kind=kind.name,
            page_type="HTML" if kind is Kind.HTML else "XML",
            change_rate=rate,
            changes_per_day=rate * DAY,
            changes=self.change_times(page, at) if state is not PageState.UNBORN else [],
            version=web.version(page, at) if state is not PageState.UNBORN else 0,
            state=state.value,
            status=status,
            born=float(web.lifecycles.birth[page]),
            dies=None if death == float("inf") else death,
            links=[int(t) for t in self.links(page, at)],
            other_links=web.other_links(page) if state is PageState.ALIVE else [],
            dependencies=web.dependencies(page),
            fault=Fault(st.fault[page]).name.lower(),
            robots_allowed=self.robots_allowed(page),
            relinks=bool(st.relinks[page]),
            has_dtd=bool(st.has_dtd[page]),
            valid=(not bool(st.invalid[page])) if st.has_dtd[page] else None,
        )

    def host(self, host: int) -> HostTruth:
        """Everything true of one host."""
        st, settings = self.web.structure, self.web.settings
        return HostTruth(
            host=self.web.host_names[host],
            robots=Robots(st.robots[host]).name.lower(),
            disallows_private=bool(st.disallow[host] and st.robots[host] == Robots.NORMAL),
            crawl_delay=settings.crawl_delay_seconds if st.crawl_delay[host] else None,
            last_modified=LastModified(st.last_modified[host]).name.lower(),
            spider_trap=bool(st.trap[host]),
            pages=int(st.host_start[host + 1] - st.host_start[host]),
        )

    def to_json(self, at: float) -> dict:
        """The whole truth at ``at`` as plain values (``xyleme simweb truth --json``)."""
        return {
            "at": at,
            "settings": self.web.settings.to_dict(),
            "seed_urls": self.web.seed_urls(),
            "hosts": [self.host(h).to_dict() for h in range(self.web.structure.host_count)],
            "pages": [self.page(p, at).to_dict() for p in range(self.page_count)],
        }
