"""Messages near a threshold (issue 13 item 6) for SW3xx/SW5xx and map labels.

"5.00 acres (217,801 sq ft) exceeds 5.00 acres" must read "5.00002 acres ... exceeds 5.00000
acres": a measured figure shown beside its limit gets the decimals the comparison needs.
"""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.phasing import check_five_acre_limit
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.outputs.maps.labels import finding_label
from gis_sw.outputs.summary import format_pair
from gis_sw.ruleset import Ruleset

LIMIT_SQFT = 5 * 43_560.0  # 217,800 sq ft


def sw301(ruleset: Ruleset, area_sqft: float, *, dated: bool = True) -> pd.Series:
    geom = shapely.box(0, 0, 400.0, area_sqft / 400.0)
    row = {"proposal_id": "P1", "phase": "1"}
    if dated:
        row |= {"start_date": "2026-05-01", "end_date": "2026-06-30"}
    frame = gpd.GeoDataFrame([row], geometry=[geom], crs=ruleset.working_crs)
    proposals = make_proposals(ruleset.working_crs, frame)
    ctx = CheckContext(make_layerset(ruleset.working_crs, {}), proposals, ruleset)
    found = check_five_acre_limit(ctx)
    assert len(found) == 1
    return found.iloc[0]


def test_ruleset_limit_is_five_acres(ruleset: Ruleset) -> None:
    assert ruleset.phasing.max_disturbed_acres * 43_560.0 == LIMIT_SQFT


@pytest.mark.parametrize(
    ("area_sqft", "outcome", "shown", "limit"),
    [
        (
            LIMIT_SQFT - 0.01,
            "pass",
            "just under 5.00 acres (217,799.99 sq ft)",
            "(217,800.00 sq ft)",
        ),
        (LIMIT_SQFT, "pass", "5.00 acres (217,800 sq ft)", "5.00 acres (217,800 sq ft)"),
        (
            LIMIT_SQFT + 0.01,
            "fail",
            "just over 5.00 acres (217,800.01 sq ft)",
            "(217,800.00 sq ft)",
        ),
        (
            LIMIT_SQFT + 1.0,
            "fail",
            "5.00002 acres (217,801 sq ft)",
            "5.00000 acres (217,800 sq ft)",
        ),
    ],
    ids=["217,799.99", "217,800", "217,800.01", "217,801"],
)
def test_sw301_boundary_peak_message_keeps_figure_and_limit_apart(
    ruleset: Ruleset, area_sqft: float, outcome: str, shown: str, limit: str
) -> None:
    row = sw301(ruleset, area_sqft)
    assert row["outcome"] == outcome
    message = row["message"]
    assert message.startswith(f"Peak disturbed area {shown} from 2026-05-01")
    verb = "exceeds" if outcome == "fail" else "is not more than"
    assert f" {verb} " in message
    assert limit in message.split(verb, 1)[1]


@pytest.mark.parametrize(
    ("area_sqft", "outcome", "text"),
    [
        (LIMIT_SQFT, "pass", "Whole disturbance 5.00 acres (217,800 sq ft) is not more than 5.00"),
        (
            LIMIT_SQFT + 1.0,
            "review",
            "whole disturbance 5.00002 acres (217,801 sq ft) exceeds 5.00000 acres (217,800 sq ft)",
        ),
    ],
    ids=["undated-exactly", "undated-217,801"],
)
def test_sw301_undated_message(ruleset: Ruleset, area_sqft: float, outcome: str, text: str) -> None:
    row = sw301(ruleset, area_sqft, dated=False)
    assert row["outcome"] == outcome
    assert text in row["message"]


@pytest.mark.parametrize(
    ("measured", "threshold", "unit", "expected"),
    [
        (5.00002, 5.0, "acres", "SW301 5.00002 acres > 5 acres"),
        (4.99, 5.0, "acres", "SW301 4.99 acres < 5 acres"),
        (5.0, 5.0, "acres", "SW301 5.00 acres = 5 acres"),
        (249.99, 250.0, "sq ft", "SW301 249.99 sq ft < 250 sq ft"),
        (250.01, 250.0, "sq ft", "SW301 250.01 sq ft > 250 sq ft"),
        (43_559.99, 43_560.0, "sq ft", "SW301 43,559.99 sq ft < 43,560 sq ft"),
        (9.99, 10.0, "ft", "SW301 9.99 ft < 10 ft"),
        (10.01, 10.0, "ft", "SW301 10.01 ft > 10 ft"),
        (0.5, 0.505, "cfs", "SW301 0.500 cfs < 0.505 cfs"),
    ],
)
def test_map_labels_show_the_decimals_the_comparison_needs(
    measured: float, threshold: float, unit: str, expected: str
) -> None:
    assert finding_label("SW301", "fail", measured, threshold, unit) == expected


@pytest.mark.parametrize(
    ("measured", "threshold", "unit", "expected"),
    [
        (5.00002, 5.0, "acres", ("5.00002 acres", "5.00000 acres")),
        (249.999, 250.0, "sq ft", ("249.999 sq ft", "250.000 sq ft")),
        (249.99, 250.0, "sq ft", ("249.99 sq ft", "250 sq ft")),
        (5.0, 5.0, "acres", ("5 acres", "5 acres")),
        (1400.0, 1400.0, "USD", ("$1,400.00", "$1,400.00")),
    ],
)
def test_console_table_keeps_figure_and_limit_apart(
    measured: float, threshold: float, unit: str, expected: tuple[str, str]
) -> None:
    assert format_pair(measured, threshold, unit) == expected


def test_sw301_measured_keeps_the_millionths(ruleset: Ruleset) -> None:
    row = sw301(ruleset, LIMIT_SQFT + 1.0)
    assert row["measured"] == round((LIMIT_SQFT + 1.0) / 43_560.0, 6) == 5.000023
