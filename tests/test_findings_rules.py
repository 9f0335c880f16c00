"""Boundary cases the rule meta-test asked for: each limit exactly, and 0.01 either side.

Named by the convention of ``tests/test_rules_meta.py`` (rule id, then what the cases
show).  Geometries are boxes whose areas are the figures at the limit: 250 sq ft is
25 ft x 10 ft in zone R-20, one acre is 435.6 ft x 100 ft.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
from affine import Affine
from shapely.geometry import Point, box

from gis_sw.analysis import construction, infiltration, permits
from gis_sw.analysis.context import CheckContext
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
ACRE = 43_560.0


def _frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def _r20_context(
    ruleset: Ruleset, width_ft: float, depth_ft: float, **attributes: Any
) -> CheckContext:
    """One proposal ``P-1`` disturbing ``width_ft`` x ``depth_ft`` inside zone R-20."""
    zoning = _frame([{"zone": "R-20", "geometry": box(0, 0, 10_000, 5_000)}])
    disturbance = _frame(
        [{"proposal_id": "P-1", "geometry": box(100, 0, 100 + width_ft, depth_ft)}]
    )
    attrs = pd.DataFrame([{"proposal_id": "P-1", **attributes}])
    return CheckContext(
        layers=make_layerset(CRS, {"zoning": zoning}),
        proposals=make_proposals(CRS, disturbance, attributes=attrs),
        ruleset=ruleset,
    )


def _one(found: gpd.GeoDataFrame) -> pd.Series:
    assert len(found) == 1, found[["subject_id", "outcome"]]
    return found.iloc[0]


# -- SW105: the fees are due where the permit is -----------------------------------------------


@pytest.mark.parametrize(
    ("width_ft", "outcome", "area_sqft"),
    [
        pytest.param(24.999, "pass", 249.99, id="249.99-sq-ft-no-permit-no-fees"),
        pytest.param(25.0, "required", 250.0, id="250.00-sq-ft-permit-and-fees"),
        pytest.param(25.001, "required", 250.01, id="250.01-sq-ft-permit-and-fees"),
    ],
)
def test_sw105_boundary_pass_required_fees_at_the_permit_threshold(
    ruleset: Ruleset, width_ft: float, outcome: str, area_sqft: float
) -> None:
    ctx = _r20_context(ruleset, width_ft, 10.0, construction_cost_usd=100_000)
    permit = _one(permits.check_permit_threshold(ctx))
    assert permit["measured"] == pytest.approx(area_sqft, abs=1e-9)
    found = _one(permits.check_application(ctx))
    assert found["outcome"] == outcome
    assert found["unit"] == "USD"
    if outcome == "pass":
        assert np.isnan(found["measured"])
        assert "no application or fees are due" in found["message"]
    else:
        # $150 application fee + 0.5% of $100,000 = $650
        assert found["measured"] == 650.0
        assert (
            "$500.00 (0.5% of the $100,000.00 construction cost estimate) = $650.00"
            in (found["message"])
        )


# -- SW107: the state floor's two sentences meet at one acre -----------------------------------


@pytest.mark.parametrize(
    ("width_ft", "area_sqft", "figure", "applies"),
    [
        pytest.param(
            435.5999, 43_559.99, "43,559.99 sq ft (just under 1 acre)", False, id="43,559.99"
        ),
        pytest.param(435.6, 43_560.0, "43,560 sq ft (1.00 acres)", True, id="43,560.00"),
        pytest.param(
            435.6001, 43_560.01, "43,560.01 sq ft (just over 1 acre)", True, id="43,560.01"
        ),
    ],
)
def test_sw107_info_boundary_at_one_acre(
    ruleset: Ruleset, width_ft: float, area_sqft: float, figure: str, applies: bool
) -> None:
    ctx = _r20_context(ruleset, width_ft, 100.0, part_of_larger_plan=False)
    found = _one(permits.check_state_floor(ctx))
    assert found["outcome"] == "info"
    assert (found["measured"], found["threshold"], found["unit"]) == (area_sqft, ACRE, "sq ft")
    assert found["message"].startswith(f"Disturbance of {figure}: ")
    applies_text = "NYSDEC SPDES general permit coverage for construction activity applies"
    not_covered = "the town permit addresses land not covered by a NYSDEC SPDES permit"
    assert (applies_text in found["message"]) is applies
    assert (not_covered in found["message"]) is not applies
    assert found["message"].endswith("(§ 183-12B).")


# -- SW204: two feet above bedrock -------------------------------------------------------------


def _bedrock_at(elevation_ft: float) -> RasterLayer:
    """Bedrock at one elevation under a 100 ft square of 10 ft cells, top-left (0, 100)."""
    return RasterLayer(
        "bedrock",
        np.full((10, 10), elevation_ft),
        Affine(10, 0, 0, 0, -10, 100),
        pyproj.CRS.from_user_input(CRS),
        mode=RasterMode.ELEVATION,
        source="test",
    )


@pytest.mark.parametrize(
    ("bottom_ft", "outcome", "separation_ft"),
    [
        pytest.param(91.99, "fail", 1.99, id="bottom-1.99-ft-above-bedrock"),
        pytest.param(92.0, "pass", 2.0, id="bottom-2.00-ft-above-bedrock"),
        pytest.param(92.01, "pass", 2.01, id="bottom-2.01-ft-above-bedrock"),
    ],
)
def test_sw204_boundary_pass_fail_at_2_ft(
    ruleset: Ruleset, bottom_ft: float, outcome: str, separation_ft: float
) -> None:
    devices = _frame(
        [
            {
                "proposal_id": "P1",
                "device_id": "D-7",
                "bottom_elevation_ft": bottom_ft,
                "geometry": Point(50, 50),
            }
        ]
    )
    layers = make_layerset(
        CRS,
        {"parcels": _frame([{"parcel_id": "104-22", "geometry": box(0, 0, 100, 100)}])},
        {"bedrock": _bedrock_at(90.0)},
    )
    disturbance = _frame([{"proposal_id": "P1", "geometry": box(5, 5, 95, 95)}])
    ctx = CheckContext(layers, make_proposals(CRS, disturbance, devices), ruleset)
    found = _one(infiltration.check_bedrock_separation(ctx))
    assert found["outcome"] == outcome
    assert found["measured"] == pytest.approx(separation_ft, abs=1e-9)
    assert found["threshold"] == 2.0
    relation = "at least" if outcome == "pass" else "less than"
    assert found["message"] == (
        f"Device D-7's bottom is {separation_ft:.2f} ft above bedrock (worst place, from the "
        f"bedrock raster (elevation)), {relation} the 2 ft minimum (§ 183-12C(2)(c)[4])."
    )


# -- SW401-SW403: the construction duties bind where the permit does ---------------------------


@pytest.mark.parametrize(
    ("width_ft", "bound"),
    [
        pytest.param(24.999, False, id="249.99-sq-ft-duties-do-not-attach"),
        pytest.param(25.0, True, id="250.00-sq-ft-duties-bind"),
        pytest.param(25.001, True, id="250.01-sq-ft-duties-bind"),
    ],
)
def test_sw401_sw402_sw403_boundary_pass_required_at_the_permit_threshold(
    ruleset: Ruleset, width_ft: float, bound: bool
) -> None:
    ctx = _r20_context(
        ruleset,
        width_ft,
        10.0,
        part_of_larger_plan=False,
        construction_start=date(2026, 4, 1),
        construction_end=date(2026, 4, 30),
    )
    rows = {
        check.__name__: _one(check(ctx))
        for check in (
            construction.check_inspections,
            construction.check_notices,
            construction.check_sediment_cleanout,
        )
    }
    for name, found in rows.items():
        assert found["outcome"] == ("required" if bound else "pass"), name
        if not bound:
            assert found["message"].startswith(
                "Does not attach: no town permit is required (SW101) and the work is not a land "
                "development activity (SW102)"
            )
    inspections = rows["check_inspections"]
    if bound:
        # reports due 7, 14, 21 and 28 days after 1 April: 8, 15, 22 and 29 April
        assert inspections["measured"] == 4.0
        assert "first due 2026-04-08" in inspections["message"]
        assert "reduced by 50%" in rows["check_sediment_cleanout"]["message"]
    else:
        assert np.isnan(inspections["measured"])
    assert (inspections["threshold"], rows["check_notices"]["threshold"]) == (7.0, 48.0)
