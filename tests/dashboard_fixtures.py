"""A small repository made by a short run over the simulated web, for the dashboard's tests.

The pages are really fetched from a :class:`SimWebServer` on 127.0.0.1 (a manual clock
stepped a day per round), recorded through ``Metadata.record_fetches``, and XML documents go
through the loader (with the DTDs and entities it asks for). Between rounds every known page
is read again, so pages have observations marked changed and unchanged. The scores stand in
for the ranking and refresh passes of a daemon: OPIC is the real ``ranking.opic`` fed with
every read; importance and interest are computed by ``ranking.repository.rank_repository``
(the refresh module estimates λ from the observations itself).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path

from yarl import URL

from loader import Loader
from metadata import Metadata, PageType
from metadata.clock import ManualClock
from metadata.types import FetchResult
from ranking.opic import OPIC
from ranking.repository import rank_repository
from xyleme.simweb import FaultSettings, GroundTruth, SimWebServer, SimWebSettings, UnknownURL

DAY = 86_400.0
WEB = SimWebSettings(
    hosts=3,
    pages=90,
    seed=11,
    faults=FaultSettings(
        slow_fraction=0.0,
        oversize_fraction=0.0,
        gzip_bomb=False,
        redirect_loop=False,
        robots_timeout_fraction=0.0,
        dying_fraction=0.1,
        mean_lifetime_days=3.0,
    ),
)
CONFIG = "[refresh]\nbandwidth_per_unit = 40.0\ndiscovery_share = 0.1\ntime_unit_s = 86400.0\n"


@dataclass
class RunSummary:
    """What the run did, for tests that check the dashboard against it."""

    rounds: int
    fetches: int
    end: float


class _DependencyRequests:
    """The loader's DependencyFetcher: remembers what it asked for, fetched after the round."""

    def __init__(self) -> None:
        self.wanted: dict[str, int] = {}

    def request(self, url: str, referrer_id: int) -> None:
        self.wanted.setdefault(url, referrer_id)


def _page_type(content_type: str, body: bytes) -> PageType:
    if "html" in content_type:
        return PageType.HTML
    if "xml" in content_type or body.lstrip().startswith(b"<?xml"):
        return PageType.XML
    return PageType.HTML


def _last_modified(headers) -> float | None:
    value = headers.get("Last-Modified")
    return None if value is None else parsedate_to_datetime(value).timestamp()


async def _fetch(session, md: Metadata, url_id: int, url: str, at: float):
    """One GET as the crawler would record it (links from the ground truth's link list)."""
    async with session.get(url, allow_redirects=False) as response:
        body = await response.read()
        headers = response.headers
        if response.status in (301, 302, 307, 308):
            target = md.id_for(str(response.url.join(URL(headers["Location"]))))
            return FetchResult(
                url_id,
                at,
                PageType.HTML,
                response.status,
                md5=None,
                children=[target],
                redirect_to=target,
            ), None
        if response.status in (404, 410):
            return FetchResult(
                url_id, at, PageType.DEAD, response.status, reason=f"HTTP {response.status}"
            ), None
        if response.status != 200:
            return FetchResult(
                url_id, at, PageType.ERROR, response.status, reason=f"HTTP {response.status}"
            ), None
        page_type = _page_type(headers.get("Content-Type", ""), body)
        result = FetchResult(
            url_id,
            at,
            page_type,
            200,
            md5=hashlib.md5(body).hexdigest(),
            last_modified=_last_modified(headers),
            content_type=headers.get("Content-Type"),
            size=len(body),
            etag=headers.get("ETag"),
        )
        return result, body


async def short_simweb_run(repo_dir: Path, rounds: int = 5) -> RunSummary:
    """Fill ``repo_dir`` (created here) by ``rounds`` daily rounds over a small simulated web."""
    repo_dir.mkdir(parents=True, exist_ok=True)
    (repo_dir / "xyleme.toml").write_text(CONFIG)
    clock = ManualClock(WEB.epoch)
    md = Metadata.create(repo_dir / "metadata.db", clock=clock)
    requests = _DependencyRequests()
    loader = Loader(repo_dir / "documents", md, requests, clock)
    opic = OPIC()
    fetches = 0
    try:
        async with SimWebServer(WEB, clock) as server:
            truth_links = _TruthLinks(server)
            known = md.ids_for(server.seed_urls)
            async with server.client_session() as session:
                for round_number in range(rounds):
                    at = clock.now()
                    results = []
                    for url_id, url in zip(known, md.urls_of(known), strict=True):
                        result, body = await _fetch(session, md, url_id, url, at)
                        if body is not None and result.page_type is PageType.HTML:
                            result.children = md.ids_for(truth_links(url, at), referrer=url_id)
                        results.append((result, body))
                    md.record_fetches([result for result, _ in results])
                    fetches += len(results)
                    for result, body in results:
                        if body is not None and result.page_type is PageType.XML:
                            loader.load(
                                result.url_id,
                                md.url_of(result.url_id),
                                body,
                                {"Content-Type": result.content_type or ""},
                                at,
                            )
                        opic.on_fetch(result.url_id, md.children(result.url_id).tolist())
                    await _fetch_dependencies(session, md, loader, requests, at)
                    known = list(range(1, md.max_url_id() + 1))
                    if round_number < rounds - 1:
                        clock.advance(DAY)
        opic.checkpoint(md)
        rank_repository(md, repo_dir / "ranking")
    finally:
        loader.close()
        md.close()
    return RunSummary(rounds, fetches, clock.now())


class _TruthLinks:
    """URLs a page links to at a time, from the simulated web's ground truth."""

    def __init__(self, server: SimWebServer) -> None:
        self.truth = GroundTruth(server.web)

    def __call__(self, url: str, at: float) -> list[str]:
        try:
            page = self.truth.page_id(url)
        except UnknownURL:  # a redirect's target (/moved/...): not a page of its own
            return []
        return [self.truth.web.url(int(target)) for target in self.truth.links(page, at)]


async def _fetch_dependencies(session, md, loader, requests, at) -> None:
    """Fetch what the loader asked for (DTDs, entities, schemas) until nothing is missing."""
    for _ in range(4):
        wanted, requests.wanted = requests.wanted, {}
        if not wanted:
            return
        for url in wanted:
            url_id = md.id_for(url)
            result, body = await _fetch(session, md, url_id, url, at)
            if body is not None:
                result.page_type = PageType.DTD
            md.record_fetch(result)
            if body is not None:
                loader.load(url_id, url, body, {"Content-Type": result.content_type or ""}, at)
