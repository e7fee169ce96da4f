"""Safe XML parsing with lxml: whole-tree for small documents, streamed for large ones.

Both paths use the same hardened parser settings (:func:`safe_parser`): no network, no local
files (every external load goes to :class:`loader.dependencies.CacheResolver`), no "huge"
mode (libxml2 then caps text nodes, depth and entity amplification itself), plus the loader's
own configurable depth and entity limits. A tree-parsed document with a DOCTYPE is validated
while it is parsed; one that is well-formed but invalid is parsed again without validation,
so it is stored with its validity errors rather than refused. One whose DTD or entities
cannot be had (the resolver says *unavailable*) is parsed for well-formedness alone: the
references to entities its missing DTD would declare are kept as they are (XML 1.0 §4.1:
with an external subset not read, an undeclared entity is no well-formedness error), and
its DTD check is ``not validated`` with the reason.
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from lxml import etree

from loader.dependencies import CacheResolver
from loader.dtdreuse import candidate, parse_reusing
from loader.dtds import check_entities, declares_grammar, dtds_of
from loader.encoding import EncodingChoice, choose_encoding
from loader.errors import (
    DocumentRejected,
    DocumentTooDeep,
    EncodingProblem,
    EntityExpansionRefused,
    MalformedDocument,
)
from loader.links import LinkCollector, absolute_http_url
from loader.parselock import PARSE_LOCK
from loader.records import Check
from loader.settings import LIBXML2_MAX_DEPTH, LoaderSettings

_DOCTYPE_WINDOW = 1 << 20
_VALIDITY_DOMAINS = frozenset({"VALID", "DTD"})
_ENCODING_ERRORS = frozenset(
    {"ERR_UNSUPPORTED_ENCODING", "ERR_INVALID_ENCODING", "ERR_INVALID_CHAR", "ERR_UNKNOWN_ENCODING"}
)
_DOCTYPE_SYSTEM_ID = re.compile(
    rb"<!DOCTYPE\s+[^\s\[>]+\s+(?:SYSTEM|PUBLIC\s+(?:\"[^\"]*\"|'[^']*'))\s+([\"'])(.*?)\1", re.S
)
_INTERNAL_SUBSET = re.compile(rb"<!DOCTYPE[^\[>]*\[")
_POSITION_SUFFIX = re.compile(r", line \d+, column \d+$")
_UNDECLARED_ENTITY = frozenset({"WAR_UNDECLARED_ENTITY", "ERR_UNDECLARED_ENTITY"})
_UNDECLARED_ENTITY_CODES = frozenset(getattr(etree.ErrorTypes, name) for name in _UNDECLARED_ENTITY)
Result = TypeVar("Result")


@dataclass
class ParsedDocument:
    """What parsing found. ``missing`` non-empty means: park until those URLs are cached."""

    tree: etree._ElementTree | None
    collector: LinkCollector | None
    dtd: Check = Check.NONE
    dtd_errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    doctype_url: str | None = None
    streamed: bool = False
    reason: str | None = None  # why the DTD check is NOT_VALIDATED


def unavailable_reason(unavailable: dict[str, str]) -> str:
    """What could not be had, and why, in one line (the validity's reason).

    >>> unavailable_reason({"http://w3.test/x.dtd": "outside the crawl scope"})
    'http://w3.test/x.dtd not available: outside the crawl scope'
    """
    return "; ".join(f"{url} not available: {why}" for url, why in unavailable.items())


def safe_parser(
    resolver: CacheResolver,
    *,
    validate: bool = False,
    encoding: str | None = None,
    pull_base_url: str | None = None,
    entities: bool = True,
) -> etree.XMLParser:
    """An lxml parser that can only load external resources through ``resolver``.

    With ``pull_base_url`` it is a new ``XMLPullParser`` (fed in chunks, events
    start/end/pi); otherwise the resolver's parser for these options, built once. A parser
    serves one parse at a time: a resolver belongs to one thread. ``entities=False`` keeps
    entity references unexpanded (for a document whose DTD could not be had).
    """
    if pull_base_url is None:
        key = (validate, encoding, entities)
        parser = resolver.parsers.get(key)
        if parser is None:
            parser = resolver.parsers[key] = _new_parser(resolver, *key, None)
        return parser
    return _new_parser(resolver, validate, encoding, entities, pull_base_url)


def _new_parser(
    resolver: CacheResolver,
    validate: bool,
    encoding: str | None,
    entities: bool,
    pull_base_url: str | None,
) -> etree.XMLParser:
    options = {
        "encoding": encoding,
        "no_network": True,
        "load_dtd": True,
        "resolve_entities": entities,
        "dtd_validation": validate,
        "huge_tree": False,
        "remove_blank_text": False,
    }
    if pull_base_url is not None:
        parser = etree.XMLPullParser(
            events=("start", "end", "pi"), base_url=pull_base_url, **options
        )
    else:
        parser = etree.XMLParser(**options)
    parser.resolvers.add(resolver)
    return parser


def describe(entry: etree._LogEntry) -> str:
    """One libxml2 error as a reason naming its line and column."""
    return f"{entry.message.strip()} (line {entry.line}, column {entry.column})"


def rejection(error: etree.XMLSyntaxError, log: etree._ListErrorLog) -> DocumentRejected:
    """The named loader error for a libxml2 parse failure, with its line and column.

    ``log`` is the failing parser's own error log (the exception's log may also hold
    entries of earlier parses in the same thread).
    """
    entries = [e for e in log if e.level >= etree.ErrorLevels.ERROR]
    entry = next((e for e in entries if e.domain_name not in _VALIDITY_DOMAINS), None)
    if entry is None:  # a pull parser keeps no log: the exception's message is all there is
        line, column = error.position if error.position else (None, None)
        return MalformedDocument(_POSITION_SUFFIX.sub("", str(error.msg)), line, column)
    message, line, column = entry.message.strip(), entry.line, entry.column
    if "amplification" in message or "entity reference loop" in message.lower():
        return EntityExpansionRefused(f"entity expansion refused: {message}", line, column)
    if "Excessive depth" in message:
        return DocumentTooDeep(f"elements nested deeper than {LIBXML2_MAX_DEPTH}", line, column)
    if entry.type_name in _ENCODING_ERRORS or entry.domain_name in ("I18N", "IO"):
        return EncodingProblem(f"encoding error: {message}", line, column)
    return MalformedDocument(message, line, column)


def _mentions_doctype(head: bytes, choice: EncodingChoice) -> bool:
    """Whether the document's first megabyte holds a DOCTYPE (then it is validated)."""
    wide = choice.forced if choice.forced else None
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        wide = "utf-16"
    elif head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        wide = "utf-32"
    if wide and codecs.lookup(wide).name.startswith(("utf-16", "utf-32")):
        return "<!DOCTYPE" in head[:_DOCTYPE_WINDOW].decode(wide, errors="ignore")
    return head.find(b"<!DOCTYPE", 0, _DOCTYPE_WINDOW) != -1  # no copy of the body


def _parse_with_validation(
    make_parser: Callable[[bool, bool], etree.XMLParser],
    run: Callable[[etree.XMLParser], Result],
    validate: bool,
    resolver: CacheResolver,
    settings: LoaderSettings,
) -> tuple[Result | None, list[str]]:
    """Parse with ``run(make_parser(validate, True))``; on validity errors alone, or when a
    dependency cannot be had, without validation; when that DTD would have declared the
    entities the document uses, without expanding entities.

    Returns the result (None when dependencies are missing) and the first validity errors.
    """
    parser: etree.XMLParser

    def parse(with_validation: bool, entities: bool) -> Result:
        nonlocal parser
        parser = make_parser(with_validation, entities)
        return run(parser)

    try:
        return parse(validate, True), []
    except etree.XMLSyntaxError as error:
        if resolver.missing:
            return None, []
        problems = [e for e in parser.error_log if e.level >= etree.ErrorLevels.ERROR]
        validity = [e for e in problems if e.domain_name in _VALIDITY_DOMAINS]
        if validate and validity and len(validity) == len(problems):
            errors = [describe(e) for e in validity[: settings.max_validation_errors]]
        elif resolver.unavailable:
            errors = []
        else:
            raise rejection(error, parser.error_log) from None
    try:
        return parse(False, True), errors
    except etree.XMLSyntaxError as error:
        if resolver.missing:
            return None, []
        if not (resolver.unavailable and _only_undeclared_entities(parser.error_log, error)):
            raise rejection(error, parser.error_log) from None
    try:
        return parse(False, False), errors
    except etree.XMLSyntaxError as error:
        raise rejection(error, parser.error_log) from None


def _only_undeclared_entities(log: etree._ListErrorLog, error: etree.XMLSyntaxError) -> bool:
    """Whether a parse failed on undeclared entities alone (a pull parser keeps no log:
    then its first error, where it stopped, is all there is)."""
    problems = [e for e in log if e.level >= etree.ErrorLevels.ERROR]
    if not problems:
        return error.code in _UNDECLARED_ENTITY_CODES
    return all(e.type_name in _UNDECLARED_ENTITY for e in problems)


@functools.lru_cache(maxsize=8)
def _too_deep_test(max_depth: int) -> etree.XPath:
    """XPath that is true when an element sits deeper than ``max_depth``."""
    return etree.XPath(f"boolean(/{'*/' * max_depth}*)")


def _external_key(tree: etree._ElementTree, url: str, resolver: CacheResolver) -> tuple | None:
    """What identifies the external DTD a document was parsed with, for
    :class:`loader.dtds.DtdFacts`: its identifiers and what the resolver served for it.
    None when there is none."""
    docinfo = tree.docinfo
    system = docinfo.system_url
    if not system:
        return None
    return (docinfo.public_id, absolute_http_url(url, system) or system, resolver.served())


def _dtd_check(grammar: bool, validated: bool, errors: list[str]) -> Check:
    if not validated or not grammar:
        return Check.NONE
    return Check.INVALID if errors else Check.VALID


def _waiting(resolver: CacheResolver, url: str, head: bytes) -> ParsedDocument:
    """The result of a parse that found dependencies missing (the document will wait)."""
    found = _DOCTYPE_SYSTEM_ID.search(head, 0, _DOCTYPE_WINDOW)
    doctype_url = (
        absolute_http_url(url, found.group(2).decode("ascii", "replace")) if found else None
    )
    return ParsedDocument(None, None, missing=list(resolver.missing), doctype_url=doctype_url)


def parse_tree(
    body: bytes,
    url: str,
    content_type: str | None,
    settings: LoaderSettings,
    resolver: CacheResolver,
) -> ParsedDocument:
    """Parse a document held in memory into a tree, validate it and collect its links."""
    choice = choose_encoding(body[:4], content_type)
    validate = _mentions_doctype(body, choice)

    def make_parser(with_validation: bool, entities: bool) -> etree.XMLParser:
        return safe_parser(
            resolver, validate=with_validation, encoding=choice.forced, entities=entities
        )

    def run(parser: etree.XMLParser) -> etree._Element:
        with PARSE_LOCK:  # libxml2's entity loader is the process's (loader.parselock)
            return etree.fromstring(body, parser, base_url=url)

    internal_subset = _INTERNAL_SUBSET.search(body, 0, _DOCTYPE_WINDOW) is not None
    reusable = candidate(body, url, choice.forced) if validate else None
    reused = None
    if reusable is not None:
        reused = parse_reusing(body, url, reusable, resolver, lambda: make_parser(False, True))
    if reused is not None:
        root, entry = reused
        errors: list[str] = []
        tree = root.getroottree()
        key = ("reused", *entry.key)
        grammar = resolver.dtd_facts.check_with(
            tree, entry.facts, key, settings, internal_subset=internal_subset
        )
    else:
        root, errors = _parse_with_validation(make_parser, run, validate, resolver, settings)
        if root is None or resolver.missing:
            return _waiting(resolver, url, body)
        tree = root.getroottree()
        grammar = resolver.dtd_facts.check(
            tree, _external_key(tree, url, resolver), settings, internal_subset=internal_subset
        )
    if settings.max_depth < LIBXML2_MAX_DEPTH and _too_deep_test(settings.max_depth)(tree):
        raise DocumentTooDeep(f"elements nested deeper than {settings.max_depth}")
    collector = LinkCollector(url, settings, in_document_order=True)
    collector.tree(root)
    parsed = _finish(tree, collector, validate, errors, resolver, grammar)
    if reused is None and reusable is not None and parsed.dtd is Check.VALID:
        resolver.dtd_reuse.learn(tree, url, resolver)  # later documents skip the DTD's parse
    return parsed


def _finish(
    tree: etree._ElementTree,
    collector: LinkCollector,
    validated: bool,
    errors: list[str],
    resolver: CacheResolver,
    grammar: bool,
) -> ParsedDocument:
    doctype_url = tree.docinfo.system_url
    base = tree.docinfo.URL or collector.document_url
    dtd_url = absolute_http_url(base, doctype_url) if doctype_url else None
    if dtd_url not in resolver.catalogued:  # a catalogued DTD is never fetched
        collector.dependency(dtd_url)
    for used in resolver.used:
        collector.dependency(used)
    for reference in resolver.unavailable:  # so its arrival, if ever, revalidates
        if reference.startswith(("http://", "https://")):
            collector.dependency(reference)
    if resolver.unavailable:
        return ParsedDocument(
            tree,
            collector,
            dtd=Check.NOT_VALIDATED,
            doctype_url=dtd_url,
            reason=unavailable_reason(resolver.unavailable),
        )
    check = _dtd_check(grammar, validated, errors)
    return ParsedDocument(
        tree,
        collector,
        dtd=check,
        dtd_errors=errors if check is Check.INVALID else [],
        doctype_url=dtd_url,
    )


def parse_stream(
    path: Path,
    url: str,
    content_type: str | None,
    settings: LoaderSettings,
    resolver: CacheResolver,
) -> ParsedDocument:
    """Parse a large document from a file in chunks, freeing each element once processed.

    Memory stays bounded by the chunk size and the deepest open element path, whatever the
    document's size. The returned ``tree`` holds only the (emptied) root: the document itself
    is read back from the repository when a query needs it.

    The DTD is loaded (entities, defaults) but not validated against: libxml2 checks an
    element's content model on the children still in the tree when the element ends, and
    the streaming frees them (keeping them would make memory grow with the document). A
    streamed document whose DTD declares a grammar is recorded as "not validated: streamed"
    (:attr:`Check.STREAMED`), and noted.
    """
    with open(path, "rb") as handle:
        head = handle.read(4)
    choice = choose_encoding(head, content_type)

    def make_parser(with_validation: bool, entities: bool) -> etree.XMLParser:
        return safe_parser(
            resolver,
            validate=with_validation,
            encoding=choice.forced,
            pull_base_url=url,
            entities=entities,
        )

    def run(parser: etree.XMLParser) -> tuple[etree._ElementTree, LinkCollector]:
        collector = LinkCollector(url, settings)
        state = _StreamState(collector, settings)
        fed = 0
        with open(path, "rb") as handle:
            while chunk := handle.read(settings.stream_chunk_bytes):
                with PARSE_LOCK:  # per call: each feed sets and puts back the entity loader
                    parser.feed(chunk)
                fed += len(chunk)
                if fed > settings.sitemap_max_bytes:
                    collector.close_sitemap(
                        f"sitemap capped at its first {settings.sitemap_max_bytes} bytes"
                    )
                state.consume(parser.read_events())
        with PARSE_LOCK:
            root = parser.close()
        state.consume(parser.read_events())
        return root.getroottree(), collector

    result, _ = _parse_with_validation(make_parser, run, False, resolver, settings)
    if result is None or resolver.missing:
        with open(path, "rb") as handle:
            return _waiting(resolver, url, handle.read(_DOCTYPE_WINDOW))
    tree, collector = result
    if tree.docinfo.doctype:
        collector.notes.append("DTD not checked on a streamed document")
    parsed = _finish(tree, collector, False, [], resolver, False)
    parsed.streamed = True
    if parsed.dtd is not Check.NOT_VALIDATED and declares_grammar(dtds_of(tree)):
        parsed.dtd = Check.STREAMED
    return parsed


class _StreamState:
    """Follows a pull parser's events: depth, entity check, links, freeing finished elements."""

    def __init__(self, collector: LinkCollector, settings: LoaderSettings) -> None:
        self.collector = collector
        self.settings = settings
        self.depth = 0
        self.started = False

    def consume(self, events: Iterable[tuple[str, etree._Element]]) -> None:
        collector = self.collector
        for event, node in events:
            if event == "start":
                self.depth += 1
                if self.depth > self.settings.max_depth:
                    raise DocumentTooDeep(
                        f"elements nested deeper than {self.settings.max_depth}",
                        node.sourceline,
                    )
                if not self.started:
                    self.started = True
                    check_entities(dtds_of(node.getroottree()), self.settings)
                    collector.root(node)
            elif event == "end":
                self.depth -= 1
                collector.node(node)
                node.clear()
                parent = node.getparent()
                if parent is not None:
                    while node.getprevious() is not None:
                        del parent[0]
            else:
                collector.node(node)
