"""The loader: from a fetched body to a stored, validated, linked version (paper §2–3).

For every XML page the crawler hands over (:class:`loader.interfaces.DocumentSink`):

1. refuse it if it is too large; skip it if its MD5 equals the latest stored version's;
2. parse it safely (whole tree, or streamed when large), validating it against its DTD;
3. if a DTD, external entity or schema is not in the dependency cache, park the body,
   record the wait in Status-Data and ask the crawler for what is missing (priority 0);
4. otherwise validate against the schemas it names, store the version with its validity,
   and send its links (children) and dependencies to the metadata manager.

The loader types a page ERROR when it refuses it, DTD when it is a dependency, and XML when
it loads it for the first time or after a failure (a page already LOADED was typed XML then,
and the crawler's fetch records keep it so): one Status-Data read spares a write per refresh.

A refusal (not well-formed, or past a limit) becomes data: the page is typed ERROR with a
reason naming the line and column, its status is FAILED, and the previous good version stays.
A document whose DTD, entities or schema cannot be had (off-scope, 404, robots.txt, timeout,
too large) is stored ``not validated`` with the reason, links and all (issue 16). A body the
loader asked for (or already caches) is a dependency: cached, typed DTD, and the documents
waiting on it are loaded again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from loader.admission import LinkAdmission
from loader.batch import BatchReads, DocumentState, PendingWrites
from loader.bodies import content_type_of, is_dependency_type, md5_of
from loader.catalog import Catalog, system_catalog_files
from loader.dependencies import CacheResolver, DependencyCache, http_scope
from loader.dtdreuse import DtdReuse
from loader.dtds import DtdFacts
from loader.errors import DependencyFailed, DocumentRejected, DocumentTooLarge
from loader.interfaces import Body, DependencyFetcher, FetchedBody, MetadataPort
from loader.parking import ParkingLot
from loader.parsing import ParsedDocument, parse_stream, parse_tree
from loader.records import Check, LoadOutcome, LoadResult, Validity
from loader.revalidation import revalidate
from loader.schemas import SchemaCheck, SchemaCompiler, check_schema
from loader.settings import LoaderSettings
from metadata import Clock, LoadStatus, NewVersion, PageType, VersionStore

_REMEMBERED_DEPENDENCY_IDS = 4096


class Loader:
    """Loads XML documents into the repository; implements ``DocumentSink``.

    Parameters
    ----------
    folder
        The repository's ``documents/`` folder.
    metadata
        The metadata manager (or anything with the :class:`MetadataPort` methods).
    fetcher
        How DTDs, entities and schemas are asked of the crawler.
    clock
        Simulated time, for the dependency timeout.
    settings
        Limits and choices; the defaults are safe.
    in_scope
        The crawl scope: dependencies outside it are never asked for (the documents that
        need them are stored ``not validated``).
    link_refusal
        Why the crawl refuses a canonical link (scope, trap guards, deny list), or None: a
        refused link is recorded as rejected, not stored as a child (``loader.admission``).

    Raises :class:`loader.catalog.CatalogError` when a catalog of ``settings.catalog_files``
    cannot be read.
    """

    def __init__(
        self,
        folder: Path,
        metadata: MetadataPort,
        fetcher: DependencyFetcher,
        clock: Clock,
        settings: LoaderSettings | None = None,
        in_scope: Callable[[str], bool] = http_scope,
        link_refusal: Callable[[str], str | None] | None = None,
    ) -> None:
        self.settings = settings or LoaderSettings()
        self.metadata = metadata
        self.fetcher = fetcher
        self.clock = clock
        self.in_scope = in_scope
        self._admission = LinkAdmission(link_refusal)
        folder = Path(folder)
        self.repository = VersionStore(
            folder,
            self.settings.versions_kept,
            file_threshold_bytes=self.settings.stream_threshold_bytes,
            compress=self.settings.compress_versions,
        )
        self.cache = DependencyCache(
            folder / "dependencies", clock.now, self.settings.dependency_timeout_seconds
        )
        self.catalog = Catalog(
            system_catalog_files() if self.settings.system_catalog else (),
            required=self.settings.catalog_files,
        )
        self.parking = ParkingLot(folder / "pending")
        self._dependency_ids: dict[str, int] = {}
        self._thread = threading.local()  # each worker thread's open batch
        self._dtd_facts = DtdFacts()  # shared by the threads' resolvers: one read per DTD
        self.dtd_reuse = DtdReuse()  # likewise: each external DTD parsed once, then kept

    def close(self) -> None:
        """Close the repository's change log (the loader can still be used afterwards)."""
        self.repository.close()

    def resolver(self) -> CacheResolver:
        """This thread's resolver, reset (it records what one parse found missing, and
        keeps the thread's parsers)."""
        resolver = getattr(self._thread, "resolver", None)
        if resolver is None:
            shared = (self.catalog, self._dtd_facts, self.dtd_reuse)
            resolver = self._thread.resolver = CacheResolver(
                self.cache, self._dependency_id, self.in_scope, *shared
            )
        resolver.reset()
        return resolver

    def _dependency_id(self, url: str) -> int | None:
        """A dependency's URL-Id, remembered (URL-Ids never change; DTDs are shared)."""
        url_id = self._dependency_ids.get(url)
        if url_id is None:
            url_id = self.metadata.id_for(url, create=False)
            if url_id is not None:
                if len(self._dependency_ids) >= _REMEMBERED_DEPENDENCY_IDS:
                    self._dependency_ids.clear()
                self._dependency_ids[url] = url_id
        return url_id

    # -- DocumentSink -------------------------------------------------------------------

    def load(
        self,
        url_id: int,
        url: str,
        body: Body,
        headers: Mapping[str, str],
        fetched_at: float,
        md5: str | None = None,
    ) -> LoadResult:
        """Load one fetched body: a document, or a dependency the loader asked for.
        ``md5`` is the body's when the caller computed it (else the loader does)."""
        return self.load_many([FetchedBody(url_id, url, body, headers, fetched_at, md5)])[0]

    def load_many(self, fetched: Iterable[FetchedBody]) -> list[LoadResult]:
        """Load a batch of :class:`~loader.interfaces.FetchedBody`, as :meth:`load`
        does each, with the batch's writes made together at its end: the metadata writes
        (children, type, status) in one transaction, then the versions in one of the
        repository. A refusal, a parked document or a dependency writes what is pending
        first, then its own writes at once; the results are those :meth:`load` would give.
        """
        fetched = list(fetched)
        with self._batch() as pending:
            pending.reads.expect(item[0] for item in fetched)
            results = [self._load_one(FetchedBody(*item)) for item in fetched]
        # Documents a dependency let load were stored in this batch: their link counts are
        # known only now that it is written.
        return [
            pending.finished(replace(result, retried=tuple(map(pending.finished, result.retried))))
            for result in results
        ]

    @contextmanager
    def _batch(self) -> Iterator[PendingWrites]:
        """This thread's batch (a new one, flushed at the end, unless one is open)."""
        pending = getattr(self._thread, "pending", None)
        if pending is not None:
            yield pending
            return
        pending = PendingWrites(BatchReads(self._read_states), self._admission)
        self._thread.pending = pending
        try:
            yield pending
        finally:
            self._thread.pending = None
            pending.flush(self.metadata, self.repository)

    def _flush(self) -> None:
        """Make this thread's pending writes now (before a write that must follow them)."""
        pending = getattr(self._thread, "pending", None)
        if pending is not None:
            pending.flush(self.metadata, self.repository)
            pending.reads.stale()

    def _state(self, url_id: int) -> DocumentState:
        """What is known of a page about to be loaded (its pending writes made first: its
        latest version and status are read as the batch left them)."""
        pending = self._thread.pending
        if pending.holds(url_id):
            self._flush()
        return pending.reads.take(url_id)

    def _read_states(self, url_ids: list[int]) -> dict[int, DocumentState]:
        """What the loader needs to know of these pages before loading them (three queries)."""
        latest = self.repository.latest_many(url_ids)
        statuses = self.metadata.statuses(url_ids)
        awaited = self.metadata.awaited(url_ids)
        return {
            url_id: DocumentState(latest.get(url_id), statuses.get(url_id), url_id in awaited)
            for url_id in url_ids
        }

    def _load_one(self, fetched: FetchedBody) -> LoadResult:
        url_id, url, body, headers, fetched_at, md5 = fetched
        if not isinstance(body, bytes):
            body = Path(body)
        state = self._state(url_id)
        content_type = content_type_of(headers)
        # A DTD or entity: asked for, already cached, or typed so by its server or suffix (a
        # schema the loader did not ask for is an XML document like any other).
        if url_id in self.cache or state.awaited or is_dependency_type(url, content_type):
            return self.dependency_arrived(url_id, url, body, fetched_at)
        return self._load_document(url_id, url, body, content_type, fetched_at, state, md5)

    def dependency_failed(self, url_id: int, url: str, reason: str) -> list[LoadResult]:
        """A dependency the crawler could not fetch (``reason``: HTTP 404, robots.txt,
        timeout, too large, off-scope...): remember why, and load its waiting documents
        without it (``not validated``). A dependency already cached keeps its body."""
        self._flush()
        if self.cache.get(url_id) is None:
            self.cache.fail(url_id, url, reason, self.clock.now())
        return self._retry_waiters(self.metadata.waiting_on(url_id), f"{url}: {reason}")

    def _retry_waiters(
        self, waiters: list[int], why: str, give_up: bool = False
    ) -> list[LoadResult]:
        """Load waiting documents again (one may still wait for another dependency); one
        not parked here fails, as does one still waiting when ``give_up``."""
        results = []
        for waiter in waiters:
            result = self.retry(waiter)
            if result is None or (give_up and result.outcome is LoadOutcome.WAITING):
                result = self._fail(waiter, DependencyFailed(f"dependency {why}"))
            results.append(result)
        return results

    # -- waiting documents --------------------------------------------------------------

    def expire_waiting(self) -> list[LoadResult]:
        """Load without their dependencies the parked documents that waited longer than the
        dependency timeout (what they waited for is remembered as unavailable)."""
        timeout = self.settings.dependency_timeout_seconds
        now = self.clock.now()
        results = []
        for parked in self.parking:
            if now - parked.parked_at <= timeout:
                continue
            reason = f"not fetched within {timeout:g} s"
            for url in parked.waiting_for:
                dependency_id = self._dependency_id(url)
                if dependency_id is not None and self.cache.get(dependency_id) is None:
                    self.cache.fail(dependency_id, url, reason, now)
            waited = ", ".join(parked.waiting_for)
            results += self._retry_waiters([parked.url_id], f"{waited}: {reason}", True)
        return results

    def retry(self, url_id: int) -> LoadResult | None:
        """Load a parked document again (its dependencies may have arrived)."""
        parked = self.parking.get(url_id)
        if parked is None:
            return None
        with self._batch() as pending:
            result = self._load_document(
                url_id,
                parked.url,
                parked.body_path,
                parked.content_type,
                parked.fetched_at,
                md5=parked.md5,
            )
        return pending.finished(result)

    # -- internals ----------------------------------------------------------------------

    def dependency_arrived(
        self, url_id: int, url: str, body: Body, fetched_at: float
    ) -> LoadResult:
        """A dependency the loader asked for was fetched: cache it, check again the stored
        documents that use it if it changed, and load the documents waiting on it."""
        self._flush()  # documents loaded earlier in the batch keep their order
        size = len(body) if isinstance(body, bytes) else Path(body).stat().st_size
        if size > self.settings.max_document_bytes:
            reason = (
                f"too large ({size} bytes, over the limit of {self.settings.max_document_bytes})"
            )
            waiters = self.dependency_failed(url_id, url, reason)
            self.metadata.set_type(url_id, PageType.ERROR, reason)
            return LoadResult(
                url_id,
                LoadOutcome.FAILED,
                reason=reason,
                notes=self._describe(waiters),
                retried=tuple(waiters),
            )
        data = body if isinstance(body, bytes) else Path(body).read_bytes()
        earlier = self.cache.md5(url_id) or self.cache.failure(url_id)
        md5 = self.cache.put(url_id, url, data, fetched_at)
        self.metadata.set_type(url_id, PageType.DTD)
        revalidated = (
            revalidate(url_id, self.repository, self.metadata, self.settings, self._recheck)
            if earlier not in (None, md5)
            else []
        )
        retried = [self.retry(waiter) for waiter in self.metadata.waiting_on(url_id)]
        retried = [result for result in retried if result is not None]
        notes = (*revalidated, *self._describe(retried))
        return LoadResult(
            url_id, LoadOutcome.DEPENDENCY, md5=md5, notes=notes, retried=tuple(retried)
        )

    def _recheck(self, body: bytes, url: str) -> Validity | tuple[str, ...]:
        """A stored version's validity now, or the dependencies it needs first
        (:func:`~loader.revalidation.revalidate`'s check)."""
        parsed = parse_tree(body, url, None, self.settings, self.resolver())
        schema = SchemaCheck() if parsed.missing else self._check_schema(parsed)
        missing = parsed.missing or schema.missing
        return tuple(missing) if missing else self._validity(parsed, schema)

    def _validity(self, parsed: ParsedDocument, schema: SchemaCheck) -> Validity:
        """A parsed document's validity: its DTD check, then its schema check."""
        errors = (*parsed.dtd_errors, *schema.errors)[: self.settings.max_validation_errors]
        reason = "; ".join(r for r in (parsed.reason, schema.reason) if r) or None
        return Validity(parsed.dtd, schema.check, errors, reason)

    def _describe(self, results: list[LoadResult]) -> tuple[str, ...]:
        """One note per document a dependency's arrival (or failure) decided."""
        return tuple(
            f"{self.metadata.url_of(r.url_id)}: {r.outcome.value}"
            + (f" ({r.reason})" if r.reason else "")
            for r in results
        )

    def _load_document(
        self,
        url_id: int,
        url: str,
        body: Body,
        content_type: str | None,
        fetched_at: float,
        state: DocumentState | None = None,
        md5: str | None = None,
    ) -> LoadResult:
        if state is None:  # a parked document, retried
            state = self._state(url_id)
        try:
            return self._parse_and_store(url_id, url, body, content_type, fetched_at, state, md5)
        except DocumentRejected as rejected:
            return self._fail(url_id, rejected)

    def _parse_and_store(
        self,
        url_id: int,
        url: str,
        body: Body,
        content_type: str | None,
        fetched_at: float,
        state: DocumentState,
        md5: str | None,
    ) -> LoadResult:
        settings = self.settings
        size = len(body) if isinstance(body, bytes) else body.stat().st_size
        if size > settings.max_document_bytes:
            raise DocumentTooLarge(
                f"document of {size} bytes, over the limit of {settings.max_document_bytes}"
            )
        md5 = md5 or md5_of(body)  # the fetch's, when the crawler hashed the body as it read
        latest = state.latest
        if latest is not None and latest.md5 == md5:
            self._unpark(url_id, state)
            self._mark_loaded(url_id, state, f"version {latest.version}, unchanged")
            return LoadResult(url_id, LoadOutcome.UNCHANGED, latest.version, md5, latest.validity)
        resolver = self.resolver()
        if size > settings.stream_threshold_bytes:
            path = self._as_file(url_id, body)
            try:
                parsed = parse_stream(path, url, content_type, settings, resolver)
            finally:
                if path != body:
                    path.unlink()
        else:
            data = body if isinstance(body, bytes) else body.read_bytes()
            parsed = parse_tree(data, url, content_type, settings, resolver)
            body = data  # the crawler may reuse its spooled file once the batch ends
        if parsed.missing or (schema := self._check_schema(parsed)).missing:
            missing = None if parsed.missing else schema.missing
            return self._park(url_id, url, body, content_type, fetched_at, md5, parsed, missing)
        validity = self._validity(parsed, schema)
        notes = (*parsed.collector.notes, *([schema.note] if schema.note else []))
        number = latest.version + 1 if latest is not None else 1
        collector = parsed.collector
        version = NewVersion(url_id, url, body, md5, fetched_at, validity)
        found = (collector.links, collector.dependencies, collector.sitemaps)
        self._thread.pending.add_version(version, *found)
        self._mark_loaded(url_id, state, f"version {number}, {validity.verdict}", always=True)
        if isinstance(body, Path):
            self._flush()  # copy a large body from its file while the file is there
        self._unpark(url_id, state)
        stored = LoadResult(url_id, LoadOutcome.STORED, number, md5, validity, notes=notes)
        return replace(stored, sitemaps=tuple(collector.sitemaps))

    def _as_file(self, url_id: int, body: Body) -> Path:
        """A large body kept in memory is parked on disk first so it can be streamed."""
        if isinstance(body, Path):
            return body
        path = self.parking.folder / f"{url_id}.stream"
        path.write_bytes(body)
        return path

    def _unpark(self, url_id: int, state: DocumentState) -> None:
        """Forget a parked body once its document is loaded (parked here or, as its waiting
        status says, by another process on this repository)."""
        if url_id in self.parking or state.waiting:
            self.parking.remove(url_id)

    def _mark_loaded(
        self, url_id: int, state: DocumentState, detail: str, *, always: bool = False
    ) -> None:
        """Status LOADED, and type XML if the page was not loaded before (first load, or
        back from a failure). An unchanged refresh of a loaded page writes nothing."""
        previous = state.status
        loaded = previous is not None and previous[0] is LoadStatus.LOADED
        pending = self._thread.pending
        if not loaded:
            pending.add_type(url_id, PageType.XML)
        if always or not loaded:
            pending.add_status(url_id, LoadStatus.LOADED, detail)

    def _check_schema(self, parsed: ParsedDocument) -> SchemaCheck:
        """The schema verdict (its ``missing`` lists schemas not yet fetched)."""
        locations = parsed.collector.schema_locations
        if not locations:
            return SchemaCheck()
        if parsed.streamed:
            return SchemaCheck(Check.STREAMED, note="schema not checked on a streamed document")
        compiler = getattr(self._thread, "schemas", None)
        if compiler is None:
            compiler = self._thread.schemas = SchemaCompiler()
        return check_schema(
            parsed.tree,
            locations,
            self.resolver(),
            self.settings.max_validation_errors,
            compiler,
            self.cache.generation,
        )

    def _park(
        self,
        url_id: int,
        url: str,
        body: Body,
        content_type: str | None,
        fetched_at: float,
        md5: str,
        parsed: ParsedDocument,
        missing_schemas: list[str] | None = None,
    ) -> LoadResult:
        """Keep the body, record the wait in Status-Data, ask the crawler for what is missing."""
        self._flush()
        missing = missing_schemas or parsed.missing
        if missing_schemas:
            status = LoadStatus.WAITING_SCHEMA
        elif parsed.doctype_url in missing:
            status = LoadStatus.WAITING_DTD
        else:
            status = LoadStatus.WAITING_ENTITY
        earlier = self.parking.get(url_id)
        already_requested = set(earlier.requested) if earlier else set()
        ids = self.metadata.ids_for(missing, referrer=url_id)
        if None in ids:
            bad = missing[ids.index(None)]
            raise DependencyFailed(f"dependency URL {bad} was refused by the metadata manager")
        now = self.clock.now()
        self.parking.park(url_id, url, body, content_type, fetched_at, now, missing, md5)
        detail = "waiting for " + ", ".join(missing)
        self.metadata.set_status(url_id, status, detail, waiting_for=ids)
        for dependency in missing:
            if dependency not in already_requested:
                self.fetcher.request(dependency, url_id)
        return LoadResult(url_id, LoadOutcome.WAITING, reason=detail, waiting_for=tuple(missing))

    def _fail(self, url_id: int, rejected: DocumentRejected) -> LoadResult:
        """Record a refusal as data; the previous good version stays in the repository."""
        self._flush()
        self.metadata.set_type(url_id, PageType.ERROR, rejected.reason)
        self.metadata.set_status(url_id, LoadStatus.FAILED, rejected.reason)
        self.parking.remove(url_id)
        return LoadResult(url_id, LoadOutcome.FAILED, reason=rejected.reason)
