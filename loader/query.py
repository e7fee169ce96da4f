"""XPath 1.0 queries over the latest version of every stored document.

A query cannot hang the warehouse: :func:`run_query` evaluates it in a child process that is
killed at the time limit (an XPath expression can be cubic in the document's size, and lxml
cannot interrupt one evaluation), and stops at a result cap. The child sends each match as it
is found, so a query stopped at its limit still hands back what it found
(:attr:`QueryTimeout.partial <loader.errors.QueryTimeout>`).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from lxml import etree

from loader.errors import LoaderError, QueryError, QueryTimeout
from loader.reading import Warehouse
from metadata import MetadataError


@dataclass(frozen=True, slots=True)
class QueryMatch:
    """One result: where it was found and its value (an element is serialised)."""

    url_id: int
    url: str
    version: int
    value: str

    def as_dict(self) -> dict:
        return asdict(self)


def parse_namespaces(bindings: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["p=uri", ...]`` as a prefix map.

    >>> parse_namespaces(["a=urn:a"])
    {'a': 'urn:a'}
    """
    namespaces = {}
    for binding in bindings:
        prefix, equals, uri = binding.partition("=")
        if not equals or not prefix or not uri:
            raise QueryError(f"namespace binding {binding!r} is not of the form prefix=uri")
        namespaces[prefix] = uri
    return namespaces


def compile_query(expression: str, namespaces: dict[str, str]) -> etree.XPath:
    """Compile an XPath 1.0 expression, or raise :class:`QueryError` saying why not."""
    try:
        return etree.XPath(expression, namespaces=namespaces)
    except (etree.XPathSyntaxError, ValueError) as error:  # ValueError: NUL, control chars
        raise QueryError(f"invalid XPath {expression!r}: {error}") from None


def _render(item) -> str:
    if isinstance(item, etree._Element):
        return etree.tostring(item, encoding="unicode", with_tail=False)
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, float):
        return f"{item:g}"
    return str(item)


def query_documents(
    warehouse: Warehouse,
    expression: str,
    namespaces: dict[str, str] | None = None,
    url_prefix: str = "",
    limit: int = 1000,
) -> Iterator[QueryMatch]:
    """Evaluate ``expression`` over the latest version of every stored document.

    Yields at most ``limit`` matches, document by document in URL-Id order; a node-set gives
    one match per node, a number, string or boolean one match per document.
    """
    query = compile_query(expression, namespaces or {})
    produced = 0
    for document in warehouse.repository.documents(url_prefix):
        try:
            result = query(warehouse.parse(document.url_id))
        except etree.XPathEvalError as error:
            raise QueryError(f"cannot evaluate {expression!r}: {error}") from None
        except (LoaderError, MetadataError):
            continue  # a stored version that no longer parses (its DTD left the cache)
        items = result if isinstance(result, list) else [result]
        for item in items:
            if produced >= limit:
                return
            produced += 1
            yield QueryMatch(document.url_id, document.url, document.latest.version, _render(item))


def _query_worker(connection, folder: Path, expression, namespaces, url_prefix, limit) -> None:
    """Send each match as it is found, then ``done``: the parent keeps what came in time."""
    try:
        warehouse = Warehouse(folder)
        for match in query_documents(warehouse, expression, namespaces, url_prefix, limit):
            connection.send(("match", match))
        connection.send(("done", None))
    except (LoaderError, MetadataError) as error:
        connection.send(("error", error))
    finally:
        connection.close()


def _query_context() -> multiprocessing.context.BaseContext:
    """Children forked from a single-threaded server with this module loaded: a plain fork
    of a process that runs threads (the daemon, a dashboard, a test session) copies locks
    other threads hold (lxml's parse lock, logging's) and the child may die or hang on them;
    the server starts once per process, and each query's child then forks from it at once."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def run_query(
    folder: Path,
    expression: str,
    namespaces: dict[str, str] | None = None,
    url_prefix: str = "",
    limit: int = 1000,
    time_limit: float = 10.0,
) -> list[QueryMatch]:
    """:func:`query_documents` in a child process, killed after ``time_limit`` seconds.

    Raises
    ------
    QueryTimeout
        When the query ran past ``time_limit``; its ``partial`` holds the matches found.
    QueryError
        For a bad expression or namespace binding.
    """
    compile_query(expression, namespaces or {})  # report syntax errors without a process
    context = _query_context()
    receiver, sender = context.Pipe(duplex=False)
    worker = context.Process(
        target=_query_worker,
        args=(sender, Path(folder), expression, namespaces or {}, url_prefix, limit),
        daemon=True,
    )
    worker.start()
    sender.close()
    deadline = time.monotonic() + time_limit
    matches: list[QueryMatch] = []
    try:
        while True:
            if not receiver.poll(max(0.0, deadline - time.monotonic())):
                raise QueryTimeout(
                    f"query stopped after its time limit of {time_limit:g} s", matches
                )
            kind, payload = receiver.recv()
            if kind == "match":
                matches.append(payload)
            elif kind == "error":
                raise payload
            else:
                return matches
    except EOFError:
        raise QueryError("the query process ended without an answer") from None
    finally:
        if worker.is_alive():
            worker.kill()
        worker.join()
        receiver.close()
