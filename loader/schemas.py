"""XML Schema validation of documents that name their schemas (``xsi:schemaLocation``).

Schemas are fetched like DTDs: through the crawler, into the dependency cache, and read only
by :class:`loader.dependencies.CacheResolver` (so their own ``xs:import`` / ``xs:include`` are
dependencies too). All the locations a document names are gathered into one small wrapper
schema that imports each namespace's schema, so a document mixing vocabularies is checked
against all of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from lxml import etree

from loader.dependencies import CacheResolver
from loader.parselock import PARSE_LOCK
from loader.parsing import describe, safe_parser, unavailable_reason
from loader.records import Check

XSD = "http://www.w3.org/2001/XMLSchema"


@dataclass
class SchemaCheck:
    """The schema verdict; ``missing`` non-empty means: park until those URLs are cached."""

    check: Check = Check.NONE
    errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    note: str | None = None
    reason: str | None = None  # why the check is NOT_VALIDATED


def wrapper_schema(locations: dict[str, str]) -> bytes:
    """A schema that imports (or, for no namespace, includes) every named schema.

    >>> wrapper_schema({"urn:a": "http://s.test/a.xsd"})[:47]
    b'<xs:schema xmlns:xs="http://www.w3.org/2001/XM'
    """
    parts = [f'<xs:schema xmlns:xs="{XSD}">']
    for namespace, url in locations.items():
        if namespace:
            parts.append(
                f"<xs:import namespace={quoteattr(namespace)} schemaLocation={quoteattr(url)}/>"
            )
        else:
            parts.append(f"<xs:include schemaLocation={quoteattr(url)}/>")
    parts.append("</xs:schema>")
    return "".join(parts).encode()


class SchemaCompiler:
    """Compiled schemas, kept while the dependency cache they were read from is unchanged.

    Many documents name the same schemas; compiling them costs more than validating one
    document. lxml's validators keep their error log on the object, so each thread has its
    own compiler.
    """

    def __init__(self) -> None:
        self._compiled: dict[tuple[tuple[str, str], ...], etree.XMLSchema] = {}
        self._generation = -1

    def compile(
        self, locations: dict[str, str], resolver: CacheResolver, generation: int
    ) -> etree.XMLSchema | SchemaCheck:
        """The schema for ``locations``, or the verdict when it cannot be had (yet).

        ``generation`` is the dependency cache's: a new one forgets what was compiled.
        """
        if generation != self._generation:
            self._compiled.clear()
            self._generation = generation
        key = tuple(locations.items())
        schema = self._compiled.get(key)
        if schema is None:
            schema = _compile(locations, resolver)
            if isinstance(schema, etree.XMLSchema):
                self._compiled[key] = schema
        return schema


def _compile(locations: dict[str, str], resolver: CacheResolver) -> etree.XMLSchema | SchemaCheck:
    """Compile the wrapper of ``locations``; a schema (or one it imports) that cannot be had
    makes the check ``not validated`` with the reason, charged to this document only."""
    parser = safe_parser(resolver)
    try:
        with PARSE_LOCK:  # compiling loads the schemas through the resolver too
            wrapper = etree.fromstring(wrapper_schema(locations), parser)
            schema = etree.XMLSchema(wrapper)
    except (etree.XMLSchemaParseError, etree.XMLSyntaxError) as error:
        if resolver.missing:
            return SchemaCheck(missing=list(resolver.missing))
        if resolver.unavailable:
            return _not_validated(resolver)
        return SchemaCheck(note=f"schema not checked: unusable schema: {error}")
    if resolver.missing:
        return SchemaCheck(missing=list(resolver.missing))
    if resolver.unavailable:  # compiled without a part: its verdict would not be the schema's
        return _not_validated(resolver)
    return schema


def _not_validated(resolver: CacheResolver) -> SchemaCheck:
    return SchemaCheck(Check.NOT_VALIDATED, reason=unavailable_reason(resolver.unavailable))


def check_schema(
    tree: etree._ElementTree,
    locations: dict[str, str],
    resolver: CacheResolver,
    max_errors: int,
    compiler: SchemaCompiler | None = None,
    generation: int = 0,
) -> SchemaCheck:
    """Validate ``tree`` against the schemas at ``locations`` (namespace -> URL), compiled
    by ``compiler`` (which may have them already) or afresh."""
    if not locations:
        return SchemaCheck()
    compiler = compiler or SchemaCompiler()
    schema = compiler.compile(locations, resolver, generation)
    if isinstance(schema, SchemaCheck):
        return schema
    if schema.validate(tree):
        return SchemaCheck(Check.VALID)
    errors = [describe(e) for e in list(schema.error_log)[:max_errors]]
    return SchemaCheck(Check.INVALID, errors)
