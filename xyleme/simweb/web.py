"""The simulated web at any simulated time: lifecycles, change times and each version's links.

:class:`SimWeb` adds to the seed's :class:`~xyleme.simweb.structure.WebStructure` what depends
on simulated time: the lifecycles (birth, death), the lazily drawn change times, and each
page's links at a given version. The server renders what :class:`SimWeb` says; the ground
truth reports it.
"""

from __future__ import annotations

import math

import numpy as np

from xyleme.simweb.changes import ChangeTimes
from xyleme.simweb.lifecycle import LifecycleModel, Lifecycles, independent_lifecycles
from xyleme.simweb.settings import SimWebSettings
from xyleme.simweb.streams import python_stream
from xyleme.simweb.structure import (
    DOMAIN,
    DTD_PATH,
    ENTITY_PATH,
    RELINK_SHARE,
    SCHEMA_PATH,
    STYLESHEET_PATH,
    Kind,
    PageState,
    WebStructure,
    calendar_path,
    dead_host_url,
)


class SimWeb:
    """The simulated web at any simulated time: what exists, what each page holds.

    Parameters
    ----------
    settings
        The shape of the web (same settings, same web).
    lifecycle
        The model deciding births and deaths (default :func:`independent_lifecycles`).

    Examples
    --------
    >>> web = SimWeb(SimWebSettings(hosts=2, pages=20, seed=7))
    >>> web.url(web.structure.home[1])
    'http://site1.simweb.test/'
    """

    def __init__(
        self, settings: SimWebSettings, lifecycle: LifecycleModel = independent_lifecycles
    ) -> None:
        self.settings = settings
        self.structure = WebStructure(settings)
        self.lifecycles: Lifecycles = lifecycle(self.structure)
        if len(self.lifecycles.birth) != self.structure.page_count:
            raise ValueError("the lifecycle model must return one entry per page")
        self._host_death = self._checked_host_death()
        self.changes = ChangeTimes(settings.seed, self.structure.rate, self.lifecycles.birth)
        self.host_names = [f"site{h}.{DOMAIN}" for h in range(settings.hosts)]
        self.host_index = {name: h for h, name in enumerate(self.host_names)}
        self._paths = [self._path(p) for p in range(self.structure.page_count)]
        self.page_by_path = {path: p for p, path in enumerate(self._paths) if path != "/"}
        self._birth = self.lifecycles.birth.tolist()
        self._death = self.lifecycles.death.tolist()
        self._relinks = self.structure.relinks.tolist()
        self._base_links: list[list[int] | None] = [None] * self.structure.page_count
        self.versioned_links = self._pages_whose_links_depend_on_the_version()
        self._late_targets = self.versioned_links.tolist()
        self.versioned_links |= self.structure.relinks

    def _checked_host_death(self) -> list[float]:
        """Per host, when it stops resolving (``inf``: never); its pages must be dead by then."""
        host_death = self.lifecycles.host_death
        st = self.structure
        if host_death is None:
            return [math.inf] * st.host_count
        if len(host_death) != st.host_count:
            raise ValueError("host_death must have one entry per host")
        if np.any(self.lifecycles.death > host_death[st.host_of]):
            raise ValueError("a dead host's pages must die no later than the host")
        return [float(t) for t in host_death]

    def _pages_whose_links_depend_on_the_version(self) -> np.ndarray:
        """Pages whose base links reach a page born after the epoch (shown once it exists)."""
        st = self.structure
        late = self.lifecycles.birth[st.link_targets] > self.settings.epoch
        sources = np.repeat(np.arange(st.page_count), np.diff(st.link_offsets))
        return np.bincount(sources[late], minlength=st.page_count) > 0

    # -- names ---------------------------------------------------------------------------
    def _path(self, page: int) -> str:
        st = self.structure
        if st.is_home[page]:
            return "/"
        kind = Kind(st.kind[page])
        if st.private[page]:
            return f"/private/{page}.{'html' if kind is Kind.HTML else 'xml'}"
        if kind is Kind.HTML:
            return f"/pages/{page}.html"
        if kind is Kind.RSS:
            return f"/feeds/{page}.rss"
        if kind is Kind.ATOM:
            return f"/feeds/{page}.atom"
        return f"/docs/{page}" if st.opaque_path[page] else f"/data/{page}.xml"

    def path(self, page: int) -> str:
        """The path of ``page`` on its host."""
        return self._paths[page]

    def host_url(self, host: int) -> str:
        """``http://siteN.simweb.test`` (no port: see :mod:`xyleme.simweb.resolver`)."""
        return f"http://{self.host_names[host]}"

    def url(self, page: int) -> str:
        """The canonical, port-less URL of ``page``."""
        return self.host_url(int(self.structure.host_of[page])) + self._paths[page]

    def seed_urls(self) -> list[str]:
        """The home page of every host."""
        return [self.host_url(h) + "/" for h in range(self.structure.host_count)]

    # -- time ----------------------------------------------------------------------------
    def host_down(self, name: str, at: float) -> bool:
        """Whether host ``name`` no longer resolves at simulated time ``at`` (a dead host).

        Unknown names are not "down": the resolver refuses them anyway.
        """
        host = self.host_index.get(name)
        return host is not None and at >= self._host_death[host]

    def state(self, page: int, at: float) -> PageState:
        """Whether ``page`` exists at simulated time ``at``."""
        if at < self._birth[page]:
            return PageState.UNBORN
        if at >= self._death[page]:
            return PageState.DEAD
        return PageState.ALIVE

    def version(self, page: int, at: float) -> int:
        """The version of ``page`` served at ``at``: its number of changes so far."""
        return self.changes.version(page, at)

    def last_change(self, page: int, version: int) -> float:
        """When ``version`` of ``page`` began (its birth for version 0)."""
        return self.changes.version_start(page, version)

    def links(self, page: int, version: int) -> list[int]:
        """The page ids ``page`` links to in ``version``, in document order.

        A link-changing page redraws :data:`RELINK_SHARE` of its links at each version. A
        link to a page born after the version began is left out (the author could not know
        it yet); links to dead pages stay (the web is full of broken links).
        """
        targets = self._base_links[page]
        if targets is None:
            st = self.structure
            offsets = st.link_offsets
            targets = st.link_targets[offsets[page] : offsets[page + 1]].tolist()
            self._base_links[page] = targets
        filtered = self._late_targets[page]
        if version > 0 and self._relinks[page] and targets:
            targets = self._relinked(page, version, targets)
            filtered = True
        if not filtered:
            return targets
        began = self.last_change(page, version)
        birth = self._birth
        return [t for t in targets if birth[t] <= began]

    def sitemap_pages(self, host: int, at: float) -> list[int]:
        """The pages a host's sitemaps list at ``at``: alive and not under ``/private/``."""
        st, life = self.structure, self.lifecycles
        start, stop = int(st.host_start[host]), int(st.host_start[host + 1])
        listed = (life.birth[start:stop] <= at) & (at < life.death[start:stop])
        return (start + np.flatnonzero(listed & ~st.private[start:stop])).tolist()

    def other_links(self, page: int) -> list[str]:
        """Links of ``page`` that lead to no page: the spider trap's calendar, a vanished host."""
        st = self.structure
        host = int(st.host_of[page])
        links = []
        if st.is_home[page] and st.trap[host]:
            links.append(self.host_url(host) + calendar_path(self.settings.epoch))
        if st.dead_host_link[page] and st.kind[page] in (Kind.HTML, Kind.XML):
            links.append(dead_host_url(page))
        return links

    def dependencies(self, page: int) -> list[str]:
        """What an XML document needs besides its links: style sheet, DTD, entity, schema."""
        st = self.structure
        base = self.host_url(int(st.host_of[page]))
        paths = []
        if st.has_stylesheet[page]:
            paths.append(STYLESHEET_PATH)
        if st.has_dtd[page]:
            paths += [DTD_PATH, ENTITY_PATH]
        if st.has_schema[page]:
            paths.append(SCHEMA_PATH)
        return [base + path for path in paths]

    def _relinked(self, page: int, version: int, targets: list[int]) -> list[int]:
        """``targets`` with a share redrawn for ``version`` (deterministic per version)."""
        rng = python_stream(self.settings.seed, "relink", page, version)
        redraw = [i for i in range(len(targets)) if rng.random() < RELINK_SHARE]
        if not redraw:
            return targets
        intra = np.array([rng.random() < self.settings.intra_host_fraction for _ in redraw])
        uniforms = np.array([rng.random() for _ in redraw])
        drawn = self.structure.draw_targets(np.full(len(redraw), page), intra, uniforms).tolist()
        new = list(targets)
        for i, target in zip(redraw, drawn, strict=True):
            new[i] = target
        seen: set[int] = {page}
        return [t for t in new if not (t in seen or seen.add(t))]
