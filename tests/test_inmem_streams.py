"""Streams in the rule->layer table, and SW106 at 0 ft from a mapped resource.

* ``registry.RULE_LAYERS`` lacked ``streams``: a streams layer that maps part of the town
  (``coverage``) or has a feature with no location let SW106's streams row and SW202 pass on
  what it did not show.  Now they are ``review`` there, as for water bodies.
* SW106 (RULES.md: "disturbance touching wetlands, wetland buffers, water bodies or the
  100-year floodplain"; § 183-7B(1)(b)[6]: the site map shows on-site and adjacent
  off-site surface waters) passed a disturbance touching a water body, wetland or
  floodplain along its edge ("does not overlap"), while a stream line touched was already
  ``required``.  Now touching (0 ft, within the distance tolerance) is ``required`` at
  0 sq ft; 0.01 ft away passes.  The wetland adjacent area's outer edge is its limit: 99.99 ft
  from the wetland is inside it, 100.00 ft and 100.01 ft are not (as at every setback).
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import LineString, Point, box

from gis_sw.analysis.engine import run_rules
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
SITE = box(0, 0, 100, 100)  # 10,000 sq ft


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def far_box() -> Any:
    return box(50_000, 50_000, 50_100, 50_100)


def town(**overrides: gpd.GeoDataFrame) -> dict[str, gpd.GeoDataFrame]:
    return {
        "parcels": frame([{"parcel_id": "104-22", "geometry": box(-300, -300, 400, 400)}]),
        "zoning": frame([{"zone": "R-20", "geometry": box(-5000, -5000, 5000, 5000)}]),
        "wells": frame([{"well_id": "W-1", "geometry": Point(-2000, -2000)}]),
        "wetlands": frame([{"wetland_id": "WL-1", "name": "Fen", "geometry": far_box()}]),
        "water_bodies": frame([{"water_id": "WB-1", "name": "Pond", "geometry": far_box()}]),
        "floodplain": frame([{"flood_zone": "AE", "geometry": far_box()}]),
        "streams": frame(
            [
                {
                    "stream_id": "S-1",
                    "name": "Mill Brook",
                    "geometry": LineString([(300, -200), (300, 300)]),
                }
            ]
        ),
        **overrides,
    }


def screen(
    ruleset: Ruleset,
    vectors: dict[str, gpd.GeoDataFrame],
    *,
    site: Any = SITE,
    coverage: dict[str, Any] | None = None,
    none: tuple[str, ...] = (),
) -> pd.DataFrame:
    layers = make_layerset(CRS, vectors, coverage=coverage, none=none)
    device = {
        "device_id": "D-7",
        "proposal_id": "P-1",
        "serves_vehicle_traffic": True,
        "geometry": Point(50, 50),
    }
    proposals = make_proposals(
        CRS, frame([{"proposal_id": "P-1", "geometry": site}]), frame([device])
    )
    found = run_rules(layers, proposals, ruleset, select=["SW106", "SW202"], on_error="raise")
    return found.set_index("subject_id")


# -- streams in RULE_LAYERS -----------------------------------------------------------------


def test_control_streams_mapped_everywhere_pass(ruleset: Ruleset) -> None:
    found = screen(ruleset, town())
    assert found.loc["P-1:streams", "outcome"] == "pass"
    assert found.loc["D-7", "outcome"] == "pass"


def test_streams_mapping_part_of_the_town_makes_their_passes_review(ruleset: Ruleset) -> None:
    mapped = box(250, -300, 400, 400)  # the streams were traced east of x = 250 only
    found = screen(ruleset, town(), coverage={"streams": mapped})
    stream = found.loc["P-1:streams"]
    assert stream["outcome"] == "review"
    assert stream["message"].startswith(
        "Streams cover only part of the town; this proposal's disturbance is outside it, so "
        "SW106 cannot pass on what the layer shows: review by hand."
    )
    device = found.loc["D-7"]
    assert device["outcome"] == "review"
    assert device["message"].startswith("Streams cover only part of the town; this device is")


def test_streams_mapped_around_the_site_and_its_reach_still_pass(ruleset: Ruleset) -> None:
    mapped = box(-200, -200, 300, 300)  # 100 ft beyond the site, 150 ft beyond the device
    found = screen(ruleset, town(), coverage={"streams": mapped})
    assert found.loc["P-1:streams", "outcome"] == "pass"
    assert found.loc["D-7", "outcome"] == "pass"


def test_stream_with_no_geometry_makes_their_passes_review(ruleset: Ruleset) -> None:
    streams = frame(
        [
            {"stream_id": "S-1", "geometry": LineString([(300, -200), (300, 300)])},
            {"stream_id": "S-2", "geometry": None},
        ]
    )
    found = screen(ruleset, town(streams=streams))
    for subject in ("P-1:streams", "D-7"):
        assert found.loc[subject, "outcome"] == "review", subject
        assert "(streams: S-2 (no geometry))" in found.loc[subject, "message"], subject


def test_streams_declared_none_pass_and_say_so(ruleset: Ruleset) -> None:
    vectors = town()
    del vectors["streams"]
    found = screen(ruleset, vectors, none=("streams",))
    assert found.loc["P-1:streams", "outcome"] == "pass"
    assert found.loc["P-1:streams", "message"].endswith(
        "(streams declared none in the layers manifest.)"
    )


# -- SW106 at 0 ft, 0.01 ft and the adjacent area's limit -------------------------------------


@pytest.mark.parametrize(
    ("kind", "gap_ft", "outcome"),
    [
        pytest.param("water_bodies", 0.0, "required", id="water-body-at-0-ft"),
        pytest.param("water_bodies", 0.004, "required", id="water-body-at-0.004-ft-rounds-to-0"),
        pytest.param("water_bodies", 0.01, "pass", id="water-body-at-0.01-ft"),
        pytest.param("wetlands", 0.0, "required", id="wetland-at-0-ft"),
        pytest.param("wetlands", 0.01, "pass", id="wetland-at-0.01-ft"),
        pytest.param("floodplain", 0.0, "required", id="floodplain-at-0-ft"),
        pytest.param("floodplain", 0.01, "pass", id="floodplain-at-0.01-ft"),
    ],
)
def test_sw106_resource_touching_the_disturbance(
    ruleset: Ruleset, kind: str, gap_ft: float, outcome: str
) -> None:
    # the resource lies east of the site, its west edge gap_ft beyond the site's east edge
    column = {"water_bodies": "name", "wetlands": "name", "floodplain": "flood_zone"}[kind]
    label = {"water_bodies": "Pond", "wetlands": "Fen", "floodplain": "AE"}[kind]
    resource = frame([{column: label, "geometry": box(100 + gap_ft, 0, 200, 100)}])
    found = screen(ruleset, town(**{kind: resource})).loc[f"P-1:{kind}"]
    assert (found["outcome"], found["measured"]) == (outcome, 0.0)
    if outcome == "required":
        words = {"water_bodies": "mapped water bodies", "wetlands": "mapped wetlands"}
        noun = words.get(kind, "the 100-year floodplain")
        named = f" ({label})" if gap_ft == 0 else ""
        assert found["message"].startswith(
            f"The disturbance touches {noun}{named} along its edge (0 sq ft inside): the plan "
            "must show it and "
        )
    else:
        assert found["message"].startswith("The disturbance does not overlap ")


@pytest.mark.parametrize(
    ("gap_ft", "outcome", "measured"),
    [
        pytest.param(0.0, "required", 100.0, id="stream-at-0-ft-along-100-ft-of-edge"),
        pytest.param(0.01, "pass", 0.0, id="stream-at-0.01-ft"),
    ],
)
def test_sw106_stream_line_along_the_edge(
    ruleset: Ruleset, gap_ft: float, outcome: str, measured: float
) -> None:
    line = LineString([(100 + gap_ft, -50), (100 + gap_ft, 150)])
    found = screen(ruleset, town(streams=frame([{"stream_id": "S-1", "geometry": line}])))
    stream = found.loc["P-1:streams"]
    assert (stream["outcome"], stream["measured"]) == (outcome, measured)


ADJACENT_AREA_CASES = [
    pytest.param(0.0, "required", 10_000.0, id="wetland-at-0-ft-all-inside-the-band"),
    pytest.param(0.01, "required", 9_999.0, id="wetland-at-0.01-ft-west-0.01-ft-strip-out"),
    pytest.param(99.99, "required", 1.0, id="99.99-ft-a-strip-of-0.01-ft-inside"),
    pytest.param(100.0, "pass", 0.0, id="100-ft-the-band-limit"),
    pytest.param(100.01, "pass", 0.0, id="100.01-ft"),
]
"""The site spans x 0..100; the wetland's west edge lies ``wetland_gap_ft`` east of x = 100."""


@pytest.mark.parametrize(("wetland_gap_ft", "outcome", "adjacent_sqft"), ADJACENT_AREA_CASES)
def test_sw106_wetland_adjacent_area_boundary(
    ruleset: Ruleset, wetland_gap_ft: float, outcome: str, adjacent_sqft: float
) -> None:
    assert ruleset.resources.wetland_adjacent_area_ft == 100.0
    x0 = 100 + wetland_gap_ft
    wetland = frame([{"wetland_id": "WL-1", "geometry": box(x0, -500, x0 + 50, 600)}])
    found = screen(ruleset, town(wetlands=wetland)).loc["P-1:wetland_adjacent_area"]
    assert (found["outcome"], found["measured"]) == (outcome, adjacent_sqft)


def test_sw106_never_passes_a_site_touching_a_wetland(ruleset: Ruleset) -> None:
    wetland = frame([{"wetland_id": "WL-1", "geometry": box(100, 0, 200, 100)}])
    found = screen(ruleset, town(wetlands=wetland))
    sw106 = found[found["rule_id"] == "SW106"]
    assert set(sw106.loc[["P-1:wetlands", "P-1:wetland_adjacent_area"], "outcome"]) == {"required"}
