"""Which encoding to read a document in: BOM, then HTTP charset, then the XML declaration.

The order is RFC 7303 §3.2's: a byte order mark wins, then the ``charset`` parameter of the
HTTP Content-Type, then the encoding of the XML declaration, then UTF-8. libxml2 already
honours the BOM and the declaration; the loader only has to force the HTTP charset (when there
is no BOM) and to reject charset names nobody knows with a clear reason.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from email.message import Message

from loader.errors import EncodingProblem

_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE,
         codecs.BOM_UTF16_BE)  # fmt: skip


@dataclass(frozen=True, slots=True)
class EncodingChoice:
    """The encoding to force on the parser (None: let libxml2 read BOM / declaration)."""

    forced: str | None
    source: str  # "BOM", "HTTP charset", or "XML declaration / UTF-8 default"


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type header value, if any.

    >>> charset_of('application/xml; charset="ISO-8859-1"')
    'ISO-8859-1'
    """
    if not content_type or "charset" not in content_type.lower():
        return None  # the common case, without building a MIME message
    message = Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    return charset.strip() if isinstance(charset, str) and charset.strip() else None


def choose_encoding(head: bytes, content_type: str | None) -> EncodingChoice:
    """Decide how to decode a document from its first bytes and its HTTP Content-Type.

    Raises
    ------
    EncodingProblem
        When the HTTP charset names an encoding Python does not know.
    """
    if head.startswith(_BOMS):
        return EncodingChoice(None, "BOM")
    charset = charset_of(content_type)
    if charset is None:
        return EncodingChoice(None, "XML declaration / UTF-8 default")
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        raise EncodingProblem(f"unknown encoding {charset!r} in the HTTP charset") from None
    return EncodingChoice(name, "HTTP charset")
