"""A realistic documentation site, generated from a seed, served on loopback (issue 16).

The simulated web (:mod:`xyleme.simweb`) exercises the refresh policy; this site exercises
acquisition as a real site does: HTML from Sphinx, Javadoc and MkDocs, XHTML served both as
HTML and as XML, DocBook 4 and 5, TEI, DITA, Mallard, SVG, feeds, sitemaps, DTDs off the
scope, odd suffixes, every encoding case, redirects, 404s and resources. It knows its
ground truth (the documents a faithful crawl reads, the true link matrix) and the rankings
of that matrix computed without the ``ranking`` package. It also computes the truth of any
real folder served by a plain static server (:mod:`.folder`, :mod:`.static`) or by nginx,
Apache httpd or lighttpd (:mod:`.flavours`) and writes a
folder of the shapes real documentation trees have (:mod:`.realfolder`). See
``docs/realsite.md``.

Only the tests and the benchmarks import it; the daemon never does.
"""

from xyleme.sitegen.build import IDNA_HOST, IDNA_PUNYCODE, SiteSpec, build_site
from xyleme.sitegen.crawl import (
    DaemonCrawl,
    crawl_seeds,
    crawl_with_daemon,
    top_overlap,
    truth_overlaps,
)
from xyleme.sitegen.flavours import Flavour, flavour
from xyleme.sitegen.folder import FolderTruth, StaticServer, folder_truth, normal
from xyleme.sitegen.model import Document, Link, Response, Site, canonical
from xyleme.sitegen.process import RealSiteProcess
from xyleme.sitegen.rankings import importance, interest
from xyleme.sitegen.realfolder import write_folder
from xyleme.sitegen.server import Access, RealSiteServer, ServedSite
from xyleme.sitegen.static import StaticProcess
from xyleme.sitegen.truth import Truth, ground_truth, resolve
from xyleme.sitegen.webserver import parse_types

__all__ = [
    "IDNA_HOST",
    "IDNA_PUNYCODE",
    "Access",
    "DaemonCrawl",
    "Document",
    "Flavour",
    "FolderTruth",
    "Link",
    "RealSiteProcess",
    "RealSiteServer",
    "Response",
    "ServedSite",
    "Site",
    "SiteSpec",
    "StaticProcess",
    "StaticServer",
    "Truth",
    "build_site",
    "canonical",
    "crawl_seeds",
    "crawl_with_daemon",
    "flavour",
    "folder_truth",
    "ground_truth",
    "importance",
    "interest",
    "normal",
    "parse_types",
    "resolve",
    "top_overlap",
    "truth_overlaps",
    "write_folder",
]
