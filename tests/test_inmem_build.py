"""In-memory proposals and layers (`make_proposals`, `make_layerset`, the notebooks' API) are
checked as a file is: UTC and far dates, repeated ids, empty layers not declared none.

Before: a UTC DATETIME column (what QGIS and ArcGIS write, read by pyogrio as
``datetime64[ms, UTC]``) raised pandas' TypeError, ``9999-12-31`` raised OutOfBoundsDatetime,
a repeated proposal id pandas' bare "cannot reindex on an axis with duplicate labels", and an
empty wells frame let SW202 pass "no well within 50 ft".
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest
from shapely.geometry import Point, box

from gis_sw.analysis.engine import run_rules
from gis_sw.errors import GisSwError, LayerError
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.read import read_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0  # in Mount Pleasant, NY (EPSG:2260 ftUS)


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def disturbance(**columns: Any) -> gpd.GeoDataFrame:
    """Two phases of one proposal, as a GeoPackage export gives them."""
    return gpd.GeoDataFrame(
        {"proposal_id": ["P-1", "P-1"], "disturbance_id": ["D-1", "D-2"], **columns},
        geometry=[box(X0, Y0, X0 + 100, Y0 + 100), box(X0 + 100, Y0, X0 + 150, Y0 + 100)],
        crs=CRS,
    )


def utc(*texts: str) -> pd.Series:
    return pd.Series(pd.to_datetime(list(texts), utc=True)).astype("datetime64[ms, UTC]")


# -- dates --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        pytest.param(utc("2026-05-01T00:00:00Z", "2026-06-01T03:30:00Z"),
                     ["2026-05-01T00:00:00", "2026-06-01T03:30:00"], id="utc-datetime-dtype"),
        pytest.param(["2026-05-01T00:00:00Z", "2026-06-01T03:30:00Z"],
                     ["2026-05-01T00:00:00", "2026-06-01T03:30:00"], id="text-ending-in-Z"),
        pytest.param(["2026-05-01T00:00:00-04:00", "2026-06-01T00:00:00+01:00"],
                     ["2026-05-01T04:00:00", "2026-05-31T23:00:00"], id="mixed-offsets"),
        pytest.param([dt.date(2026, 5, 1), None], ["2026-05-01T00:00:00", None], id="dates"),
    ],
)  # fmt: skip
def test_time_zone_dates_are_read_in_utc(start: Any, expected: list[str | None]) -> None:
    proposals = make_proposals(CRS, disturbance(start_date=start))
    got = proposals.disturbance["start_date"]
    assert str(got.dtype) == "datetime64[ns]"
    assert [None if pd.isna(v) else v.isoformat() for v in got] == expected


def test_utc_dates_in_memory_equal_the_same_dates_read_from_a_geopackage(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    drawn = disturbance(
        start_date=utc("2026-05-01T00:00:00Z", "2026-07-15T00:00:00Z"),
        end_date=utc("2026-06-30T00:00:00Z", "2026-09-01T12:00:00Z"),
    )
    path = tmp_path / "proposals.gpkg"
    pyogrio.write_dataframe(drawn, path, layer="disturbance", driver="GPKG")
    from_file = read_proposals(path, ruleset=ruleset).disturbance
    in_memory = make_proposals(CRS, drawn).disturbance
    for column in ("start_date", "end_date"):
        assert in_memory[column].tolist() == from_file[column].tolist()
    assert in_memory["end_date"].tolist() == [
        pd.Timestamp("2026-06-30"),
        pd.Timestamp("2026-09-01 12:00"),
    ]


@pytest.mark.parametrize(
    ("end", "shown"),
    [
        pytest.param(["2026-06-30", "9999-12-31"], "'9999-12-31'", id="text-9999"),
        pytest.param(pd.Series([dt.datetime(2026, 6, 30), dt.datetime(9999, 12, 31)]),
                     "'9999-12-31'", id="python-datetime-9999"),
        pytest.param(pd.Series(["2026-06-30", "2262-04-11"]).astype("datetime64[s]"),
                     "'2262-04-11'", id="first-day-beyond-pandas"),
        pytest.param(utc("2026-06-30T00:00:00Z", "2026-06-30T00:00:00Z").astype(object).where(
                     [True, False], dt.datetime(9999, 12, 31, tzinfo=dt.UTC)),
                     "'9999-12-31T00:00:00+00:00'",
                     id="utc-9999"),
    ],
)  # fmt: skip
def test_dates_pandas_cannot_hold_are_a_clear_error(end: Any, shown: str) -> None:
    with pytest.raises(LayerError) as info:
        make_proposals(CRS, disturbance(end_date=end))
    assert str(info.value) == (
        "disturbance [<memory>]: column 'end_date' has dates outside 1677-09-22 to 2262-04-11, "
        f"the dates gis-sw can compute with: disturbance_id D-2 = {shown}. Fix: correct the "
        "year (a typo such as 2926 for 2026?), or leave the date empty when it is not known."
    )
    assert isinstance(info.value, GisSwError)


def test_last_day_pandas_holds_is_kept() -> None:
    got = make_proposals(CRS, disturbance(end_date=["2026-06-30", "2262-04-10"])).disturbance
    assert got["end_date"].tolist() == [pd.Timestamp("2026-06-30"), pd.Timestamp("2262-04-10")]


def test_a_date_that_is_not_iso_is_refused_not_guessed() -> None:
    with pytest.raises(LayerError) as info:
        make_proposals(CRS, disturbance(start_date=["2026-05-01", "05/06/2026"]))
    assert str(info.value) == (
        "disturbance [<memory>]: column 'start_date' has values that are not ISO dates: "
        "row 2 = '05/06/2026'. Fix: write dates as YYYY-MM-DD (empty when unknown)."
    )


def test_attribute_dates_are_checked_too() -> None:
    attrs = pd.DataFrame({"proposal_id": ["P-1"], "construction_end": ["9999-12-31"]})
    with pytest.raises(LayerError, match=r"proposals \[<memory>\]: column 'construction_end'"):
        make_proposals(CRS, disturbance(), attributes=attrs)


# -- ids ----------------------------------------------------------------------------------


def test_repeated_proposal_id_in_the_attributes_names_it() -> None:
    attrs = pd.DataFrame(
        {"proposal_id": ["P-1", "P-1", "P-2"], "land_use": ["other", "single_family", "other"]}
    )
    two = pd.concat([disturbance(), disturbance().assign(proposal_id="P-2")])
    with pytest.raises(LayerError) as info:
        make_proposals(CRS, two, attributes=attrs)
    assert str(info.value) == (
        "proposals [<memory>]: duplicate proposal_id: 'P-1' (2 times). "
        "Fix: give every feature its own proposal_id."
    )


def test_repeated_proposal_id_in_an_attribute_index_names_it() -> None:
    attrs = pd.DataFrame({"land_use": ["other", "other"]}, index=pd.Index(["P-1", "P-1"]))
    with pytest.raises(LayerError, match=r"duplicate proposal_id: 'P-1' \(2 times\)"):
        make_proposals(CRS, disturbance(), attributes=attrs)


def test_attributes_indexed_by_proposal_id_are_read() -> None:
    attrs = pd.DataFrame({"land_use": ["single_family"]}, index=pd.Index(["P-1"]))
    got = make_proposals(CRS, disturbance(), attributes=attrs).attributes
    assert got.loc["P-1", "land_use"] == "single_family"


def test_repeated_device_id_names_it() -> None:
    devices = frame(
        [
            {"device_id": "DW-1", "proposal_id": "P-1", "geometry": Point(10, 10)},
            {"device_id": "DW-1", "proposal_id": "P-1", "geometry": Point(20, 10)},
        ]
    )
    with pytest.raises(LayerError) as info:
        make_proposals(CRS, disturbance(), devices)
    assert str(info.value) == (
        "devices [<memory>]: duplicate device_id: 'DW-1' (2 times). "
        "Fix: give every feature its own device_id."
    )


def test_device_of_no_drawn_proposal_is_refused() -> None:
    devices = frame([{"device_id": "DW-1", "proposal_id": "P-9", "geometry": Point(10, 10)}])
    with pytest.raises(LayerError) as info:
        make_proposals(CRS, disturbance(), devices)
    assert "1 feature(s) belong to no proposal in the disturbance layer: device_id DW-1 " in str(
        info.value
    )
    assert "the proposals drawn are P-1" in str(info.value)


def test_float_ids_are_one_proposal_as_from_a_file() -> None:
    dist = gpd.GeoDataFrame({"proposal_id": [101.0]}, geometry=[box(0, 0, 10, 10)], crs=CRS)
    attrs = pd.DataFrame({"proposal_id": ["101"], "land_use": ["other"]})
    got = make_proposals(CRS, dist, attributes=attrs)
    assert got.ids == ["101"]
    assert got.attributes.loc["101", "land_use"] == "other"


def test_unknown_exemption_is_refused_when_the_ruleset_is_given(ruleset: Ruleset) -> None:
    attrs = pd.DataFrame({"proposal_id": ["P-1"], "exemption": ["Z"]})
    make_proposals(CRS, disturbance(), attributes=attrs)  # no ruleset: not checked here
    with pytest.raises(LayerError, match=r"exemption is not a letter of the ruleset's"):
        make_proposals(CRS, disturbance(), attributes=attrs, ruleset=ruleset)


# -- empty layers -------------------------------------------------------------------------


def town(**overrides: gpd.GeoDataFrame) -> dict[str, gpd.GeoDataFrame]:
    return {
        "parcels": frame([{"parcel_id": "104-22", "geometry": box(0, 0, 200, 200)}]),
        "zoning": frame([{"zone": "R-20", "geometry": box(-500, -500, 500, 500)}]),
        "wells": frame([{"well_id": "W-1", "geometry": Point(-200, -200)}]),
        "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(400, 400, 450, 450)}]),
        "water_bodies": frame([{"water_id": "WB-1", "geometry": box(-450, 400, -400, 450)}]),
        **overrides,
    }


def no_wells() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"well_id": pd.Series([], dtype=object)}, geometry=gpd.GeoSeries([], crs=CRS), crs=CRS
    )


def sw202(ruleset: Ruleset, layers: Any) -> pd.Series:
    device = {
        "device_id": "D-7",
        "proposal_id": "P-1",
        "serves_vehicle_traffic": True,
        "geometry": Point(80, 80),
    }
    proposals = make_proposals(
        CRS, frame([{"proposal_id": "P-1", "geometry": box(60, 60, 100, 100)}]), frame([device])
    )
    found = run_rules(layers, proposals, ruleset, select=["SW202"], on_error="raise")
    return found.iloc[0]


def test_empty_optional_layer_not_declared_none_is_a_clear_error() -> None:
    with pytest.raises(LayerError) as info:
        make_layerset(CRS, town(wells=no_wells()))
    assert str(info.value) == (
        "wells [<memory>]: has no features and is not declared none: rules would pass on it "
        "as if the town had no wells. Fix: give its features; if the town has none, declare "
        "it: make_layerset(..., none=['wells']); or leave it out, and rules that need it "
        "answer review."
    )


def test_empty_layer_declared_none_passes_and_says_so(ruleset: Ruleset) -> None:
    layers = make_layerset(CRS, town(wells=no_wells()), none=["wells"])
    assert layers.declared_none == ("wells",)
    found = sw202(ruleset, layers)
    assert found["outcome"] == "pass"
    assert found["message"].endswith("(wells declared none in the layers manifest.)")


def test_declared_none_without_a_frame_is_an_empty_layer(ruleset: Ruleset) -> None:
    vectors = town()
    del vectors["wells"]
    layers = make_layerset(CRS, vectors, none=["wells"])
    assert len(layers.get("wells")) == 0
    assert "wells" not in layers.missing
    assert sw202(ruleset, layers)["message"].endswith(
        "(wells declared none in the layers manifest.)"
    )


def test_a_layer_declared_none_with_features_is_refused() -> None:
    with pytest.raises(LayerError) as info:
        make_layerset(CRS, town(), none=["wells"])
    assert str(info.value) == (
        "wells [<memory>]: is declared none but has 1 feature(s). Fix: remove 'wells' from "
        "none=, or give an empty frame."
    )


@pytest.mark.parametrize("kind", ["parcels", "zoning"])
def test_empty_required_layer_is_refused_as_from_a_file(kind: str) -> None:
    empty = frame([{"geometry": box(0, 0, 1, 1)}]).iloc[:0]
    with pytest.raises(LayerError) as info:
        make_layerset(CRS, town(**{kind: empty}))
    assert str(info.value) == (
        f"{kind} [<memory>]: has no features. Fix: provide a layer with at least one feature."
    )


def test_missing_wells_layer_stays_review(ruleset: Ruleset) -> None:
    vectors = town()
    del vectors["wells"]
    found = sw202(ruleset, make_layerset(CRS, vectors))
    assert found["outcome"] == "review"


def test_empty_disturbance_is_refused_as_from_a_file() -> None:
    with pytest.raises(LayerError) as info:
        make_proposals(CRS, disturbance().iloc[:0])
    assert str(info.value) == (
        "disturbance [<memory>]: has no features. Fix: provide a layer with at least one feature."
    )


def test_float_town_ids_are_text_as_from_a_file() -> None:
    parcels = gpd.GeoDataFrame(
        {"parcel_id": [101.0, 102.0, float("nan")]},
        geometry=[box(0, 0, 10, 10), box(10, 0, 20, 10), box(20, 0, 30, 10)],
        crs=CRS,
    )
    layers = make_layerset(CRS, town(parcels=parcels))
    assert layers.get("parcels")["parcel_id"].tolist() == ["101", "102", None]
