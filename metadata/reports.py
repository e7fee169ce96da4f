"""The operator's reports over the metadata: URLs by outcome with their reasons, and hosts.

``xyleme urls`` and ``xyleme hosts`` (and the dashboard's ``/api/hosts``) read these; every
SQL statement stays in this package. A report is a long read of the whole ``pages`` table,
so it runs on the manager's scan connection (WAL snapshot: a daemon's writes go on).

Host keys are the crawler's politeness keys, ``scheme://host[:port]``
(:func:`xyleme.crawler.frontier.host_key`), computed here in SQL from each URL.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from metadata.manager import Metadata

# scheme://host[:port] of a URL (the whole URL when no path follows the host).
_AFTER = "instr(substr(url, instr(url, '//') + 2), '/')"
HOST_SQL = f"CASE WHEN {_AFTER} > 0 THEN substr(url, 1, {_AFTER} + instr(url, '//')) ELSE url END"
# The first part of a reason, before its first ':' ("out of scope: host x" -> "out of scope").
GROUP_SQL = (
    "CASE WHEN instr(reason, ':') > 0 THEN substr(reason, 1, instr(reason, ':') - 1) "
    "ELSE reason END"
)
NO_LIMIT = 1 << 62  # "LIMIT -1" is SQLite's "all rows"; PostgreSQL takes no negative limit
_READ_TYPES = "('HTML', 'XML', 'DTD', 'RESOURCE')"


@dataclass(frozen=True, slots=True)
class UrlStatus:
    """One value of ``xyleme urls --status``: the pages it keeps (SQL over ``pages`` joined
    with the loading status as ``load_status`` and ``load_detail``), the column it orders
    them by (newest first) and the SQL of the reason it shows (None: no reason to show)."""

    where: str
    order: str = "last_access"
    reason: str | None = None


_FAILED = "reason"
PAGE_STATUSES: dict[str, UrlStatus] = {
    "error": UrlStatus("type = 'ERROR'", reason=_FAILED),
    "dead": UrlStatus("type = 'DEAD'", reason=_FAILED),
    "failed": UrlStatus("type IN ('ERROR', 'DEAD')", reason=_FAILED),
    "unread": UrlStatus("type = 'UNKNOWN' AND last_access IS NULL", order="discovered_at"),
    "read": UrlStatus(f"type IN {_READ_TYPES}"),
    "html": UrlStatus("type = 'HTML'"),
    "xml": UrlStatus("type = 'XML'"),
    "dtd": UrlStatus("type = 'DTD'"),
    "resource": UrlStatus("type = 'RESOURCE'"),
    "redirect": UrlStatus("redirect_to IS NOT NULL"),
    "waiting": UrlStatus(
        "load_status LIKE 'WAITING%'",
        reason="load_status || coalesce(': ' || load_detail, '')",
    ),
}
"""Every ``--status`` read from the pages; ``rejected`` reads the rejected-links table.
``waiting``: XML documents parked until a DTD, an entity or a schema arrives."""
REJECTED = "rejected"
STATUSES = (REJECTED, *PAGE_STATUSES)
WITH_REASONS = (REJECTED, *(name for name, chosen in PAGE_STATUSES.items() if chosen.reason))
"""The statuses whose URLs have a reason (``--reason``, ``--by-reason``)."""
_PAGES = (
    "SELECT pages.*, l.status AS load_status, l.detail AS load_detail "
    "FROM pages LEFT JOIN load_status l ON l.id = pages.id"
)


def _matching(status: str, condition: str) -> str:
    """The pages of ``status`` with their reason as ``why``, kept by ``condition``."""
    chosen = PAGE_STATUSES[status]
    why = chosen.reason or "NULL"
    inner = f"SELECT *, {why} AS why FROM ({_PAGES}) AS paged WHERE {chosen.where}"
    return f"SELECT * FROM ({inner}) AS chosen WHERE {condition}"


def _filters(
    host: str | None = None,
    reason: str | None = None,
    url_column: str = "url",
    reason_column: str = "reason",
) -> tuple[str, dict[str, Any]]:
    """SQL keeping the rows of ``host`` whose reason starts with ``reason``, and its named
    parameters. ``host`` is a host key ``scheme://h[:p]`` or a bare host name (any scheme
    and port); ``reason`` a group name from ``--by-reason`` or any longer prefix
    (case-insensitive)."""
    clauses, params = [], {}
    if reason:
        clauses.append(f"lower(substr({reason_column}, 1, :reason_length)) = :reason")
        params.update(reason_length=len(reason), reason=reason.lower())
    if host:
        key = f"({HOST_SQL.replace('url', url_column)})"
        if "://" in host:
            clauses.append(f"{key} = :host")
            params["host"] = host.rstrip("/").lower()
        else:
            name = f"substr({key}, instr({key}, '//') + 2)"
            clauses.append(
                f"({name} = :host OR substr({name}, 1, length(:host) + 1) = :host || ':')"
            )
            params["host"] = host.lower()
    return " AND ".join(clauses) or "1 = 1", params


def page_urls(
    md: Metadata,
    status: str,
    *,
    reason: str | None = None,
    host: str | None = None,
    limit: int | None = None,
    after: tuple[float | None, int] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The pages of a ``--status`` (newest first: by :func:`order_column` decreasing, then
    increasing URL-Id), at most ``limit`` after the key ``after``, and how many match."""
    condition, params = _filters(host, reason, reason_column="why")
    matching = _matching(status, condition)
    total = md._scan(f"SELECT count(*) FROM ({matching}) AS matching", params)[0][0]
    order = f"p.{PAGE_STATUSES[status].order}"
    keyset = "1 = 1"
    if after is not None:  # rows after (time, id) in "time DESC NULLS LAST, id" order
        keyset = (
            f"({order} IS NULL AND p.id > :after_id)"
            if after[0] is None
            else f"({order} < :after_at OR ({order} = :after_at AND p.id > :after_id) "
            f"OR {order} IS NULL)"
        )
        params.update(after_at=after[0], after_id=after[1])
    rows = md._scan(
        "SELECT p.id, p.url, p.type, p.status, p.why, p.failures, p.discovered_at, "
        "p.last_access, p.content_type, p.size, p.redirect_to, t.url "
        f"FROM ({matching}) p LEFT JOIN pages t ON t.id = p.redirect_to WHERE {keyset} "
        f"ORDER BY {order} DESC NULLS LAST, p.id LIMIT :limit",
        {**params, "limit": NO_LIMIT if limit is None else limit},
    )
    names = [
        "url_id",
        "url",
        "type",
        "status",
        "reason",
        "failures",
        "discovered_at",
        "last_access",
        "content_type",
        "size",
        "redirect_to",
        "redirect_url",
    ]
    return [dict(zip(names, row, strict=True)) for row in rows], total


def order_column(status: str) -> str:
    """The row field a page status orders by (newest first): its keyset with ``url_id``."""
    return PAGE_STATUSES[status].order


def rejected_urls(
    md: Metadata,
    *,
    reason: str | None = None,
    host: str | None = None,
    limit: int | None = None,
    after: int | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """URLs refused a fetch (newest first, by decreasing ``seq``) with the page they were
    found on, at most ``limit`` older than the refusal ``after``; how many match.

    The table keeps the last ``MetadataSettings.rejected_limit`` refusals only.
    """
    condition, params = _filters(host, reason)
    matching = f"SELECT * FROM rejected WHERE {condition}"
    total = md._scan(f"SELECT count(*) FROM ({matching}) AS matching", params)[0][0]
    rows = md._scan(
        "SELECT r.url, r.reason, r.at, r.referrer, p.url, r.seq "
        f"FROM ({matching}) r LEFT JOIN pages p ON p.id = r.referrer "
        "WHERE r.seq < :after ORDER BY r.seq DESC LIMIT :limit",
        {
            **params,
            "limit": NO_LIMIT if limit is None else limit,
            "after": 2**63 - 1 if after is None else after,
        },
    )
    names = ("url", "reason", "at", "referrer_id", "referrer", "seq")
    return [dict(zip(names, row, strict=True)) for row in rows], total


def reason_counts(
    md: Metadata, status: str, *, reason: str | None = None, host: str | None = None
) -> list[dict[str, Any]]:
    """How many URLs of a ``--status`` per reason group (the reason before its first ':'),
    most frequent first, with one full reason of the group as an example."""
    if status == REJECTED:
        condition, params = _filters(host, reason)
        matching = f"SELECT reason FROM rejected WHERE {condition}"
    else:
        condition, params = _filters(host, reason, reason_column="why")
        matching = f"SELECT why AS reason FROM ({_matching(status, condition)}) AS matching"
    rows = md._scan(
        f"SELECT {GROUP_SQL} AS grp, count(*) AS n, max(reason) FROM ({matching}) AS reasons "
        "GROUP BY grp ORDER BY n DESC, grp",
        params,
    )
    return [{"reason": grp, "count": n, "example": example} for grp, n, example in rows]


# ---------------------------------------------------------------------- hosts

HOST_STATS_COLUMNS = (
    "delay",
    "queued",
    "in_flight",
    "backoff",
    "robots",
    "robots_note",
    "robots_age",
    "crawl_delay",
    "scouted",
    "budget",
)
"""The crawler's per-host facts (:meth:`xyleme.crawler.Crawler.host_snapshot`'s keys)."""


def write_host_stats(
    md: Metadata, hosts: Iterable[Mapping[str, Any]], at: float, written: float | None = None
) -> int:
    """Store the crawler's per-host snapshot taken at simulated time ``at`` (real time
    ``written``, now by default) in one transaction; returns the rows written. A host's
    ``fetches`` (``{status: count}`` since the previous snapshot) are added to its stored
    counts (``host_fetches``), so they add up over checkpoints and restarts."""
    written = time.time() if written is None else written
    hosts = list(hosts)
    names = ("host", "written", "at", *HOST_STATS_COLUMNS)
    rows = [
        (facts["host"], written, at, *(facts.get(n) for n in HOST_STATS_COLUMNS)) for facts in hosts
    ]
    counts = [
        (facts["host"], int(status), count)
        for facts in hosts
        for status, count in (facts.get("fetches") or {}).items()
    ]
    updates = ", ".join(f"{name} = excluded.{name}" for name in names[1:])
    with md._write() as conn:
        conn.executemany(
            f"INSERT INTO host_stats({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
            f"ON CONFLICT(host) DO UPDATE SET {updates}",
            rows,
        )
        conn.executemany(
            "INSERT INTO host_fetches(host, status, fetches) VALUES (?, ?, ?) "
            "ON CONFLICT(host, status) DO UPDATE "
            "SET fetches = host_fetches.fetches + excluded.fetches",
            counts,
        )
    return len(rows)


def host_fetches(md: Metadata, host: str | None = None) -> dict[str, dict[int, int]]:
    """Every fetch counted for each host (or ``host``), by status, over every run."""
    condition, params = _filters(host, url_column="host")
    counts: dict[str, dict[int, int]] = {}
    for key, status, fetches in md._scan(
        f"SELECT host, status, fetches FROM host_fetches WHERE {condition}", params
    ):
        counts.setdefault(key, {})[status] = fetches
    return counts


NETWORK_CODES = frozenset({-1, -2, -3, -4})
"""Crawl-log codes of a fetch that got no answer at all: DNS, connection, broken, timeout."""
ANSWER_CLASSES = {
    "status_2xx": lambda status: 200 <= status <= 299,
    "status_3xx": lambda status: 300 <= status <= 399,
    "status_4xx": lambda status: 400 <= status <= 499,
    "status_5xx": lambda status: 500 <= status <= 599,
    "network_errors": lambda status: status in NETWORK_CODES,
}
"""The report's fetch counts: each sums the statuses its test admits."""


def host_stats(md: Metadata, host: str | None = None) -> dict[str, dict[str, Any]]:
    """The crawler's last snapshot of each host (or of ``host``), by host key."""
    condition, params = _filters(host, url_column="host")
    names = ("host", "written", "at", *HOST_STATS_COLUMNS)
    rows = md._scan(f"SELECT {', '.join(names)} FROM host_stats WHERE {condition}", params)
    return {row[0]: dict(zip(names, row, strict=True)) for row in rows}


# Counts as "count(*) FILTER (WHERE ...)" and subqueries named: the SQL both engines take.
_HOST_FIGURES = f"""
SELECT host, count(*), count(*) FILTER (WHERE type IN {_READ_TYPES}),
  count(*) FILTER (WHERE type = 'UNKNOWN' AND last_access IS NULL),
  coalesce(sum(CASE WHEN type IN {_READ_TYPES} THEN size END), 0),
  count(*) FILTER (WHERE type IN ('ERROR', 'DEAD') AND reason LIKE 'robots.txt%'),
  count(*) FILTER (WHERE type = 'ERROR'), count(*) FILTER (WHERE type = 'DEAD'),
  max(last_access)
FROM (SELECT {HOST_SQL} AS host, * FROM pages) AS hosted WHERE {{condition}} GROUP BY host
"""
_HOST_FIGURE_NAMES = [
    "host",
    "pages",
    "read",
    "unread",
    "bytes",
    "robots_refused",
    "errors",
    "dead",
    "last_fetch",
]
_LAST_ERROR_NAMES = ["last_error", "last_error_status", "last_error_url", "last_error_at"]
HOST_FIELDS = (
    *_HOST_FIGURE_NAMES[:5],
    *ANSWER_CLASSES,
    *_HOST_FIGURE_NAMES[5:],
    *_LAST_ERROR_NAMES,
    *HOST_STATS_COLUMNS,
    "stats_at",
    "stats_written",
)
"""The fields of a host's report, in order (``xyleme hosts --json``, ``/api/hosts``)."""
# Each host's latest failed page: the first of its failures by last access, newest first.
_LAST_ERRORS = f"""
SELECT host, url, status, reason, last_access FROM (
  SELECT host, url, status, reason, last_access,
    row_number() OVER (PARTITION BY host ORDER BY last_access DESC NULLS LAST, id DESC) AS nth
  FROM (SELECT {HOST_SQL} AS host, * FROM pages) AS hosted
  WHERE type IN ('ERROR', 'DEAD') AND {{condition}}) AS failures
WHERE nth = 1
"""


def host_report(md: Metadata, host: str | None = None) -> list[dict[str, Any]]:
    """Per host: pages known, read, unread, bytes of the last reads, the fetches by answer
    class over every run as of the last checkpoint (network: no answer at all), robots.txt
    refusals, errors, dead pages, the last error, and the crawler's snapshot
    (``stats_written`` real time, None when the crawler never reported the host). Sorted by
    pages known, most first."""
    condition, params = _filters(host)
    hosts: dict[str, dict[str, Any]] = {}
    for row in md._scan(_HOST_FIGURES.format(condition=condition), params):
        hosts[row[0]] = dict(zip(_HOST_FIGURE_NAMES, row, strict=True))
    for key, url, status, reason, at in md._scan(_LAST_ERRORS.format(condition=condition), params):
        hosts[key].update(zip(_LAST_ERROR_NAMES, (reason, status, url, at), strict=True))
    for key, facts in host_stats(md, host).items():
        _known(hosts, key).update(
            {name: facts[name] for name in HOST_STATS_COLUMNS},
            stats_written=facts["written"],
            stats_at=facts["at"],
        )
    counts = host_fetches(md, host)
    for key in counts.keys() - hosts.keys():
        _known(hosts, key)
    for key, facts in hosts.items():
        statuses = counts.get(key, {})
        for name, admits in ANSWER_CLASSES.items():
            facts[name] = sum(n for status, n in statuses.items() if admits(status))
    report = [{name: facts.get(name) for name in HOST_FIELDS} for facts in hosts.values()]
    report.sort(key=lambda facts: (-facts["pages"], facts["host"]))
    return report


def _known(hosts: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
    """The report's entry of a host, made with zero page figures if no page names it."""
    if key not in hosts:
        hosts[key] = {name: 0 for name in _HOST_FIGURE_NAMES[1:-1]}
        hosts[key].update(host=key, last_fetch=None)
    return hosts[key]
