"""The LiveRank benchmark runs end to end and ends with the JSON line the issue asks for."""

import json

from ranking.liverank import STRATEGIES
from tests.smoke_runs import smoke_run


def test_small_benchmark_prints_every_cost_curve():
    # --smoke: 3,000 pages and no plot, so the run needs no [bench] package (matplotlib)
    done = smoke_run("bench_liverank.py")
    done.check_returncode()
    out = done.stdout
    summary = json.loads(out.strip().splitlines()[-1])
    assert set(summary["cost"]) == set(STRATEGIES)
    alphas = [f"{a / 10:.1f}" for a in range(1, 10)]
    for curve in summary["cost"].values():
        assert list(curve) == alphas
        assert all(value >= 1.0 for value in curve.values())
    assert 0.1 <= summary["alive_fraction"] <= 0.35
    assert summary["n_pages"] == 3000 and summary["plot"] is None
