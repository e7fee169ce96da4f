"""The character encoding of an HTML page, decided as the HTML Standard decides it.

https://html.spec.whatwg.org/multipage/parsing.html#encoding-sniffing-algorithm, in order:

1. a byte order mark (UTF-8, UTF-16BE, UTF-16LE);
2. the HTTP ``charset`` parameter;
3. the prescan of the first 1,024 bytes: ``<meta charset>``, ``<meta http-equiv=
   content-type content="…charset=…">``, else the XML declaration; a ``<meta>`` that says
   UTF-16 means UTF-8 (the bytes were readable as ASCII) and x-user-defined windows-1252;
4. detection: pure ASCII stays windows-1252 unless ISO-2022-JP escapes show, valid UTF-8 is
   UTF-8, otherwise charset-normalizer when it is confident (a mess ratio of at most 0.1);
   else windows-1252, the standard's default for an unknown locale.

Labels are those of the Encoding Standard (https://encoding.spec.whatwg.org/#names-and-labels,
every label of every encoding): an unknown label is ignored, as browsers ignore it, and the
step after it decides. Each encoding is decoded by the Python codec that matches it.
"""

from __future__ import annotations

import codecs
import functools
from dataclasses import dataclass

import charset_normalizer

PRESCAN_BYTES = 1024
"""Bytes of a page the ``<meta>`` prescan reads (the standard's advice)."""

_DETECT_BYTES = 64 * 1024
_MAX_CHAOS = 0.1  # charset-normalizer's "mess" ratio above which its guess is not trusted

# The Encoding Standard's encodings: name -> (Python codec, its labels).
_ENCODINGS: dict[str, tuple[str, str]] = {
    "utf-8": ("utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"),
    "ibm866": ("cp866", "866 cp866 csibm866 ibm866"),
    "iso-8859-2": (
        "iso8859-2",
        "csisolatin2 iso-8859-2 iso-ir-101 iso8859-2 iso88592 iso_8859-2 iso_8859-2:1987 l2 latin2",
    ),
    "iso-8859-3": (
        "iso8859-3",
        "csisolatin3 iso-8859-3 iso-ir-109 iso8859-3 iso88593 iso_8859-3 iso_8859-3:1988 l3 latin3",
    ),
    "iso-8859-4": (
        "iso8859-4",
        "csisolatin4 iso-8859-4 iso-ir-110 iso8859-4 iso88594 iso_8859-4 iso_8859-4:1988 l4 latin4",
    ),
    "iso-8859-5": (
        "iso8859-5",
        "csisolatincyrillic cyrillic iso-8859-5 iso-ir-144 iso8859-5 iso88595 iso_8859-5 "
        "iso_8859-5:1988",
    ),
    "iso-8859-6": (
        "iso8859-6",
        "arabic asmo-708 csiso88596e csiso88596i csisolatinarabic ecma-114 iso-8859-6 "
        "iso-8859-6-e iso-8859-6-i iso-ir-127 iso8859-6 iso88596 iso_8859-6 iso_8859-6:1987",
    ),
    "iso-8859-7": (
        "iso8859-7",
        "csisolatingreek ecma-118 elot_928 greek greek8 iso-8859-7 iso-ir-126 iso8859-7 "
        "iso88597 iso_8859-7 iso_8859-7:1987 sun_eu_greek",
    ),
    "iso-8859-8": (
        "iso8859-8",
        "csiso88598e csisolatinhebrew hebrew iso-8859-8 iso-8859-8-e iso-ir-138 iso8859-8 "
        "iso88598 iso_8859-8 iso_8859-8:1988 visual",
    ),
    "iso-8859-8-i": ("iso8859-8", "csiso88598i iso-8859-8-i logical"),
    "iso-8859-10": (
        "iso8859-10",
        "csisolatin6 iso-8859-10 iso-ir-157 iso8859-10 iso885910 l6 latin6",
    ),
    "iso-8859-13": ("iso8859-13", "iso-8859-13 iso8859-13 iso885913"),
    "iso-8859-14": ("iso8859-14", "iso-8859-14 iso8859-14 iso885914"),
    "iso-8859-15": (
        "iso8859-15",
        "csisolatin9 iso-8859-15 iso8859-15 iso885915 iso_8859-15 l9",
    ),
    "iso-8859-16": ("iso8859-16", "iso-8859-16"),
    "koi8-r": ("koi8-r", "cskoi8r koi koi8 koi8-r koi8_r"),
    "koi8-u": ("koi8-u", "koi8-ru koi8-u"),
    "macintosh": ("mac-roman", "csmacintosh mac macintosh x-mac-roman"),
    "windows-874": ("cp874", "dos-874 iso-8859-11 iso8859-11 iso885911 tis-620 windows-874"),
    "windows-1250": ("cp1250", "cp1250 windows-1250 x-cp1250"),
    "windows-1251": ("cp1251", "cp1251 windows-1251 x-cp1251"),
    "windows-1252": (
        "cp1252",
        "ansi_x3.4-1968 ascii cp1252 cp819 csisolatin1 ibm819 iso-8859-1 iso-ir-100 iso8859-1 "
        "iso88591 iso_8859-1 iso_8859-1:1987 l1 latin1 us-ascii windows-1252 x-cp1252",
    ),
    "windows-1253": ("cp1253", "cp1253 windows-1253 x-cp1253"),
    "windows-1254": (
        "cp1254",
        "cp1254 csisolatin5 iso-8859-9 iso-ir-148 iso8859-9 iso88599 iso_8859-9 iso_8859-9:1989 "
        "l5 latin5 windows-1254 x-cp1254",
    ),
    "windows-1255": ("cp1255", "cp1255 windows-1255 x-cp1255"),
    "windows-1256": ("cp1256", "cp1256 windows-1256 x-cp1256"),
    "windows-1257": ("cp1257", "cp1257 windows-1257 x-cp1257"),
    "windows-1258": ("cp1258", "cp1258 windows-1258 x-cp1258"),
    "x-mac-cyrillic": ("mac-cyrillic", "x-mac-cyrillic x-mac-ukrainian"),
    "gbk": (
        "gb18030",
        "chinese csgb2312 csiso58gb231280 gb2312 gb_2312 gb_2312-80 gbk iso-ir-58 x-gbk",
    ),
    "gb18030": ("gb18030", "gb18030"),
    "big5": ("big5hkscs", "big5 big5-hkscs cn-big5 csbig5 x-x-big5"),
    "euc-jp": ("euc_jp", "cseucpkdfmtjapanese euc-jp x-euc-jp"),
    "iso-2022-jp": ("iso2022_jp_ext", "csiso2022jp iso-2022-jp"),
    "shift_jis": (
        "cp932",
        "csshiftjis ms932 ms_kanji shift-jis shift_jis sjis windows-31j x-sjis",
    ),
    "euc-kr": (
        "cp949",
        "cseuckr csksc56011987 euc-kr iso-ir-149 korean ks_c_5601-1987 ks_c_5601-1989 ksc5601 "
        "ksc_5601 windows-949",
    ),
    "replacement": ("", "csiso2022kr hz-gb-2312 iso-2022-cn iso-2022-cn-ext iso-2022-kr"),
    "utf-16be": ("utf-16-be", "unicodefffe utf-16be"),
    "utf-16le": (
        "utf-16-le",
        "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le",
    ),
    "x-user-defined": ("", "x-user-defined"),
}
_LABELS = {label: name for name, (_, labels) in _ENCODINGS.items() for label in labels.split()}
_UTF16 = frozenset({"utf-16be", "utf-16le"})
# Encodings that read ASCII bytes as something else than ASCII.
_NOT_ASCII_SAFE = frozenset({*_UTF16, "replacement", "iso-2022-jp"})
_SPACE = b"\t\n\x0c\r "
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xfe\xff", "utf-16be"), (b"\xff\xfe", "utf-16le"))


def lookup(label: str | bytes | None) -> str | None:
    """The Encoding Standard's name for ``label``, or None for an unknown label.

    >>> lookup(" Latin1 "), lookup("x-sjis"), lookup("utf-16"), lookup("utf-7")
    ('windows-1252', 'shift_jis', 'utf-16le', None)
    """
    if label is None:
        return None
    if isinstance(label, bytes):
        label = label.decode("latin-1")
    return _LABELS.get(label.strip("\t\n\x0c\r ").lower())


@dataclass(frozen=True, slots=True)
class Decoded:
    """An HTML page's text as UTF-8 bytes (what the parser is given), the encoding it was
    read in (its standard name) and the step that decided it (``bom``, ``http``, ``meta``,
    ``detected`` or ``default``). A page read as UTF-8 is passed on as it came: lxml's
    UTF-8 reader turns its malformed sequences into U+FFFD, as a browser does."""

    utf8: bytes
    encoding: str
    source: str


def decode_html(body: bytes, http_charset: str | None = None) -> Decoded:
    """The page's text, decoded in the encoding the standard's sniffing algorithm picks.

    Malformed bytes become U+FFFD, as in a browser; the result is always UTF-8.

    >>> decode_html("<meta charset=utf-16><a href=x>é</a>".encode()).encoding
    'utf-8'
    >>> decode_html(b"<p>caf\\xe9", "ISO-8859-1").utf8, decode_html(b"<p>caf\\xc3\\xa9").source
    (b'<p>caf\\xc3\\xa9', 'detected')
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return Decoded(_decode(body[len(bom) :], name), name, "bom")
    name = lookup(http_charset)
    if name is not None:
        return Decoded(_decode(body, name), name, "http")
    name = prescan(body[:PRESCAN_BYTES])
    if name is not None:
        return Decoded(_decode(body, name), name, "meta")
    name = detect(body)
    if name is not None:
        return Decoded(_decode(body, name), name, "detected")
    return Decoded(_decode(body, "windows-1252"), "windows-1252", "default")


def url_codec(encoding: str) -> str:
    """The Python codec a page's URL queries are encoded with: the page's encoding, but
    UTF-8 for the UTF-16 ones, replacement and x-user-defined (the URL Standard's "output
    encoding", extended to the encodings Python cannot write).

    >>> url_codec("windows-1252"), url_codec("utf-16le")
    ('cp1252', 'utf-8')
    """
    codec = _ENCODINGS[encoding][0]
    return "utf-8" if encoding in _UTF16 or not codec else codec


def _decode(data: bytes, encoding: str) -> bytes:
    if encoding == "utf-8" or (encoding not in _NOT_ASCII_SAFE and data.isascii()):
        return data  # the parser reads UTF-8 itself (malformed bytes as U+FFFD); ASCII is UTF-8
    if encoding == "replacement":
        return "\ufffd".encode() if data else b""
    if encoding == "x-user-defined":
        text = "".join(chr(b) if b < 0x80 else chr(0xF700 + b) for b in data)
    else:
        text = data.decode(_ENCODINGS[encoding][0], "xyleme-whatwg")
    return text.encode("utf-8", "surrogatepass")


def _whatwg_decode_error(error: UnicodeError) -> tuple[str, int]:
    """Bytes a Python codec refuses but the Encoding Standard maps: the unassigned bytes
    0x80-0x9F of windows-125x and windows-874 (Python's single-byte codecs all report the
    codec "charmap") are the C1 controls of the same value, GB18030's lone 0x80 is €;
    anything else is U+FFFD."""
    assert isinstance(error, UnicodeDecodeError)
    byte = error.object[error.start]
    if error.encoding == "charmap" and 0x80 <= byte <= 0x9F:
        return chr(byte), error.start + 1
    if error.encoding == "gb18030" and byte == 0x80:
        return "\u20ac", error.start + 1
    return "\ufffd", error.end


codecs.register_error("xyleme-whatwg", _whatwg_decode_error)


def detect(body: bytes) -> str | None:
    """The encoding of a page that declares none (None when no guess is confident).

    >>> detect("日本".encode("iso2022_jp")), detect("çà".encode())
    ('iso-2022-jp', 'utf-8')
    """
    sample = body[:_DETECT_BYTES]
    if sample.isascii():
        if b"\x1b" in sample and (
            b"\x1b$@" in sample or b"\x1b$B" in sample or b"\x1b(J" in sample
        ):
            return "iso-2022-jp"
        return None  # ASCII: the default reads it the same
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as error:
        if error.start >= len(sample) - 3 and len(sample) < len(body):
            return "utf-8"  # a character cut by the sample's end
    confident = [
        name
        for match in charset_normalizer.from_bytes(sample)
        if match.chaos <= _MAX_CHAOS and (name := _name_of_codec(match.encoding)) is not None
    ]
    if not confident:
        return None
    # Single-byte Latin encodings read most Western text alike and charset-normalizer ranks
    # them by a hair: a tie goes to the standard's default.
    return "windows-1252" if "windows-1252" in confident else confident[0]


# Codec families charset-normalizer names that decode as one of the standard's encodings.
_CODEC_FAMILIES = (
    ("euc_jis", "euc-jp"),
    ("shift_jis", "shift_jis"),
    ("iso2022_jp", "iso-2022-jp"),
    ("cp950", "big5"),
    ("big5", "big5"),
)


@functools.lru_cache(maxsize=64)
def _name_of_codec(codec: str) -> str | None:
    """The standard's name of a Python codec name (charset-normalizer answers with those)."""
    for prefix, name in _CODEC_FAMILIES:
        if codec.startswith(prefix):
            return name
    for label in (codec, codec.replace("_", "-"), codec.replace("_", "")):
        if (name := lookup(label)) is not None:
            return name
    wanted = codecs.lookup(codec).name
    for name, (python_codec, _) in _ENCODINGS.items():
        if python_codec and codecs.lookup(python_codec).name == wanted:
            return name
    return None


# ---------------------------------------------------------------------- the prescan


class _Exhausted(Exception):
    """The bytes ran out before the prescan could decide."""


def prescan(data: bytes) -> str | None:
    """The encoding a page's first bytes declare: the standard's "prescan a byte stream to
    determine its encoding", then "get an XML encoding"; None when they declare none.

    >>> prescan(b"<!-- <meta charset=koi8-r> --><meta content='text/html; charset=sjis'"
    ...         b" http-equiv=Content-Type>")
    'shift_jis'
    >>> prescan(b"<meta charset='utf-16'>"), prescan(b"<?xml version='1.0' encoding='EUC-JP'?>")
    ('utf-8', 'euc-jp')
    """
    if data.startswith(b"<\x00?\x00x\x00"):
        return "utf-16le"
    if data.startswith(b"\x00<\x00?\x00x"):
        return "utf-16be"
    if b"charset" not in data.lower():
        return _xml_encoding(data)  # no <meta> can declare anything: the scan would run out
    try:
        return _scan(data)
    except _Exhausted:
        return _xml_encoding(data)


def _scan(data: bytes) -> str | None:
    """The prescan's loop; only a ``<`` can start anything, so it jumps from one to the next."""
    position = 0
    while True:
        position = data.find(b"<", position)
        if position < 0:
            raise _Exhausted
        lowered = data[position : position + 6].lower()
        if lowered.startswith(b"<!--"):
            end = data.find(b"-->", position + 2)
            if end < 0:
                raise _Exhausted
            position = end + 2
        elif lowered[:5] == b"<meta" and lowered[5:6] in (*_SPACE_BYTES, b"/"):
            found, position = _meta(data, position + 6)
            if found is not None:
                return found
            continue
        elif _starts_tag(data, position):
            position = _skip_tag(data, position)
            continue
        elif lowered.startswith((b"<!", b"</", b"<?")):
            end = data.find(b">", position + 2)
            if end < 0:
                raise _Exhausted
            position = end
        position += 1


_SPACE_BYTES = tuple(bytes([b]) for b in _SPACE)


def _starts_tag(data: bytes, position: int) -> bool:
    """``<`` or ``</`` followed by an ASCII letter."""
    if data[position : position + 1] != b"<":
        return False
    after = position + 2 if data[position + 1 : position + 2] == b"/" else position + 1
    return data[after : after + 1].isalpha() and data[after] < 0x80


def _skip_tag(data: bytes, position: int) -> int:
    while position < len(data) and data[position] not in b"\t\n\x0c\r >":
        position += 1
    while True:
        attribute, position = _attribute(data, position)
        if attribute is None:
            return position


def _meta(data: bytes, position: int) -> tuple[str | None, int]:
    """The encoding a ``<meta>`` declares (or None) and the position after it."""
    names: set[bytes] = set()
    got_pragma, need_pragma, charset = False, None, None
    while True:
        attribute, position = _attribute(data, position)
        if attribute is None:
            break
        name, value = attribute
        if name in names:
            continue
        names.add(name)
        if name == b"http-equiv" and value == b"content-type":
            got_pragma = True
        elif name == b"content" and charset is None:
            declared = _charset_in_content(value)
            if declared is not None:
                charset, need_pragma = lookup(declared), True
        elif name == b"charset":
            charset, need_pragma = lookup(value), False
    if need_pragma is None or (need_pragma and not got_pragma) or charset is None:
        return None, position
    if charset in _UTF16:
        return "utf-8", position
    return ("windows-1252" if charset == "x-user-defined" else charset), position


def _attribute(data: bytes, position: int) -> tuple[tuple[bytes, bytes] | None, int]:
    """The standard's "get an attribute": ((name, value), position) or (None, position) at
    the tag's end. Names and values are lower-cased."""

    def at(index: int) -> int:
        if index >= len(data):
            raise _Exhausted
        return data[index]

    while at(position) in b"\t\n\x0c\r /":
        position += 1
    if at(position) == 0x3E:
        return None, position
    name = bytearray()
    while True:
        byte = at(position)
        if byte == 0x3D and name:
            position += 1
            break
        if byte in _SPACE:
            while at(position) in _SPACE:
                position += 1
            if at(position) != 0x3D:
                return (bytes(name), b""), position
            position += 1
            break
        if byte in b"/>":
            return (bytes(name), b""), position
        name.append(byte | 0x20 if 0x41 <= byte <= 0x5A else byte)
        position += 1
    while at(position) in _SPACE:
        position += 1
    value = bytearray()
    quote = at(position)
    if quote in b"\"'":
        position += 1
        while (byte := at(position)) != quote:
            value.append(byte | 0x20 if 0x41 <= byte <= 0x5A else byte)
            position += 1
        return (bytes(name), bytes(value)), position + 1
    if quote == 0x3E:
        return (bytes(name), b""), position
    while (byte := at(position)) not in b"\t\n\x0c\r >":
        value.append(byte | 0x20 if 0x41 <= byte <= 0x5A else byte)
        position += 1
    return (bytes(name), bytes(value)), position


def _charset_in_content(value: bytes) -> bytes | None:
    """The standard's "extract a character encoding from a meta element" (a ``content``)."""
    position = 0
    while True:
        found = value.find(b"charset", position)
        if found < 0:
            return None
        position = found + 7
        while value[position : position + 1] in _SPACE_BYTES:
            position += 1
        if value[position : position + 1] == b"=":
            position += 1
            break
    while value[position : position + 1] in _SPACE_BYTES:
        position += 1
    quote = value[position : position + 1]
    if quote in (b'"', b"'"):
        end = value.find(quote, position + 1)
        return value[position + 1 : end] if end >= 0 else None
    end = position
    while end < len(value) and value[end] not in b"\t\n\x0c\r ;":
        end += 1
    return value[position:end] or None


def _xml_encoding(data: bytes) -> str | None:
    """The standard's "get an XML encoding" (a page that starts with an XML declaration)."""
    if not data.startswith(b"<?xml"):
        return None
    end = data.find(b">")
    found = data.find(b"encoding", 0, end)
    if end < 0 or found < 0:
        return None
    position = found + 8
    while position < end and data[position] <= 0x20:
        position += 1
    if data[position : position + 1] != b"=":
        return None
    position += 1
    while position < end and data[position] <= 0x20:
        position += 1
    quote = data[position : position + 1]
    if quote not in (b'"', b"'"):
        return None
    close = data.find(quote, position + 1, end)
    value = data[position + 1 : close]
    if close < 0 or any(byte <= 0x20 for byte in value):
        return None
    name = lookup(value)
    return "utf-8" if name in _UTF16 else name
