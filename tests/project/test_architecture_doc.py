"""docs/architecture.md stays the true map: its packages are the code's, its names resolve.

The package table lists every package of the project (the top-level ones and each
subpackage of ``xyleme`` and ``ranking``) and nothing else; every module, path or dotted
name the page writes in backticks exists (names in the jobs table are relative to
``xyleme.jobs``).
"""

from __future__ import annotations

import importlib
import re

import pytest

from tests.paths import ROOT

PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
TOPS = ("conventions", "metadata", "loader", "refresh", "ranking", "xyleme")
DOTTED = re.compile(r"`([a-z_][a-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)+)`")
PATH = re.compile(r"`((?:" + "|".join(TOPS) + r")/[\w/]*(?:\.py)?)`")


def code_packages() -> set[str]:
    found = set(TOPS)
    for top in ("xyleme", "ranking"):
        found |= {f"{top}.{p.parent.name}" for p in (ROOT / top).glob("*/__init__.py")}
    return found


def table_packages() -> set[str]:
    section = PAGE.split("## Packages, bottom to top", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([\w.]+)`", row.split("|")[1])}


def resolve(name: str) -> object:
    """The module or attribute ``name`` names (``xyleme.jobs``-relative if need be)."""
    for candidate in (name, f"xyleme.jobs.{name}"):
        parts = candidate.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attribute in parts[cut:]:
                    found = getattr(found, attribute)
            except AttributeError:
                break
            return found
    raise LookupError(name)


def test_the_package_table_lists_the_code_packages():
    assert table_packages() == code_packages()


NAMES = sorted(
    {
        name
        for name in DOTTED.findall(PAGE)
        if name.split(".")[0] in TOPS
        or (ROOT / "xyleme/jobs" / f"{name.split('.')[0]}.py").exists()
    }
)


@pytest.mark.parametrize("name", NAMES)
def test_each_named_module_exists(name):
    resolve(name)


@pytest.mark.parametrize("path", sorted(set(PATH.findall(PAGE))))
def test_each_named_path_exists(path):
    assert (ROOT / path).exists()


def test_the_checks_see_a_wrong_name():
    with pytest.raises(LookupError):
        resolve("xyleme.jobs.no_such_job")
    assert "xyleme.jobs" in code_packages()


def road_files() -> list[str]:
    """The files the page's road of one URL says a reader opens, in order."""
    section = PAGE.split("## The road of one URL", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([\w/]+\.py)` \|", section, re.MULTILINE)


def test_the_road_from_a_url_to_its_stored_version_crosses_at_most_five_files():
    """Issue 19: from the crawler's worker to the stored XML version, five files to open,
    the crawler's first and the version store's last."""
    road = road_files()
    assert 2 <= len(road) <= 5
    assert road[0] == "xyleme/crawler/engine.py" and road[-1] == "metadata/versions.py"
    assert all((ROOT / path).is_file() for path in road)
