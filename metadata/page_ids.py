"""Map-Data (paper §4): the URL-Ids of canonical URLs, and the URLs refused one.

A URL gets its id the first time anything names it; ids are dense from 1, so the largest
one sizes the rank vectors. A URL that cannot have one (invalid, or refused by the caller's
rule) is kept with its reason in a bounded table of rejected links.
"""

from __future__ import annotations

from collections.abc import Iterable

from conventions import host_hash
from metadata.dialect import Connection, Dialect
from metadata.errors import InvalidURL, UnknownPage, translated
from metadata.store import LOOKUP_CHUNK, Store, chunked, lookup_pages, max_id
from metadata.types import RejectedLink
from metadata.urls import MAX_URL_LENGTH, canonicalize_url

_REJECTED_URL_CHARS = 4 * MAX_URL_LENGTH  # a rejected URL is kept up to this length


class PageIds(Store):
    """URL ↔ URL-Id, and the rejected links."""

    def ids_for(
        self,
        urls: Iterable[str],
        *,
        referrer: int | None = None,
        create: bool = True,
        canonical: bool = False,
    ) -> list[int | None]:
        """The URL-Id of each URL, in order, creating the missing ones in one transaction.

        Invalid URLs get None and, when ``create``, a row in the rejected-links table naming
        ``referrer``. ``create=False`` only looks up (None for unknown URLs).
        ``canonical=True`` promises the URLs already come from :func:`canonicalize_url`
        (a crawler that canonicalised them while extracting links) and skips that step.
        """
        keys: list[str | None] = []
        refused: list[tuple[str, str]] = []
        if canonical:
            keys = list(urls)
        else:
            for url in urls:
                try:
                    keys.append(canonicalize_url(url))
                except InvalidURL as error:
                    keys.append(None)
                    refused.append((url, error.reason))
        wanted = list(dict.fromkeys(key for key in keys if key is not None))
        if not create:
            with self._read(len(wanted) > LOOKUP_CHUNK) as conn:
                known = _lookup_ids(conn, self.dialect, wanted)
            return [None if key is None else known.get(key) for key in keys]
        with self._write() as conn:
            known = _lookup_ids(conn, self.dialect, wanted)
            missing = [key for key in wanted if key not in known]
            if missing and self.dialect.serialise_ids:  # two writers never give one id twice
                # Taken only when an id is to be given (most batches name known URLs only),
                # and held to the commit: look again, another writer may have just given it.
                conn.execute(self.dialect.serialise_ids)
                known.update(_lookup_ids(conn, self.dialect, missing))
                missing = [key for key in missing if key not in known]
            if missing:
                start = max_id(conn) + 1
                new_ids = range(start, start + len(missing))
                now = self.clock.now()
                rows = zip(new_ids, missing, strict=True)
                self.dialect.insert_many(
                    conn,
                    "pages",
                    ("id", "url", "discovered_at", "host_hash"),
                    [(url_id, url, now, host_hash(url)) for url_id, url in rows],
                )
                known.update(zip(missing, new_ids, strict=True))
            if refused:
                self._insert_rejected(conn, [(url, why, referrer) for url, why in refused])
        return [None if key is None else known[key] for key in keys]

    def id_for(self, url: str, create: bool = True) -> int | None:
        """The URL-Id of one URL (None if invalid, or unknown and not ``create``)."""
        return self.ids_for([url], create=create)[0]

    def mark_sitemaps(self, url_ids: Iterable[int]) -> None:
        """Keep that these pages are sitemaps the site named (read as such ever after)."""
        wanted = sorted(set(url_ids))
        if wanted:
            with self._write() as conn:
                conn.executemany(
                    "INSERT INTO sitemaps (url_id) VALUES (?) ON CONFLICT DO NOTHING",
                    [(url_id,) for url_id in wanted],
                )

    def sitemap_urls(self) -> set[str]:
        """The canonical URLs of the pages marked as sitemaps (:meth:`mark_sitemaps`): a
        site names few, so a crawler holds them all and asks once a run, or a plan."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT pages.url FROM sitemaps JOIN pages ON pages.id = sitemaps.url_id"
            ).fetchall()
        return {row[0] for row in rows}

    def url_of(self, url_id: int) -> str:
        """The canonical URL of a URL-Id; :class:`UnknownPage` if there is none."""
        return self.urls_of([url_id])[0]

    def urls_of(self, ids: Iterable[int]) -> list[str]:
        """The canonical URLs of many URL-Ids, in order; :class:`UnknownPage` on the first
        unknown one."""
        wanted = [int(url_id) for url_id in ids]
        with self._read(len(set(wanted)) > LOOKUP_CHUNK) as conn:
            found = dict(lookup_pages(conn, wanted, "id, url"))
        try:
            return [found[url_id] for url_id in wanted]
        except KeyError as error:
            raise UnknownPage(error.args[0]) from None

    def reject(self, urls: str | Iterable[str], reason: str, referrer: int | None = None) -> None:
        """Keep URLs refused for a reason of the caller's (out of scope, spider trap…).

        ``urls`` is one URL or many, recorded in one transaction.
        """
        batch = [urls] if isinstance(urls, str) else list(urls)
        with self._write() as conn:
            self._insert_rejected(conn, [(url, reason, referrer) for url in batch])

    def reject_many(self, refusals: Iterable[tuple[str, str, int | None]]) -> None:
        """Keep many refusals, each ``(url, reason, referrer)``, in one transaction (or in
        the caller's :meth:`transaction`): a crawler's batch of pages refuses many links."""
        batch = list(refusals)
        if batch:
            with self._write() as conn:
                self._insert_rejected(conn, batch)

    def rejected(self, limit: int = 100) -> list[RejectedLink]:
        """The most recent refusals, newest first."""
        rows = self._all(
            "SELECT url, reason, referrer, at FROM rejected ORDER BY seq DESC LIMIT ?", (limit,)
        )
        return [RejectedLink(*row) for row in rows]

    def _insert_rejected(
        self, conn: Connection, refused: list[tuple[str, str, int | None]]
    ) -> None:
        now = self.clock.now()
        self.dialect.insert_many(
            conn,
            "rejected",
            ("url", "reason", "referrer", "at"),
            [(url[:_REJECTED_URL_CHARS], why, referrer, now) for url, why, referrer in refused],
        )
        conn.execute(
            "DELETE FROM rejected WHERE seq <= (SELECT max(seq) FROM rejected) - ?",
            (self.settings.rejected_limit,),
        )

    def max_url_id(self) -> int:
        """The largest URL-Id given (0 for an empty repository): size of the rank vectors."""
        with self._lock, translated(self.name):
            return max_id(self._conn)  # one statement: no transaction needed


def _lookup_ids(conn: Connection, dialect: Dialect, urls: list[str]) -> dict[str, int]:
    """The URL-Ids of those of ``urls`` that have one."""
    known: dict[str, int] = {}
    for chunk in chunked(urls, LOOKUP_CHUNK):
        where, values = dialect.among("url", chunk)
        known.update(conn.execute(f"SELECT url, id FROM pages WHERE {where}", values))
    return known
