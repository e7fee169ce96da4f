"""What the loader checks of a document's DTDs: its own entity limits, and whether they
declare a grammar (a DOCTYPE that only declares entities has nothing to validate).

Both read the DTDs lxml hands out through ``docinfo``, and lxml copies a DTD each time it
does: ~6 ms for XHTML 1.0's, ~66 ms for DocBook 4.5's, more than parsing the document. A
shared external DTD (from the catalog or the dependency cache) gives the same answers to
every document that uses it without an internal subset: :class:`DtdFacts` remembers them.
"""

from __future__ import annotations

import re

from lxml import etree

from loader.errors import EntityExpansionRefused
from loader.settings import LoaderSettings

_ENTITY_REFERENCE = re.compile(r"&([A-Za-z_:][\w.:-]*);")
_FACTS_KEPT = 1024


def dtds_of(tree: etree._ElementTree) -> tuple[etree.DTD, ...]:
    """A document's internal and external DTDs, fetched once (each fetch is a copy)."""
    docinfo = tree.docinfo
    return tuple(dtd for dtd in (docinfo.internalDTD, docinfo.externalDTD) if dtd is not None)


def declares_grammar(dtds: tuple[etree.DTD, ...]) -> bool:
    """Whether the DTDs declare elements."""
    return any(any(True for _ in dtd.iterelements()) for dtd in dtds)


def check_entities(dtds: tuple[etree.DTD, ...], settings: LoaderSettings) -> None:
    """Refuse documents whose declared entities expand past the configured limits.

    libxml2 already stops excessive amplification while parsing; this adds the loader's own
    bounds: the number of entity declarations and the expanded size of each entity (nested
    references counted, memoised, stopping as soon as the bound is passed).
    """
    declared: dict[str, str] = {}
    for dtd in dtds:
        for entity in dtd.iterentities():
            declared.setdefault(entity.name, entity.content or "")
    if len(declared) > settings.max_entity_declarations:
        raise EntityExpansionRefused(
            f"{len(declared)} entity declarations, more than {settings.max_entity_declarations}"
        )
    limit = settings.max_entity_expansion_bytes
    sizes: dict[str, int] = {}

    def expanded(name: str, trail: tuple[str, ...]) -> int:
        if name in sizes:
            return sizes[name]
        if name in trail:
            raise EntityExpansionRefused(f"entity {name!r} refers to itself")
        text = declared.get(name, "")
        size = len(text)
        for reference in _ENTITY_REFERENCE.finditer(text):
            size += expanded(reference.group(1), (*trail, name)) - len(reference.group(0))
            if size > limit:
                raise EntityExpansionRefused(
                    f"entity {name!r} expands past {limit} bytes (billion laughs?)"
                )
        sizes[name] = size
        return size

    for name in declared:
        expanded(name, ())


class DtdFacts:
    """The verdicts of documents that share an external DTD and have no internal subset:
    entities within the limits (a refusal is not remembered: it raises each time), and
    whether a grammar is declared. One per thread (kept by the resolver)."""

    def __init__(self) -> None:
        self._grammar: dict[tuple, bool] = {}

    def check(self, tree: etree._ElementTree, key: tuple | None, settings: LoaderSettings) -> bool:
        """Check a parsed document's entities; return whether its DTDs declare a grammar.

        ``key`` identifies its external DTD as parsed (None: do not remember).
        """
        if key is not None and key in self._grammar:
            return self._grammar[key]
        dtds = dtds_of(tree)
        check_entities(dtds, settings)
        grammar = declares_grammar(dtds)
        if key is not None:
            if len(self._grammar) >= _FACTS_KEPT:
                self._grammar.clear()
            self._grammar[key] = grammar
        return grammar
