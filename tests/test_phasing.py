"""SW301: not more than five acres disturbed at any one time (§ 183-7B(1)(d))."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.phasing import (
    DisturbanceSweep,
    check_five_acre_limit,
    disturbance_timeline,
    naive_timeline,
    proposal_timeline,
    to_day_numbers,
)
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset
from gis_sw.units import SQFT_PER_ACRE

WIDTH_FT = 400.0


def lot(acres: float, x0: float = 0.0, y0: float = 0.0) -> shapely.Polygon:
    """A 400 ft wide rectangle of ``acres`` with its lower-left corner at (x0, y0)."""
    return shapely.box(x0, y0, x0 + WIDTH_FT, y0 + acres * SQFT_PER_ACRE / WIDTH_FT)


def run(
    ruleset: Ruleset,
    polygons: list[dict[str, Any]],
    attributes: dict[str, Any] | None = None,
) -> gpd.GeoDataFrame:
    rows = [{"proposal_id": "P1", **p} for p in polygons]
    geoms = [r.pop("geometry") for r in rows]
    frame = gpd.GeoDataFrame(rows, geometry=geoms, crs=ruleset.working_crs)
    attrs = None
    if attributes is not None:
        attrs = pd.DataFrame([{"proposal_id": "P1", **attributes}])
    proposals = make_proposals(ruleset.working_crs, frame, attributes=attrs)
    ctx = CheckContext(make_layerset(ruleset.working_crs, {}), proposals, ruleset)
    return check_five_acre_limit(ctx)


def one(findings: gpd.GeoDataFrame) -> pd.Series:
    assert len(findings) == 1
    return findings.iloc[0]


def dated(geom: Any, start: str, end: str, phase: str, pid: str) -> dict[str, Any]:
    return {
        "geometry": geom,
        "start_date": start,
        "end_date": end,
        "phase": phase,
        "disturbance_id": pid,
    }


def test_two_3_acre_phases_open_together_fail_at_6_acres(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(3), "2026-04-01", "2026-06-30", "1", "A"),
                dated(lot(3, x0=1000), "2026-05-01", "2026-08-31", "2", "B"),
            ],
        )
    )
    assert row["outcome"] == "fail"
    assert row["measured"] == pytest.approx(6.00, abs=0.005)
    assert row["threshold"] == 5.0
    assert "from 2026-05-01 to 2026-06-30" in row["message"]
    assert "phases 1, 2" in row["message"]
    assert "polygons A, B" in row["message"]
    assert row["geometry"].area / SQFT_PER_ACRE == pytest.approx(6.00, abs=0.005)


def test_two_3_acre_phases_in_sequence_pass(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(3), "2026-04-01", "2026-06-30", "1", "A"),
                dated(lot(3, x0=1000), "2026-07-01", "2026-08-31", "2", "B"),
            ],
        )
    )
    assert row["outcome"] == "pass"
    assert row["measured"] == pytest.approx(3.00, abs=0.005)
    # The earliest peak is phase 1; it holds until phase 1 is stabilised.
    assert "from 2026-04-01 to 2026-06-30" in row["message"]


def test_phases_handing_over_on_the_same_day_overlap_for_that_day(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(3), "2026-04-01", "2026-07-01", "1", "A"),
                dated(lot(3, x0=1000), "2026-07-01", "2026-08-31", "2", "B"),
            ],
        )
    )
    assert row["outcome"] == "fail"
    assert row["measured"] == pytest.approx(6.00, abs=0.005)
    assert "from 2026-07-01 to 2026-07-01" in row["message"]


def test_3_acre_polygons_overlapping_by_1_5_acres_give_4_5_acres_and_pass(
    ruleset: Ruleset,
) -> None:
    a, b = lot(3), lot(3, x0=200.0)  # shifted half a width: 1.5 acres shared
    assert shapely.intersection(a, b).area / SQFT_PER_ACRE == pytest.approx(1.5)
    row = one(
        run(
            ruleset,
            [
                dated(a, "2026-04-01", "2026-06-30", "1", "A"),
                dated(b, "2026-04-15", "2026-06-30", "1", "B"),
            ],
        )
    )
    assert row["outcome"] == "pass"
    assert row["measured"] == pytest.approx(4.50, abs=0.005)
    assert row["geometry"].area / SQFT_PER_ACRE == pytest.approx(4.50, abs=0.005)


@pytest.mark.parametrize(
    ("acres", "outcome"),
    [(4.99, "pass"), (5.00, "pass"), (5.01, "fail")],
    ids=["4.99-acres-at-once", "exactly-5.00-acres-at-once", "5.01-acres-at-once"],
)
def test_sw301_boundary_pass_fail_at_five_acres(
    ruleset: Ruleset, acres: float, outcome: str
) -> None:
    half = acres / 2
    row = one(
        run(
            ruleset,
            [
                dated(lot(half), "2026-04-01", "2026-06-30", "1", "A"),
                dated(lot(half, x0=WIDTH_FT), "2026-04-01", "2026-05-31", "1", "B"),
            ],
        )
    )
    assert row["outcome"] == outcome
    assert row["measured"] == pytest.approx(acres, abs=0.005)


def test_approved_swppp_turns_a_fail_into_review_citing_it(ruleset: Ruleset) -> None:
    polygons = [
        dated(lot(3), "2026-04-01", "2026-06-30", "1", "A"),
        dated(lot(3, x0=1000), "2026-05-01", "2026-08-31", "2", "B"),
    ]
    approved = one(run(ruleset, polygons, {"approved_swppp": True}))
    assert approved["outcome"] == "review"
    assert "approved SWPPP" in approved["message"]
    assert approved["measured"] == pytest.approx(6.00, abs=0.005)
    not_approved = one(run(ruleset, polygons, {"approved_swppp": False}))
    assert not_approved["outcome"] == "fail"


def test_approved_swppp_does_not_change_a_pass(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [dated(lot(4), "2026-04-01", "2026-06-30", "1", "A")],
            {"approved_swppp": True},
        )
    )
    assert row["outcome"] == "pass"


@pytest.mark.parametrize(
    ("acres", "outcome"),
    [(5.00, "pass"), (5.01, "review")],
    ids=["undated-5.00-acres-whole", "undated-5.01-acres-whole"],
)
def test_plan_without_dates(ruleset: Ruleset, acres: float, outcome: str) -> None:
    row = one(run(ruleset, [{"geometry": lot(acres), "phase": "1"}]))
    assert row["outcome"] == outcome
    assert row["measured"] == pytest.approx(acres, abs=0.005)
    if outcome == "review":
        assert "Phasing plan gives no dates" in row["message"]


def test_some_polygons_undated_review_when_they_could_break_the_limit(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(3), "2026-04-01", "2026-06-30", "1", "A"),
                {"geometry": lot(3, x0=1000), "phase": "2", "disturbance_id": "B"},
            ],
        )
    )
    assert row["outcome"] == "review"
    assert "no dates for some polygons" in row["message"]
    assert "B" in row["message"]
    assert row["measured"] == pytest.approx(3.00, abs=0.005)


def test_dated_peak_over_the_limit_fails_even_with_undated_polygons(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(3), "2026-04-01", "2026-06-30", "1", "A"),
                dated(lot(3, x0=1000), "2026-04-01", "2026-06-30", "1", "B"),
                {"geometry": lot(1, x0=2000), "phase": "2", "disturbance_id": "C"},
            ],
        )
    )
    assert row["outcome"] == "fail"
    assert "C have no start_date/end_date" in row["message"]


def test_reversed_dates_are_treated_as_missing(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(3), "2026-06-30", "2026-04-01", "1", "A"),
                dated(lot(3, x0=1000), "2026-04-01", "2026-06-30", "2", "B"),
            ],
        )
    )
    assert row["outcome"] == "review"
    assert "missing or reversed dates" in row["message"]


def test_re_disturbed_polygon_counts_again_only_while_open(ruleset: Ruleset) -> None:
    p, q = lot(3), lot(3, x0=1000)
    row = one(
        run(
            ruleset,
            [
                dated(p, "2026-04-01", "2026-05-31", "1", "P-first"),
                dated(q, "2026-06-15", "2026-09-15", "2", "Q"),
                dated(p, "2026-09-01", "2026-10-31", "3", "P-again"),
            ],
        )
    )
    assert row["outcome"] == "fail"
    assert row["measured"] == pytest.approx(6.00, abs=0.005)
    assert "from 2026-09-01 to 2026-09-15" in row["message"]
    assert "phases 2, 3" in row["message"]


def test_same_polygon_listed_twice_at_once_counts_once(ruleset: Ruleset) -> None:
    row = one(
        run(
            ruleset,
            [
                dated(lot(4), "2026-04-01", "2026-06-30", "1", "A"),
                dated(lot(4), "2026-05-01", "2026-07-31", "2", "A-again"),
            ],
        )
    )
    assert row["outcome"] == "pass"
    assert row["measured"] == pytest.approx(4.00, abs=0.005)


def test_timeline_steps(ruleset: Ruleset) -> None:
    timeline = disturbance_timeline(
        [lot(3), lot(3, x0=200.0), lot(1, x0=2000)],
        ["2026-04-01", "2026-04-15", "2026-07-01"],
        ["2026-06-30", "2026-05-31", "2026-07-31"],
    )
    assert timeline.days == (
        date(2026, 4, 1),
        date(2026, 4, 15),
        date(2026, 6, 1),
        date(2026, 7, 1),
        date(2026, 8, 1),
    )
    assert np.round(timeline.acres, 2).tolist() == [3.0, 4.5, 3.0, 1.0, 0.0]


def test_proposal_timeline_skips_undated_and_gives_none_without_dates(
    ruleset: Ruleset,
) -> None:
    frame = gpd.GeoDataFrame(
        {
            "proposal_id": ["P1", "P1", "P2"],
            "start_date": ["2026-04-01", None, None],
            "end_date": ["2026-04-30", None, None],
        },
        geometry=[lot(2), lot(3, x0=1000), lot(1)],
        crs=ruleset.working_crs,
    )
    proposals = make_proposals(ruleset.working_crs, frame)
    timeline = proposal_timeline(proposals, "P1")
    assert timeline is not None
    assert np.round(timeline.acres, 2).tolist() == [2.0, 0.0]
    assert proposal_timeline(proposals, "P2") is None


def test_each_proposal_gets_its_own_row(ruleset: Ruleset) -> None:
    frame = gpd.GeoDataFrame(
        {
            "proposal_id": ["P1", "P2", "P2"],
            "start_date": ["2026-04-01", "2026-04-01", "2026-04-01"],
            "end_date": ["2026-04-30", "2026-04-30", "2026-04-30"],
        },
        geometry=[lot(4), lot(3, x0=1000), lot(3, x0=2000)],
        crs=ruleset.working_crs,
    )
    proposals = make_proposals(ruleset.working_crs, frame)
    ctx = CheckContext(make_layerset(ruleset.working_crs, {}), proposals, ruleset)
    findings = check_five_acre_limit(ctx).set_index("proposal_id")
    assert findings.loc["P1", "outcome"] == "pass"
    assert findings.loc["P2", "outcome"] == "fail"
    assert findings.loc["P2", "measured"] == pytest.approx(6.00, abs=0.005)


def _large_plan(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` lots on a grid, a third of them overlapping a neighbour, random dates."""
    rng = np.random.default_rng(seed)
    cols = 20
    x = (np.arange(n) % cols) * 300.0
    y = (np.arange(n) // cols) * 300.0
    shift = np.where(rng.random(n) < 0.35, 150.0, 0.0)  # overlaps the next lot
    sizes = rng.uniform(150, 250, n)
    geoms = shapely.box(x + shift, y, x + shift + sizes, y + sizes)
    start = rng.integers(0, 700, n)
    end = start + rng.integers(10, 120, n)
    base = np.datetime64("2026-01-01", "D")
    return geoms, base + start, base + end


def test_sweep_matches_naive_union_on_300_polygons_and_is_faster(ruleset: Ruleset) -> None:
    geoms, start, end = _large_plan(300, seed=183)
    t0 = time.perf_counter()
    fast = disturbance_timeline(geoms, start, end)
    t1 = time.perf_counter()
    slow = naive_timeline(geoms, start, end)
    t2 = time.perf_counter()
    assert fast.days == slow.days
    np.testing.assert_allclose(fast.area_sqft, slow.area_sqft, rtol=0, atol=1e-3)
    sweep = DisturbanceSweep(geoms, to_day_numbers(start), to_day_numbers(end))
    peak = sweep.peak()
    assert peak is not None
    assert peak.area_sqft == pytest.approx(float(slow.area_sqft.max()), abs=1e-3)
    assert peak.geometry.area == pytest.approx(peak.area_sqft, abs=1e-3)
    print(f"sweep {t1 - t0:.3f} s, naive {t2 - t1:.3f} s, ratio {(t2 - t1) / (t1 - t0):.1f}x")


def test_engine_cites_section_183_7b1d(ruleset: Ruleset) -> None:
    from gis_sw.analysis.engine import run_rules

    frame = gpd.GeoDataFrame(
        {"proposal_id": ["P1"], "start_date": ["2026-04-01"], "end_date": ["2026-04-30"]},
        geometry=[lot(6)],
        crs=ruleset.working_crs,
    )
    proposals = make_proposals(ruleset.working_crs, frame)
    findings = run_rules(
        make_layerset(ruleset.working_crs, {}), proposals, ruleset, select=["SW3", "SW4"]
    )
    assert findings["rule_id"].tolist() == ["SW301", "SW401", "SW402", "SW403"]
    assert findings["outcome"].tolist() == ["fail", "required", "required", "required"]
    assert findings.iloc[0]["citation"] == "§ 183-7B(1)(d)"
    assert findings.iloc[0]["severity"] == "high"


SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.mark.skipif(not (SAMPLE / "proposals.gpkg").exists(), reason="sample data not built")
def test_sample_7_acre_commercial_case_matches_the_readme(ruleset: Ruleset) -> None:
    from gis_sw.layers.read import read_proposals

    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    ctx = CheckContext(make_layerset(ruleset.working_crs, {}), proposals, ruleset)
    findings = check_five_acre_limit(ctx).set_index("proposal_id")
    row = findings.loc["P07-commercial-phased-7ac"]
    # data/sample/README.md: peak 5.50 acres (phases 1 and 2) from 2027-08-01 to 2027-10-31.
    assert row["outcome"] == "fail"
    assert row["measured"] == pytest.approx(5.50, abs=0.005)
    assert "from 2027-08-01 to 2027-10-31" in row["message"]
    assert "phases 1, 2" in row["message"]
    expected = pd.read_csv(SAMPLE / "expected.csv", dtype=str).fillna("")
    for case in expected[expected["rule_id"] == "SW301"].itertuples():
        assert findings.loc[case.proposal_id, "outcome"] == case.outcome, case.note
    timeline = proposal_timeline(proposals, "P07-commercial-phased-7ac")
    assert timeline is not None
    assert timeline.days[:3] == (date(2027, 4, 1), date(2027, 8, 1), date(2027, 11, 1))
    assert np.round(timeline.acres, 2).tolist() == [3.0, 5.5, 2.5, 0.0, 1.5, 0.0]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 6),  # x cell
            st.integers(0, 2),  # y cell
            st.integers(40, 160),  # side, ft: neighbours overlap above 100
            st.integers(0, 60),  # start day
            st.integers(0, 40),  # days open after the start
        ),
        min_size=1,
        max_size=10,
    )
)
def test_sweep_equals_naive_union_on_random_plans(
    plan: list[tuple[int, int, int, int, int]],
) -> None:
    geoms = [shapely.box(x * 100, y * 100, x * 100 + s, y * 100 + s) for x, y, s, _, _ in plan]
    base = np.datetime64("2026-01-01", "D")
    starts = [base + a for *_, a, _ in plan]
    ends = [base + a + n for *_, a, n in plan]
    fast = disturbance_timeline(geoms, starts, ends)
    slow = naive_timeline(geoms, starts, ends)
    assert fast.days == slow.days
    np.testing.assert_allclose(fast.area_sqft, slow.area_sqft, rtol=0, atol=1e-6)
