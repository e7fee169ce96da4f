"""The operator's CLI: config show, seed add, pause/resume, status and export, text and JSON."""

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from metadata import FetchResult, ManualClock, Metadata, PageType
from xyleme import commands
from xyleme.cli import cli
from xyleme.jobs import RecheckRequest
from xyleme.lock import DaemonLock
from xyleme.status import save_clock, save_live_status


@pytest.fixture
def repo(tmp_path):
    folder = tmp_path / "repo"
    result = CliRunner().invoke(cli, ["init", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def xyleme(repo, *args, code=0):
    result = CliRunner().invoke(cli, ["--repo", str(repo), *args])
    assert result.exit_code == code, result.output
    return result.output


def test_config_show_prints_every_section_with_its_documentation(repo):
    (repo / "xyleme.toml").write_text("[bandwidth]\nG = 123\n")
    text = xyleme(repo, "config", "show")
    assert "G = 123.0  # pages read per time unit" in text
    assert "[clock]" in text and "[metadata]" in text
    data = json.loads(xyleme(repo, "config", "show", "--json"))
    assert data["bandwidth"] == {"G": 123.0, "theta": 0.1}


def test_config_show_names_a_wrong_key(repo):
    (repo / "xyleme.toml").write_text("[bandwidth]\nbandwith = 1\n")
    assert "unknown key 'bandwith' in [bandwidth]" in xyleme(repo, "config", "show", code=2)


def test_config_show_reads_another_file(repo, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text("[clock]\nspeed = 60\n")
    assert (
        json.loads(xyleme(repo, "config", "show", "--config", str(other), "--json"))["clock"][
            "speed"
        ]
        == 60.0
    )


def test_seed_add_stores_canonical_seeds_once(repo, tmp_path):
    assert xyleme(repo, "seed", "add", "HTTP://A.test") == "1 seed(s) added, 0 already known\n"
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# my seeds\nhttp://a.test/\nhttp://b.test/x  # a comment\n\n")
    answer = json.loads(xyleme(repo, "seed", "add", "--file", str(seeds), "--json"))
    assert answer == {
        "ok": True,
        "message": "1 seed(s) added, 1 already known",
        "added": ["http://b.test/x"],
        "refused": 0,
    }
    assert json.loads(xyleme(repo, "status", "--json"))["seeds"] == 2


def test_seed_add_reports_invalid_urls_and_fails(repo):
    text = xyleme(repo, "seed", "add", "http://ok.test/", "http://[broken", code=1)
    assert "1 seed(s) added" in text and "1 refused as invalid" in text


def test_seed_add_without_urls_is_a_usage_error(repo):
    assert "give at least one URL" in xyleme(repo, "seed", "add", code=2)


def test_pause_and_resume_without_a_daemon(repo):
    assert xyleme(repo, "pause") == "fetching paused\n"
    assert json.loads(xyleme(repo, "status", "--json"))["paused"] is True
    assert json.loads(xyleme(repo, "resume", "--json"))["paused"] is False
    assert "paused" not in xyleme(repo, "status").splitlines()[0]


def test_status_of_a_repository_no_daemon_ran_on(repo):
    xyleme(repo, "seed", "add", "http://a.test/")
    text = xyleme(repo, "status")
    assert text.splitlines()[0] == "daemon        not running"
    assert "UNKNOWN 1  (total 1; the database, now)" in text
    assert "no daemon has run on this repository yet" in text
    assert "None" not in text
    data = json.loads(xyleme(repo, "status", "--json"))
    assert data["daemon"] == {"pid": None}
    assert data["pages"] == {"UNKNOWN": 1} and data["pages_total"] == 1
    assert data["live"] == {} and data["live_source"] is None and data["live_age"] is None


def test_commands_refuse_a_folder_that_is_not_a_repository(tmp_path):
    for args in (["status"], ["seed", "add", "http://a.test/"], ["pause"], ["export", "pages"]):
        assert "no such database file" in xyleme(tmp_path, *args, code=1)


@pytest.fixture
def crawled(repo):
    """Two pages read, a link between them, scores for one."""
    with Metadata.open(repo / "metadata.db") as md:
        home, doc = md.ids_for(["http://a.test/", "http://a.test/d.xml"])
        md.record_fetches(
            [
                FetchResult(home, 100.0, PageType.HTML, status=200, md5="1" * 32, children=[doc]),
                FetchResult(doc, 101.0, PageType.XML, status=200, md5="2" * 32),
            ]
        )
        md.set_scores("importance", np.array([doc]), np.array([0.75]))
    return repo


def test_export_pages_as_csv_and_jsonl(crawled):
    rows = list(csv.DictReader(io.StringIO(xyleme(crawled, "export", "pages"))))
    assert [(row["url"], row["type"]) for row in rows] == [
        ("http://a.test/", "HTML"),
        ("http://a.test/d.xml", "XML"),
    ]
    assert rows[0]["first_access"] == "100.0" and rows[0]["change_rate"] == ""
    lines = xyleme(crawled, "export", "pages", "--format", "jsonl").splitlines()
    assert json.loads(lines[1])["last_access"] == 101.0
    assert json.loads(lines[1])["next_refresh"] is None


def test_export_links(crawled):
    assert xyleme(crawled, "export", "links") == "src,dst\n1,2\n"
    assert xyleme(crawled, "export", "links", "--format", "jsonl") == '{"src": 1, "dst": 2}\n'


def test_export_rankings_lists_only_scored_pages(crawled, tmp_path):
    out = tmp_path / "rankings.csv"
    xyleme(crawled, "export", "rankings", "-o", str(out))
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 1
    assert rows[0]["url"] == "http://a.test/d.xml" and rows[0]["importance"] == "0.75"


def test_export_refuses_an_unknown_kind(crawled):
    assert "Invalid value" in xyleme(crawled, "export", "everything", code=2)


def test_status_shows_the_daemons_last_checkpoint(repo):
    live = {
        "at": 86_400.0,
        "fetch_rate": 12.5,
        "queues": {"1": 3, "3": 0},
        "refreshes_last_unit": 7,
        "last_refresh": 0.0,
        "last_ranking": None,
        "policy": {"G": 100.0, "theta": 0.1, "S": 2.5, "omega": 0.25},
        "recheck": {"state": "running", "fetches": 4, "line": "fetches 4: alive 3 (0.750 …"},
    }
    with Metadata.open(repo / "metadata.db") as md:
        save_live_status(md, live)
        save_clock(md, ManualClock(86_400.0, speed=60.0))
    lines = xyleme(repo, "status").splitlines()
    assert lines[1] == "simulated now 1970-01-02 00:00:00Z  (clock speed x60)"
    assert (
        "figures       the daemon's last checkpoint (simulated 1970-01-02 00:00:00Z, "
        "written 0 s ago)" in lines
    )
    assert "pages/s       12.5" in lines
    assert "queues        refresh 3" in lines
    assert "refreshes     7 in the last time unit" in lines
    assert "last refresh  1970-01-01 00:00:00Z" in lines and "last ranking  never" in lines
    assert "policy        G 100  theta 0.1  S 2.5  omega 0.25" in lines
    assert "re-check      running: fetches 4: alive 3 (0.750 …" in lines
    data = json.loads(xyleme(repo, "status", "--json"))
    assert data["live"] == live and data["clock"] == {"now": 86_400.0, "speed": 60.0}
    assert data["live_source"] == "checkpoint" and 0 <= data["live_age"] < 60


def test_recheck_checks_its_options_and_the_repository_before_fetching(repo, tmp_path):
    assert "Invalid value for '--strategy'" in xyleme(repo, "recheck", "--strategy", "x", code=2)
    assert "sample" in xyleme(repo, "recheck", "--sample", "-1", code=2)
    assert "nothing to re-check" in xyleme(repo, "recheck", code=1)
    with DaemonLock(repo):  # a refused run lets go of the repository
        pass
    assert "no such database file" in xyleme(tmp_path / "nowhere", "recheck", code=1)


def test_recheck_is_handed_to_the_daemon_holding_the_repository(repo, monkeypatch):
    handed = {}

    def hand_to_daemon(repository, name, args):
        handed.update(name=name, args=args)
        return commands.Answer("re-check started by the daemon", {"started": True})

    monkeypatch.setattr("xyleme.cli.recheck.hand_to_daemon", hand_to_daemon)
    with DaemonLock(repo):
        output = xyleme(repo, "recheck", "--strategy", "ai", "--budget", "5", "--json")
    assert json.loads(output) == {
        "ok": True,
        "message": "re-check started by the daemon",
        "started": True,
    }
    assert handed["name"] == "recheck"
    assert handed["args"] == RecheckRequest(strategy="ai", budget=5).as_args()
