"""One timestamp format for the CLI's tables and the dashboard's pages (xyleme.timestamps)."""

from __future__ import annotations

import numpy as np
import pytest

from xyleme.cli import listing
from xyleme.dashboard.rendering import templates
from xyleme.timestamps import when

MOMENT = 1_764_000_000.5  # 2025-11-24 16:00:00.5 UTC


def test_a_time_is_utc_to_the_second():
    assert when(MOMENT) == "2025-11-24 16:00:00Z"
    assert when(np.float64(MOMENT)) == when(np.int64(1_764_000_000)) == "2025-11-24 16:00:00Z"


@pytest.mark.parametrize("nothing", [None, float("nan"), float("inf"), -float("inf"), "12"])
def test_no_time_is_the_given_word(nothing):
    assert when(nothing) == "never"
    assert when(nothing, none="-") == "-"


def test_the_cli_and_the_dashboard_write_the_same_text():
    assert listing.when is when
    page = templates().from_string("{{ at | when }}|{{ missing | when }}")
    assert page.render(at=MOMENT, missing=None) == f"{when(MOMENT)}|-"
