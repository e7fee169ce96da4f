"""``xyleme schedule`` on a small repository built through the metadata manager."""

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from metadata import FetchResult, Metadata, PageType
from xyleme.cli import cli

DAY = 86_400.0
T0 = 1_700_000_000.0


@pytest.fixture
def repo(tmp_path):
    """Three XML pages read every day for 10 days (one changes daily, one every 5 days, one
    never), one unread page, one ERROR page; the [bandwidth] table sets G and θ."""
    assert CliRunner().invoke(cli, ["init", str(tmp_path)]).exit_code == 0
    (tmp_path / "xyleme.toml").write_text("[bandwidth]\nG = 2.0\ntheta = 0.5\n")
    with Metadata.open(tmp_path / "metadata.db") as md:
        fast, slow, still, unread, broken = md.ids_for(
            [f"http://h.test/{name}.xml" for name in ("fast", "slow", "still", "new", "bad")]
        )
        for day in range(11):
            at = T0 + day * DAY
            for page, version in ((fast, day), (slow, day // 5), (still, 0)):
                md.record_fetch(FetchResult(page, at, PageType.XML, 200, md5=f"{version:032d}"))
        md.record_fetch(FetchResult(broken, T0, PageType.ERROR, 500, reason="server error"))
        md.set_scores("importance", np.array([fast, slow, still]), np.array([1.0, 1.0, 1.0]))
        md.set_scores("opic_cash", np.array([unread, broken]), np.array([0.5, 0.9]))
    return tmp_path


def run(repo, *args):
    result = CliRunner().invoke(cli, ["--repo", str(repo), "schedule", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_json_gives_pages_and_repository_figures(repo):
    now = T0 + 10.5 * DAY
    figures = json.loads(run(repo, "--summary", "--json", "--now", str(now), "--units", "3"))
    assert figures["bandwidth_G"] == 2.0
    assert figures["refresh_bandwidth_Gr"] == 1.0
    assert figures["omega"] == pytest.approx(figures["S"] ** 2 / 2.0)
    assert figures["K"] == pytest.approx(figures["S"] / 1.0)
    assert len(figures["due_per_unit"]) == 3
    assert figures["discovery_now"] == 1
    assert figures["retries_now"] == 1
    pages = json.loads(run(repo, "--json", "--now", str(now), "--units", "3"))
    by_url = {page["url"].rsplit("/", 1)[1]: page for page in pages}
    fast, slow, still = by_url["fast.xml"], by_url["slow.xml"], by_url["still.xml"]
    assert fast["method"] == "always_changed"
    assert slow["method"] == "change_mle"
    assert still["method"] == "no_change_seen"
    assert fast["change_rate_per_unit"] > slow["change_rate_per_unit"]
    assert slow["change_rate_per_unit"] > still["change_rate_per_unit"]
    assert fast["interval_units"] < slow["interval_units"] < still["interval_units"]
    assert by_url["new.xml"]["next_refresh"] is None


def test_url_and_csv(repo):
    out = run(repo, "--csv", "--url", "http://h.test/slow.xml", "--now", str(T0 + 11 * DAY))
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1
    assert rows[0]["url"] == "http://h.test/slow.xml"
    assert float(rows[0]["r"]) == pytest.approx(1.0)


def test_text_output_lists_the_soonest_pages(repo):
    result = CliRunner().invoke(
        cli, ["--repo", str(repo), "schedule", "--limit", "2", "--now", str(T0 + 11 * DAY)]
    )
    assert result.exit_code == 0, result.output
    assert "S = " in result.stdout and "K = " in result.stdout and "Ω = " in result.stdout
    assert "fast.xml" in result.stdout and "None" not in result.stdout
    assert "2 of 5 pages shown" in result.stderr


def test_the_old_top_option_still_limits_with_a_note(repo):
    result = CliRunner().invoke(cli, ["--repo", str(repo), "schedule", "--top", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 1
    assert "--top is deprecated: use --limit" in result.stderr


def test_user_errors_are_clear(repo, tmp_path_factory):
    result = CliRunner().invoke(cli, ["--repo", str(repo), "schedule", "--summary", "--csv"])
    assert result.exit_code == 2 and "not --csv" in result.output
    result = CliRunner().invoke(
        cli, ["--repo", str(repo), "schedule", "--url", "http://h.test/unknown.xml"]
    )
    assert result.exit_code != 0 and "Traceback" not in result.output
    empty = tmp_path_factory.mktemp("empty")
    result = CliRunner().invoke(cli, ["--repo", str(empty), "schedule"])
    assert result.exit_code != 0 and "Error" in result.output
    (repo / "xyleme.toml").write_text("[refresh]\nbandwidth = 3\n")
    result = CliRunner().invoke(cli, ["--repo", str(repo), "schedule"])
    assert result.exit_code != 0 and "unknown key 'bandwidth' in [refresh]" in result.output
