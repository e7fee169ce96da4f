"""Small builders the metadata tests share."""

from metadata import FetchResult, PageType


def ids(md, *urls):
    """Ids for ``http://example.com/<url>`` of each url, made as needed."""
    return md.ids_for([f"http://example.com/{url}" for url in urls])


def full_fetch(url_id, at, **fields):
    """A 200 XML fetch with every field set; ``fields`` override."""
    defaults = dict(
        page_type=PageType.XML,
        status=200,
        md5="0" * 32,
        last_modified=at - 10.0,
        etag='"v1"',
        content_type="application/xml",
        size=1234,
        children=[],
    )
    return FetchResult(url_id, at, **{**defaults, **fields})
