"""What the loader checks of a document's DTDs: its own entity limits, and whether they
declare a grammar (a DOCTYPE that only declares entities has nothing to validate).

Both read the DTDs lxml hands out through ``docinfo``, and lxml copies a DTD each time it
does: ~6 ms for XHTML 1.0's, ~66 ms for DocBook 4.5's, more than parsing the document. A
shared external DTD (from the catalog or the dependency cache) declares the same entities and
grammar for every document that uses it: :class:`DtdFacts` remembers them, and a document's
internal subset (DocBook's customary ``<!ENTITY product "…">``) is read on its own, small.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

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


def declared_entities(dtds: tuple[etree.DTD, ...]) -> dict[str, str]:
    """The general entities the DTDs declare, name -> replacement text; the first DTD's
    declaration wins (the internal subset is read before the external one, XML 1.0 §4.2)."""
    declared: dict[str, str] = {}
    for dtd in dtds:
        for entity in dtd.iterentities():
            declared.setdefault(entity.name, entity.content or "")
    return declared


def check_entities(dtds: tuple[etree.DTD, ...], settings: LoaderSettings) -> None:
    """Refuse documents whose declared entities expand past the configured limits."""
    check_declared(declared_entities(dtds), settings)


def check_declared(
    declared: Mapping[str, str],
    settings: LoaderSettings,
    *,
    names: Iterable[str] | None = None,
    sizes: dict[str, int] | None = None,
    count: int | None = None,
) -> dict[str, int]:
    """Refuse entity declarations past the configured limits; the expanded sizes found.

    libxml2 already stops excessive amplification while parsing; this adds the loader's own
    bounds: the number of entity declarations (``count``, else ``len(declared)``) and the
    expanded size of each entity (nested references counted, memoised, stopping as soon as
    the bound is passed). ``names`` checks only those, the others' ``sizes`` being known.
    """
    count = len(declared) if count is None else count
    if count > settings.max_entity_declarations:
        raise EntityExpansionRefused(
            f"{count} entity declarations, more than {settings.max_entity_declarations}"
        )
    limit = settings.max_entity_expansion_bytes
    sizes = dict(sizes) if sizes else {}

    def expanded(name: str, trail: tuple[str, ...]) -> int:
        if name in sizes:
            return sizes[name]
        if name in trail:
            raise EntityExpansionRefused(f"entity {name!r} refers to itself")
        text = declared.get(name, "")
        size = len(text)
        if "&" not in text:  # most entities name one character
            return size
        for reference in _ENTITY_REFERENCE.finditer(text):
            size += expanded(reference.group(1), (*trail, name)) - len(reference.group(0))
            if size > limit:
                raise EntityExpansionRefused(
                    f"entity {name!r} expands past {limit} bytes (billion laughs?)"
                )
        sizes[name] = size
        return size

    for name in declared if names is None else names:
        expanded(name, ())
    return sizes


def _open_references(declared: dict[str, str]) -> frozenset[str]:
    """The entities the declarations reference without declaring them."""
    return frozenset(
        reference
        for text in declared.values()
        if "&" in text
        for reference in _ENTITY_REFERENCE.findall(text)
        if reference not in declared
    )


@dataclass(frozen=True, slots=True)
class External:
    """What an external DTD declares: its general entities and whether it has a grammar."""

    entities: dict[str, str]
    grammar: bool


class DtdFacts:
    """The facts of external DTDs shared by many documents: the entities they declare and
    whether they declare a grammar, read once per DTD (as served: the key says by whom).

    A document without an internal subset is checked once per external DTD (a refusal is
    not remembered: it raises each time); one with an internal subset is checked with its
    own declarations first and the remembered external ones. One per loader: the
    remembered facts are read-only once stored, so threads share them.
    """

    def __init__(self) -> None:
        self._external: dict[tuple, External] = {}
        self._sizes: dict[tuple, dict[str, int]] = {}  # of external entities, checked
        self._open: dict[tuple, frozenset[str]] = {}

    def check(
        self,
        tree: etree._ElementTree,
        key: tuple | None,
        settings: LoaderSettings,
        *,
        internal_subset: bool = True,
    ) -> bool:
        """Check a parsed document's entities; return whether its DTDs declare a grammar.

        ``key`` identifies its external DTD as parsed (None: do not remember);
        ``internal_subset`` False says the document has none (its DOCTYPE ends at ``>``).
        """
        if key is None:
            dtds = dtds_of(tree)
            check_entities(dtds, settings)
            return declares_grammar(dtds)
        external = self._external.get(key)
        if external is None:
            dtd = tree.docinfo.externalDTD
            dtds = () if dtd is None else (dtd,)
            external = External(declared_entities(dtds), declares_grammar(dtds))
            if len(self._external) >= _FACTS_KEPT:
                self._external.clear()
                self._sizes.clear()
                self._open.clear()
            self._external[key] = external
        return self.check_with(tree, external, key, settings, internal_subset=internal_subset)

    def check_with(
        self,
        tree: etree._ElementTree,
        external: External,
        key: tuple | None,
        settings: LoaderSettings,
        *,
        internal_subset: bool = True,
    ) -> bool:
        """:meth:`check` with the external DTD's facts given (a document parsed against a
        stand-in, :mod:`loader.dtdreuse`, has not the real DTD in its tree)."""
        internal = tree.docinfo.internalDTD if internal_subset else None
        own = declared_entities((internal,)) if internal is not None else {}
        grammar = external.grammar or (internal is not None and declares_grammar((internal,)))
        if key is None or not self._apart(own, external, key):
            check_declared({**external.entities, **own}, settings)
            return grammar
        # the document's own entities neither redeclare nor complete the external ones (the
        # usual DocBook ``<!ENTITY product "…">``): the external sizes, found once, stand
        count = len(external.entities) + len(own)
        check_declared({}, settings, names=(), count=count)
        sizes = self._sizes.get(key)
        if sizes is None:
            sizes = check_declared(external.entities, settings)
            if len(self._sizes) >= _FACTS_KEPT:  # bounded, as the facts are
                self._sizes.clear()
                self._open.clear()
            self._sizes[key] = sizes
        if own:
            merged = ChainMap(own, external.entities)
            check_declared(merged, settings, names=own, sizes=sizes, count=count)
        return grammar

    def _apart(self, own: dict[str, str], external: External, key: tuple) -> bool:
        """Whether a document's own entities leave the external ones' expansions as they are
        (none of them is declared or referenced by the external DTD)."""
        if not own:
            return True
        open_references = self._open.get(key)
        if open_references is None:
            open_references = _open_references(external.entities)
            if len(self._open) >= _FACTS_KEPT:
                self._open.clear()
            self._open[key] = open_references
        return own.keys().isdisjoint(external.entities) and own.keys().isdisjoint(open_references)
