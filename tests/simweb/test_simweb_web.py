"""The generated web: deterministic, web-shaped, Poisson changes, faults at their rates."""

import math

import numpy as np
import pytest

from metadata import canonicalize_url
from xyleme.simweb import (
    DAY,
    Fault,
    FaultSettings,
    GroundTruth,
    Kind,
    LastModified,
    Lifecycles,
    PageState,
    Renderer,
    Robots,
    SettingsError,
    SimWeb,
    SimWebSettings,
)


@pytest.fixture(scope="module")
def web():
    return SimWeb(SimWebSettings(hosts=20, pages=5000, seed=11))


def test_same_seed_same_web_and_bodies():
    settings = SimWebSettings(hosts=5, pages=400, seed=3)
    one, two = SimWeb(settings), SimWeb(settings)
    assert np.array_equal(one.structure.link_targets, two.structure.link_targets)
    at = settings.epoch + 5 * DAY
    r1, r2 = Renderer(one), Renderer(two)
    for page in range(0, 400, 7):
        v1, v2 = one.version(page, at), two.version(page, at)
        assert v1 == v2
        assert r1.page(page, v1) == r2.page(page, v2)


def test_another_seed_another_web():
    one = SimWeb(SimWebSettings(hosts=5, pages=400, seed=3))
    two = SimWeb(SimWebSettings(hosts=5, pages=400, seed=4))
    assert not np.array_equal(one.structure.rate, two.structure.rate)


def test_page_and_host_counts_and_xml_share(web):
    st = web.structure
    assert st.page_count == 5000 and len(web.seed_urls()) == 20
    assert st.is_xml.mean() == pytest.approx(0.2, abs=0.01)
    assert all(st.kind[st.home] == Kind.HTML)
    assert {Kind(k) for k in np.unique(st.kind)} == set(Kind)


def test_links_are_mostly_intra_host_and_xml_data_links_only_to_xml(web):
    st = web.structure
    sources = np.repeat(np.arange(st.page_count), np.diff(st.link_offsets))
    targets = st.link_targets
    intra = (st.host_of[sources] == st.host_of[targets]).mean()
    assert 0.75 < intra < 0.95
    from_data = st.kind[sources] == Kind.XML
    assert st.is_xml[targets[from_data]].all()
    from_html = st.kind[sources] == Kind.HTML
    assert st.is_xml[targets[from_html]].any() and not st.is_xml[targets[from_html]].all()


def test_in_degree_is_heavy_tailed(web):
    indegree = np.bincount(web.structure.link_targets, minlength=web.structure.page_count)
    assert indegree.max() > 20 * np.median(indegree)
    top_one_percent = np.sort(indegree)[-50:].sum()
    assert top_one_percent > 0.1 * indegree.sum()


def test_every_page_is_reachable_from_its_home_page(web):
    st = web.structure
    seen = np.zeros(st.page_count, dtype=bool)
    frontier = list(st.home)
    seen[frontier] = True
    while frontier:
        page = frontier.pop()
        for target in st.link_targets[st.link_offsets[page] : st.link_offsets[page + 1]]:
            if not seen[target]:
                seen[target] = True
                frontier.append(int(target))
    assert seen.all()


def test_content_version_counts_changes_at_or_before_t(web):
    from_start = web.lifecycles.birth == web.settings.epoch
    page = int(np.flatnonzero((web.structure.rate * DAY > 5) & from_start)[0])
    times = web.changes.until(page, web.settings.epoch + 10 * DAY)
    assert len(times) > 10
    for k, when in enumerate(times, start=1):
        assert web.version(page, when - 1) == k - 1
        assert web.version(page, when) == k
        assert web.last_change(page, k) == when
    assert all(t == int(t) for t in times)
    assert times == sorted(set(times))


def test_change_counts_follow_the_poisson_rates(web):
    span = 30 * DAY
    at = web.settings.epoch + span
    rates = web.structure.rate
    from_start = web.lifecycles.birth == web.settings.epoch
    changing = np.flatnonzero((rates > 0) & (rates * DAY < 2) & from_start)[:1500]
    observed = sum(len(web.changes.until(int(p), at)) for p in changing)
    expected = float(rates[changing].sum() * span)
    assert abs(observed - expected) < 4 * math.sqrt(expected)


def test_change_rates_span_never_to_many_times_a_day(web):
    per_day = web.structure.rate * DAY
    assert (per_day == 0).mean() == pytest.approx(0.2, abs=0.001)
    changing = per_day[per_day > 0]
    assert changing.min() < 0.05 and changing.max() > 10


def test_pages_that_never_change_stay_at_version_zero(web):
    page = int(np.flatnonzero(web.structure.rate == 0)[0])
    assert web.version(page, web.settings.epoch + 1000 * DAY) == 0


def test_link_changing_pages_change_links_between_versions(web):
    st = web.structure
    late = web.settings.epoch + 60 * DAY
    changed = 0
    for page in np.flatnonzero(st.relinks & (st.rate * DAY > 1))[:40].tolist():
        version = web.version(page, late)
        if web.links(page, 0) != web.links(page, version):
            changed += 1
    assert changed > 30
    born_late = web.lifecycles.birth > web.settings.epoch
    steady = next(
        p
        for p in np.flatnonzero(~st.relinks & (st.rate > 0)).tolist()
        if not born_late[st.link_targets[st.link_offsets[p] : st.link_offsets[p + 1]]].any()
    )
    assert web.links(steady, 0) == web.links(steady, web.version(steady, late))


def test_each_page_fault_at_its_configured_rate(web):
    faults = web.settings.faults
    counts = np.bincount(web.structure.fault, minlength=len(Fault))
    candidates = web.structure.page_count - web.structure.host_count
    redirects = counts[Fault.REDIRECT] + counts[Fault.REDIRECT_CHAIN] + counts[Fault.REDIRECT_LOOP]
    assert redirects == round(faults.redirect_fraction * candidates)
    assert counts[Fault.REDIRECT_LOOP] == 1
    assert counts[Fault.GZIP] + counts[Fault.GZIP_BOMB] == round(faults.gzip_fraction * candidates)
    assert counts[Fault.GZIP_BOMB] == 1
    for fault, fraction in [
        (Fault.SLOW, faults.slow_fraction),
        (Fault.OVERSIZE, faults.oversize_fraction),
        (Fault.MALFORMED, faults.malformed_fraction),
        (Fault.WRONG_TYPE, faults.wrong_type_fraction),
        (Fault.MISSING_TYPE, faults.missing_type_fraction),
    ]:
        assert counts[fault] == round(fraction * candidates)
    assert not web.structure.fault[web.structure.home].any()


def test_host_variants_at_their_rates():
    settings = SimWebSettings(hosts=200, pages=2000, seed=5)
    st = SimWeb(settings).structure
    robots = np.bincount(st.robots, minlength=len(Robots))
    assert robots[Robots.NOT_FOUND] == 10 and robots[Robots.SERVER_ERROR] == 6
    assert robots[Robots.TIMEOUT] == 4
    assert st.crawl_delay.sum() == round(0.1 * robots[Robots.NORMAL])
    assert st.disallow.sum() == 60
    liars = np.bincount(st.last_modified, minlength=len(LastModified))
    assert liars[1:].sum() == 20 and min(liars[1:]) >= 6
    assert st.trap.sum() == 1


def test_deaths_and_births_at_their_rates(web):
    truth = GroundTruth(web)
    faults = web.settings.faults
    candidates = web.structure.page_count - web.structure.host_count
    life = web.lifecycles
    assert np.isfinite(life.death).sum() == round(faults.dying_fraction * candidates)
    assert (life.birth > web.settings.epoch).sum() == round(faults.new_page_fraction * candidates)
    dying = np.isfinite(life.death)
    gone = (life.dead_status[dying] == 410).mean()
    assert gone == pytest.approx(faults.gone_fraction, abs=0.08)
    # After one mean lifetime about 1 - 1/e of the dying pages are dead.
    at = web.settings.epoch + faults.mean_lifetime_days * DAY
    dead = ((life.death <= at) & dying).sum() / dying.sum()
    assert 0.5 < dead < 0.75
    assert not truth.alive(web.settings.epoch)[life.birth > web.settings.epoch].any()


def test_a_page_is_unborn_alive_then_dead():
    web = SimWeb(SimWebSettings(hosts=3, pages=300, seed=2))
    life = web.lifecycles
    page = int(np.flatnonzero((life.birth > web.settings.epoch) & np.isfinite(life.death))[0])
    born, dies = life.birth[page], life.death[page]
    assert web.state(page, born - 1) is PageState.UNBORN
    assert web.state(page, born) is PageState.ALIVE
    assert web.state(page, dies - 1) is PageState.ALIVE
    assert web.state(page, dies) is PageState.DEAD


def test_links_to_pages_born_later_appear_only_in_later_versions():
    web = SimWeb(SimWebSettings(hosts=3, pages=600, seed=2))
    birth = web.lifecycles.birth
    for page in range(600):
        for version in (0, web.version(page, web.settings.epoch + 40 * DAY)):
            began = web.last_change(page, version)
            assert all(birth[t] <= began for t in web.links(page, version))


def test_no_faults_means_none_at_all():
    web = SimWeb(SimWebSettings(hosts=10, pages=1000, seed=1).without_faults())
    st = web.structure
    assert not st.fault.any() and not st.trap.any() and not st.dead_host_link.any()
    assert (st.robots == Robots.NORMAL).all()
    assert np.isinf(web.lifecycles.death).all()
    assert (web.lifecycles.birth == web.settings.epoch).all()


def test_a_lifecycle_model_can_be_plugged_in():
    def everyone_dies_on_day_three(structure):
        n = structure.page_count
        epoch = structure.settings.epoch
        return Lifecycles(
            birth=np.full(n, epoch),
            death=np.full(n, epoch + 3 * DAY),
            dead_status=np.full(n, 410, dtype=np.int16),
        )

    web = SimWeb(SimWebSettings(hosts=2, pages=50, seed=1), lifecycle=everyone_dies_on_day_three)
    assert not GroundTruth(web).alive(web.settings.epoch + 3 * DAY).any()


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"hosts": 0}, "hosts"),
        ({"hosts": 10, "pages": 5}, "pages"),
        ({"xml_fraction": 1.5}, "xml_fraction"),
        ({"min_changes_per_day": 5.0, "max_changes_per_day": 1.0}, "min_changes_per_day"),
    ],
)
def test_bad_settings_are_refused_by_name(values, named):
    with pytest.raises(SettingsError, match=named):
        SimWebSettings(**values)


def test_fault_fractions_that_cannot_add_up_are_refused():
    with pytest.raises(SettingsError, match="add up"):
        FaultSettings(redirect_fraction=0.6, gzip_fraction=0.6)
    with pytest.raises(SettingsError, match="slow_fraction"):
        FaultSettings(slow_fraction=-0.1)


def test_settings_round_trip_through_plain_values():
    settings = SimWebSettings(hosts=7, pages=70, seed=9).without_faults()
    assert SimWebSettings.from_dict(settings.to_dict()) == settings


def test_page_urls_are_already_canonical_for_the_metadata(web):
    for page in range(0, web.structure.page_count, 7):
        assert canonicalize_url(web.url(page)) == web.url(page)


def test_the_link_graph_is_every_live_pages_links_at_that_time():
    web = SimWeb(SimWebSettings(hosts=4, pages=500, seed=13))
    truth = GroundTruth(web)
    for days in (0, 9, 40):
        at = web.settings.epoch + days * DAY
        src, dst = truth.link_graph(at)
        assert src.dtype == dst.dtype == np.int32
        expected = [
            (page, target)
            for page in range(truth.page_count)
            for target in truth.links(page, at).tolist()
        ]
        assert list(zip(src.tolist(), dst.tolist(), strict=True)) == expected
        live_src, live_dst = truth.link_graph(at, alive_only=True)
        assert truth.alive(at)[live_src].all() and truth.alive(at)[live_dst].all()
        assert live_src.size == truth.alive(at)[dst].sum()


def test_a_lifecycle_model_must_give_whole_seconds_and_deaths_after_births():
    with pytest.raises(ValueError, match="whole seconds"):
        Lifecycles(np.array([0.5]), np.array([np.inf]), np.array([404]))
    with pytest.raises(ValueError, match="after it is born"):
        Lifecycles(np.array([10.0]), np.array([10.0]), np.array([404]))


def test_versions_and_last_changes_for_every_page_at_once(web):
    truth = GroundTruth(web)
    at = web.settings.epoch + 12 * DAY
    versions, began = truth.versions(at), truth.last_changes(at)
    for page in range(0, truth.page_count, 97):
        changes = truth.change_times(page, at)
        assert versions[page] == len(changes)
        if web.lifecycles.birth[page] > at:
            assert np.isnan(began[page])
        else:
            assert began[page] == (changes[-1] if changes else web.lifecycles.birth[page])


@pytest.mark.parametrize(
    "values",
    [
        {"hosts": 1, "pages": 1},
        {"hosts": 2, "pages": 50, "xml_fraction": 0.0},
        {"hosts": 2, "pages": 50, "xml_fraction": 1.0, "feed_fraction": 1.0},
        {"hosts": 2, "pages": 50, "mean_out_degree": 0.0},
        {"hosts": 5, "pages": 100, "intra_host_fraction": 0.0, "never_change_fraction": 1.0},
        {
            "hosts": 5,
            "pages": 100,
            "faults": FaultSettings(dying_fraction=1.0, new_page_fraction=1.0),
        },
    ],
)
def test_extreme_settings_still_make_a_web(values):
    web = SimWeb(SimWebSettings(**values))
    truth, renderer = GroundTruth(web), Renderer(web)
    at = web.settings.epoch + 40 * DAY
    for page in range(truth.page_count):
        assert renderer.page(page, web.version(page, at))
    src, _ = truth.link_graph(at)
    assert len(truth.to_json(at)["pages"]) == truth.page_count
    assert truth.alive(at)[src].all()
