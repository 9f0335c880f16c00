"""SW502/SW503 only where the law asks for calculations (issue 13 item 9).

The comparison runs where a town permit (SW101) or a SWPPP (SW102) is required; elsewhere it
is ``info`` "not required".  The measured figure is the increase the devices must handle,
against a limit of 0; no increase is a ``pass``.
"""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import box

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.hydrology import (
    calculations_required,
    check_peak_discharge,
    check_runoff_volume,
    runoff_results,
)
from gis_sw.analysis.permits import check_permit_threshold
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.maps.labels import finding_label
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def frame(rows: list[dict[str, object]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def layers() -> LayerSet:
    return make_layerset(
        CRS,
        {
            "parcels": frame([{"parcel_id": "P1", "geometry": box(0, 0, 40, 40)}]),
            "zoning": frame([{"zone": "R-20", "geometry": box(-50, -50, 250, 150)}]),
            "buildings": frame([{"building_id": "B1", "geometry": box(30, 30, 38, 38)}]),
            "soils": frame([{"hsg": "B", "geometry": box(-50, -50, 250, 150)}]),
        },
        {},
    )


def proposal(
    width_ft: float, *, impervious: bool = True, larger_plan: str | None = "no"
) -> Proposals:
    """A 10 ft deep disturbance ``width_ft`` wide (R-20: the permit test is 250 sq ft) on a
    1,600 sq ft lot, so that a patio of that size moves the lot's rounded curve number."""
    dist = frame([{"proposal_id": "J", "geometry": box(2, 2, 2 + width_ft, 12)}])
    imp = (
        frame([{"proposal_id": "J", "surface": "patio", "geometry": box(2, 2, 2 + width_ft, 12)}])
        if impervious
        else None
    )
    attrs = pd.DataFrame(
        [{"proposal_id": "J", "land_use": "single_family", "part_of_larger_plan": larger_plan}]
    )
    return make_proposals(CRS, dist, None, attrs, imp)


def ctx_for(ruleset: Ruleset, width_ft: float, **kw: object) -> CheckContext:
    return CheckContext(layers(), proposal(width_ft, **kw), ruleset)  # type: ignore[arg-type]


def test_ruleset_permit_threshold_in_r20(ruleset: Ruleset) -> None:
    assert ruleset.permit.threshold_any_zone_sqft == 250.0


@pytest.mark.parametrize(
    ("width_ft", "required"),
    [(24.999, False), (25.0, True), (25.001, True)],
    ids=["249.99-sq-ft", "250-sq-ft", "250.01-sq-ft"],
)
def test_sw502_sw503_boundary_info_review_at_the_permit_threshold(
    ruleset: Ruleset, width_ft: float, required: bool
) -> None:
    ctx = ctx_for(ruleset, width_ft)
    permit = check_permit_threshold(ctx).iloc[0]["outcome"]
    assert permit == ("required" if required else "pass")
    assert calculations_required(ctx) == {"J": required}
    for check in (check_runoff_volume, check_peak_discharge):
        row = check(ctx).iloc[0]
        assert row["threshold"] == 0.0
        if required:
            assert row["outcome"] == "review"  # a new patio raises runoff
            assert row["measured"] > 0
            assert "the stormwater devices must handle an increase of" in row["message"]
        else:
            assert row["outcome"] == "info"
            assert row["message"].startswith("Not required: no town permit is required (SW101)")
            assert pd.isna(row["measured"])


def test_the_increase_is_the_measured_figure(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, 25.0)
    (result,) = runoff_results(ctx)
    assert result.pre is not None
    assert result.post is not None
    year = ruleset.storms.design_return_period_yr
    volume = result.post.storm(year)["volume_cf"] - result.pre.storm(year)["volume_cf"]
    peak = result.post.storm(year)["qp_cfs"] - result.pre.storm(year)["qp_cfs"]
    sw502 = check_runoff_volume(ctx).iloc[0]
    sw503 = check_peak_discharge(ctx).iloc[0]
    assert sw502["measured"] == pytest.approx(volume)
    assert sw503["measured"] == pytest.approx(peak)
    assert volume > 0.5
    assert peak > 0.005
    assert (sw502["unit"], sw503["unit"]) == ("cu ft", "cfs")


def test_a_swppp_alone_asks_for_the_comparison(ruleset: Ruleset) -> None:
    # 95 sq ft: no town permit, but part of a larger plan of development (SW102: a SWPPP)
    ctx = ctx_for(ruleset, 9.5, larger_plan="yes")
    assert check_permit_threshold(ctx).iloc[0]["outcome"] == "pass"
    assert calculations_required(ctx) == {"J": True}
    assert check_runoff_volume(ctx).iloc[0]["outcome"] == "review"


def test_undetermined_swppp_runs_the_comparison_and_says_so(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, 9.5, larger_plan=None)
    assert calculations_required(ctx) == {"J": None}
    row = check_runoff_volume(ctx).iloc[0]
    assert row["outcome"] == "review"
    assert "Whether the comparison is required is undetermined" in row["message"]


def test_95_sq_ft_job_gets_no_runoff_review(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, 9.5, larger_plan="no")
    for check in (check_runoff_volume, check_peak_discharge):
        row = check(ctx).iloc[0]
        assert row["outcome"] == "info"
        assert "not asked for" in row["message"]


def test_sw502_sw503_pass_with_no_increase(ruleset: Ruleset) -> None:
    # disturbance without new impervious surface on open space in good condition: the
    # disturbed ground counts as the same cover, so post equals pre
    ctx = ctx_for(ruleset, 30.0, impervious=False)
    for check in (check_runoff_volume, check_peak_discharge):
        row = check(ctx).iloc[0]
        assert row["outcome"] == "pass", row["message"]
        assert (row["measured"], row["threshold"]) == (0.0, 0.0)
        assert "no increase for the devices to handle" in row["message"]
        assert "0.005" not in row["message"]


@pytest.mark.parametrize(
    ("measured", "expected"),
    [
        (0.006, "SW503 0.01 cfs > 0 cfs"),
        (0.195, "SW503 0.2 cfs > 0 cfs"),
        (0.0, "SW503 0.0 cfs = 0 cfs"),
    ],
)
def test_labels_show_the_increase_against_zero(measured: float, expected: str) -> None:
    assert finding_label("SW503", "review", measured, 0.0, "cfs") == expected


def test_sample_runoff_rows_of_expected_csv(ruleset: Ruleset) -> None:
    from pathlib import Path

    from gis_sw.analysis.engine import run_rules
    from gis_sw.layers.read import read_layers, read_proposals

    sample = Path(__file__).resolve().parents[1] / "data" / "sample"
    expected = pd.read_csv(sample / "expected.csv")
    want = expected[expected["rule_id"].isin(["SW502", "SW503"])]
    assert set(want["proposal_id"]) >= {"P02-patio-240-r20", "P03-patio-300-r20"}
    layers = read_layers(sample / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(sample / "proposals.gpkg", ruleset=ruleset)
    found = run_rules(layers, proposals, ruleset)
    got = {(r.proposal_id, r.rule_id): r.outcome for r in found.itertuples()}
    for row in want.itertuples():
        assert got[(row.proposal_id, row.rule_id)] == row.outcome, row.note
    # data/sample/README.md's hand calculation: 734.6 cu ft and 0.195 cfs more for P15
    p15 = found[found["proposal_id"] == "P15-new-house-runoff"].set_index("rule_id")
    assert "must handle an increase of 734.6 cu ft" in p15.loc["SW502", "message"]
    assert "must handle an increase of 0.195 cfs" in p15.loc["SW503", "message"]
    assert round(float(p15.loc["SW502", "measured"]), 1) == 734.6
