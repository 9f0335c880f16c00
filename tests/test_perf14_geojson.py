"""The findings GeoJSON written as text equals what GDAL writes with the same options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely
from pyproj import Transformer

from gis_sw.outputs.geojson import FAMILY_FILES, plain_properties, split_by_family
from gis_sw.outputs.geojson_text import write_feature_collection

CRS = "EPSG:2260"
X0, Y0 = Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(-73.79, 41.11)


def findings() -> gpd.GeoDataFrame:
    """Rows shaped like findings: every geometry family, a shared many-part area, odd text."""
    i = np.arange(300)
    boxes = shapely.box(
        X0 + (i % 30) * 6.0, Y0 + (i // 30) * 6.0, X0 + (i % 30) * 6.0 + 4, Y0 + (i // 30) * 6.0 + 4
    )
    many = shapely.union_all(boxes)
    clockwise = shapely.Polygon([(X0, Y0), (X0, Y0 + 20), (X0 + 13.4, Y0 + 20), (X0 + 13.4, Y0)])
    holed = shapely.Polygon(
        shapely.box(X0 - 50, Y0 - 50, X0 - 10, Y0 - 10).exterior.coords,
        [shapely.box(X0 - 40, Y0 - 40, X0 - 20, Y0 - 20).exterior.coords],
    )
    geometries = [
        many,
        many,
        many,
        clockwise,
        holed,
        shapely.LineString([(X0, Y0), (X0 + 9.99, Y0)]),
        shapely.MultiLineString([[(X0, Y0), (X0 + 1, Y0 + 1)], [(X0 + 5, Y0), (X0 + 6, Y0 + 2)]]),
        shapely.Point(X0, Y0),
        shapely.MultiPoint([(X0, Y0), (X0 + 3, Y0 + 4)]),
        None,
        shapely.GeometryCollection(
            [
                shapely.box(X0 + 50, Y0, X0 + 60, Y0 + 10),
                shapely.LineString([(X0, Y0), (X0 + 1, Y0 + 1)]),
            ]
        ),
    ]
    n = len(geometries)
    return gpd.GeoDataFrame(
        {
            "proposal_id": [
                "P-1",
                'Lot "7"/A',
                "Ünïcödé §",
                "=1+2",
                "a\\b",
                "x",
                "y",
                "z",
                "w",
                "v",
                "u",
            ],
            "rule_id": ["SW501"] * n,
            "outcome": [
                "info",
                "pass",
                "review",
                "fail",
                None,
                "pass",
                "pass",
                "pass",
                "pass",
                "info",
                "pass",
            ],
            "waived": [False, True] + [False] * (n - 2),
            "measured": [
                1.5,
                float("nan"),
                268.0,
                0.1 + 0.2,
                1e-9,
                12345678.123,
                2.712553089014405,  # 16 digits, kept
                205.49240000010232,  # 17 digits with four zeros inside, kept
                2.8051948051948044,
                float("nan"),
                74.30589631480552,
            ],
            "threshold": [0.0, 0.1 * 3, 1 / 3, 2 / 3, 1e21, -0.0, 5.0, 250.0, 1e-7, 0.5, 3.0],
            "message": ["line one\nline two\ttab", "€ 1,400.00"] + ["m"] * (n - 2),
        },
        geometry=geometries,
        crs=CRS,
    )


def _flat(value: Any) -> list[list[float]]:
    if isinstance(value[0], int | float):
        return [value]
    return [c for item in value for c in _flat(item)]


def _shape(value: Any) -> Any:
    """The nesting of a coordinates member, numbers replaced by their count."""
    if isinstance(value[0], int | float):
        return len(value)
    return [_shape(item) for item in value]


def same_properties(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Equal properties; numbers to 1e-14 (GDAL trims float noise, the text writer keeps it)."""
    if list(mine) != list(theirs):
        return False
    for key, value in theirs.items():
        if isinstance(value, float) and not isinstance(value, bool):
            if not isinstance(mine[key], float) or mine[key] != pytest.approx(value, rel=1e-14):
                return False
        elif mine[key] != value or type(mine[key]) is not type(value):
            return False
    return True


@pytest.mark.parametrize("family", ["polygons", "lines", "points"])
def test_text_writer_equals_gdal(tmp_path: Path, family: str) -> None:
    frame = findings()
    parts = split_by_family(frame)
    if family == "polygons":
        parts[family] = gpd.GeoDataFrame(
            gpd.pd.concat([parts["polygons"], parts["none"]], ignore_index=True),
            geometry="geometry",
            crs=CRS,
        )
    plain = plain_properties(gpd.GeoDataFrame(parts[family], geometry="geometry", crs=CRS))
    kind = FAMILY_FILES[family][1]
    pyogrio.write_dataframe(
        plain,
        tmp_path / "gdal.geojson",
        driver="GeoJSON",
        layer="gdal",
        geometry_type=kind,
        promote_to_multi=True,
        layer_options={"RFC7946": "YES", "COORDINATE_PRECISION": "7"},
    )
    props = {c: plain[c].tolist() for c in plain.columns if c != "geometry"}
    with (tmp_path / "text.geojson").open("w", encoding="utf-8") as handle:
        write_feature_collection(
            handle, "gdal", props, plain.geometry.to_numpy(), kind=kind, crs=plain.crs
        )
    gdal = json.loads((tmp_path / "gdal.geojson").read_text(encoding="utf-8"))
    text = json.loads((tmp_path / "text.geojson").read_text(encoding="utf-8"))
    assert set(text) == set(gdal)
    assert text["name"] == gdal["name"]
    assert len(text["features"]) == len(gdal["features"]) == len(plain) > 0
    for mine, theirs in zip(text["features"], gdal["features"], strict=True):
        assert same_properties(mine["properties"], theirs["properties"])
        assert list(mine["properties"]) == list(theirs["properties"])
        if theirs["geometry"] is None:
            assert mine["geometry"] is None
            continue
        assert mine["geometry"]["type"] == theirs["geometry"]["type"] == kind
        assert _shape(mine["geometry"]["coordinates"]) == _shape(theirs["geometry"]["coordinates"])
        a = np.array(_flat(mine["geometry"]["coordinates"]))
        b = np.array(_flat(theirs["geometry"]["coordinates"]))
        assert np.abs(a - b).max() <= 1.01e-7  # the 7th decimal, rounded alike or one apart
        assert all(len(repr(v).split(".")[-1]) <= 7 for v in a.ravel().tolist())
    if family == "polygons":
        assert text["features"][0]["geometry"] is not None
        assert len(text["features"][0]["geometry"]["coordinates"]) == 300  # the many parts


def test_no_features_is_an_empty_collection(tmp_path: Path) -> None:
    with (tmp_path / "empty.geojson").open("w", encoding="utf-8") as handle:
        write_feature_collection(
            handle, "empty", {"rule_id": []}, np.empty(0, dtype=object), kind="MultiPoint", crs=CRS
        )
    doc = json.loads((tmp_path / "empty.geojson").read_text(encoding="utf-8"))
    assert doc == {
        "type": "FeatureCollection",
        "name": "empty",
        "xy_coordinate_resolution": 1e-07,
        "features": [],
    }
