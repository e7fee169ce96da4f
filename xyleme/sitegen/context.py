"""The state every section generator shares: the site, the random source, the link pool.

Cross-references follow a Zipf law over a shuffled pool of content pages, as on real
documentation sites (a few pages, the tutorial, the configuration reference, are linked
from everywhere): the rankings then have a clear top, which a comparison of top-20 lists
needs. Pages that must be reachable through one kind of link only are kept out of the pool.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from html import escape

from xyleme.sitegen.model import Document, Response, Site
from xyleme.sitegen.refs import Refs

_PROSE = """
the configuration file names each option and its default value while the crawler reads
pages from a queue of hosts ordered by priority so that every request respects the
politeness delay of its server and a document is parsed validated and stored as a
version in the repository whose index answers queries over elements attributes and text
nodes with the namespace of each vocabulary declared in the schema a refresh policy
estimates change rates from observations and schedules reads under a bandwidth limit
importance is computed by an iterative method over the link matrix split into slices on
disk interest follows links backwards to the XML pages that a reader reaches
"""
_WORDS = tuple(_PROSE.split())


@dataclass
class Context:
    """What the section generators share while one site is built."""

    site: Site
    rng: random.Random
    pool: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    _cumulative: list[float] = field(default_factory=list)

    def seal_pool(self) -> None:
        """Shuffle the cross-reference pool and fix its Zipf weights (call once, after
        every section has planned its URLs)."""
        self.rng.shuffle(self.pool)
        weights = [1.0 / (rank + 1) ** 1.1 for rank in range(len(self.pool))]
        self._cumulative = list(itertools.accumulate(weights))

    def pick(self, count: int, besides: str = "") -> list[str]:
        """``count`` distinct cross-reference targets, popular pages likelier, never
        ``besides`` (the page itself)."""
        chosen: dict[str, None] = {}
        for _ in range(count * 4):
            if len(chosen) == count:
                break
            (url,) = self.rng.choices(self.pool, cum_weights=self._cumulative)
            if url != besides:
                chosen[url] = None
        return list(chosen)

    def title(self, url: str) -> str:
        """The title of a planned page (its last path segment when none was given)."""
        return self.titles.get(url) or url.rstrip("/").rsplit("/", 1)[-1]

    def sentence(self, words: int = 14) -> str:
        """A sentence of documentation prose (already HTML/XML-safe)."""
        start = self.rng.randrange(len(_WORDS))
        text = " ".join(_WORDS[(start + i) % len(_WORDS)] for i in range(words))
        return escape(text.capitalize()) + "."

    def paragraph(self, sentences: int = 4) -> str:
        """A paragraph of prose."""
        return " ".join(self.sentence(self.rng.randint(9, 20)) for _ in range(sentences))

    def serve(
        self,
        refs: Refs,
        body: str | bytes,
        content_type: str | None,
        style: str,
        *,
        is_xml: bool,
        encoding: str = "utf-8",
    ) -> None:
        """Add a document page, its body encoded, with the links ``refs`` declared."""
        data = body if isinstance(body, bytes) else body.encode(encoding)
        self.site.add(
            refs.url,
            Response(200, data, content_type),
            document=Document(is_xml, style),
            links=refs.links,
        )
