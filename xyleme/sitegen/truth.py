"""The ground truth of a generated site: what a faithful crawl reads, and its link matrix.

Computed from what the generators declared (:class:`~xyleme.sitegen.model.Link`), never by
parsing the pages. The rules are issue 16's and ARCHITECTURE.md's ("What is a link", "The
link matrix"): a crawl starts at the seeds and the sitemaps robots.txt names; it follows the
declared links that lie in scope and that robots.txt allows; a redirect is followed to its
end (at most :data:`MAX_REDIRECTS` hops; a loop or an off-scope end reaches nothing); a
document is a 200 answer whose Content-Type is HTML or XML (or sniffs as one when missing
or generic). The matrix holds the reachable documents; a link counts for the document its
redirects end at; a self-link and repeated links count once; links to errors, resources and
anything out of scope are not in it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from urllib.parse import urljoin

from xyleme.sitegen.model import Site, canonical

MAX_REDIRECTS = 5
"""Redirect hops followed, as the crawler's ``max_redirects`` default."""


@dataclass(frozen=True)
class Truth:
    """The reachable documents (in a fixed order), their XML flags and the link matrix."""

    documents: list[str]
    is_xml: list[bool]
    edges: list[tuple[int, int]]
    """Distinct (source, target) positions in :attr:`documents`."""
    edge_kinds: dict[tuple[str, str], set[str]]
    """For every matrix edge (source URL, target URL), the kinds of link that made it."""
    attempted: set[str]
    """Every in-scope URL a faithful crawl asks the server for (redirect hops included)."""

    def position(self) -> dict[str, int]:
        """URL → position in :attr:`documents`."""
        return {url: i for i, url in enumerate(self.documents)}


def resolve(site: Site, url: str) -> tuple[str | None, list[str]]:
    """Where ``url`` ends after its redirects, and the in-scope URLs asked on the way.

    The end is None when the chain leaves the scope, is refused by robots.txt, loops, is
    too long or ends in anything but a document.
    """
    asked: list[str] = []
    for _ in range(MAX_REDIRECTS + 1):
        if not site.in_scope(url) or not site.robots_allows(url):
            return None, asked
        asked.append(url)
        response = site.responses.get(url)
        if response is None or response.status >= 400:
            return None, asked
        if 300 <= response.status < 400:
            url = canonical(urljoin(url, response.location or ""))
            continue
        return (url if url in site.documents else None), asked
    return None, asked


def ground_truth(site: Site) -> Truth:
    """Breadth-first from the seeds and the robots.txt sitemaps, by the rules above."""
    order: list[str] = []
    attempted: set[str] = set()
    seen: set[str] = set()
    queue = deque(canonical(url) for url in site.seeds + site.sitemaps)
    ends: dict[str, str | None] = {}
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        end, asked = resolve(site, url)
        ends[url] = end
        attempted.update(asked)
        if end is None or end in order:
            continue
        order.append(end)
        seen.add(end)
        queue.extend(link.target for link in site.links[end])
    position = {url: i for i, url in enumerate(order)}
    edges: dict[tuple[int, int], None] = {}
    kinds: dict[tuple[str, str], set[str]] = {}
    for source in order:
        for link in site.links[source]:
            if link.target not in ends:
                ends[link.target] = resolve(site, link.target)[0]
            end = ends[link.target]
            if end is None:
                continue
            edges[(position[source], position[end])] = None
            kinds.setdefault((source, end), set()).add(link.kind)
    return Truth(
        documents=order,
        is_xml=[site.documents[url].is_xml for url in order],
        edges=list(edges),
        edge_kinds=kinds,
        attempted=attempted,
    )
