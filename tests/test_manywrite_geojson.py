"""The findings GeoJSON built column by column, each distinct geometry once: a plain writer's text.

The reference below formats every row on its own, value by value and coordinate by
coordinate (no sharing of texts or geometries); the files must be equal byte for byte.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from pyproj import Transformer

from gis_sw.outputs.geojson import (
    FAMILY_FILES,
    plain_properties,
    split_by_family,
    write_findings_geojson,
)

CRS = "EPSG:2260"
TO_WGS84 = Transformer.from_crs(CRS, "EPSG:4326", always_xy=True)
X0, Y0 = Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(-73.79, 41.11)
TEXTS = [
    "=cmd|' /C calc'!A0",
    'say "hi"\\ back\\slash',
    "esc \x1b[31m \x00 nul \x07",
    "</script><b>&amp;</b>",
    "土地-12",
    "Ωμέγα",
    "line\nbreak\ttab\u2028sep",
    "",
]


def _findings(rows: int) -> gpd.GeoDataFrame:
    box = shapely.box(X0, Y0, X0 + 20, Y0 + 20)
    clockwise = shapely.Polygon([(X0, Y0), (X0, Y0 + 9), (X0 + 9.99, Y0 + 9), (X0 + 9.99, Y0)])
    shared = shapely.MultiPolygon([shapely.box(X0 + 40, Y0, X0 + 44, Y0 + 4), clockwise])
    kinds = [
        lambda i: shapely.box(X0, Y0, X0 + 20, Y0 + 20),  # equal, a new object each row
        lambda i: box,  # one object on many rows
        lambda i: shared,
        lambda i: None,
        lambda i: shapely.Polygon(),
        lambda i: shapely.box(X0 + i, Y0, X0 + i + 1.5, Y0 + 2),  # distinct
        lambda i: shapely.LineString([(X0, Y0), (X0 + 9.99, Y0 + i)]),
        lambda i: shapely.Point(X0 + i / 3, Y0),
        lambda i: shapely.MultiPoint([(X0, Y0), (X0 + 3, Y0 + 4)]),
    ]
    measured = [260.0, -0.0, math.nan, math.inf, 0.30000000000000004, 1e16, 9.99, -3.5]
    return gpd.GeoDataFrame(
        {
            "proposal_id": pd.Series([TEXTS[i % len(TEXTS)] for i in range(rows)], dtype="str"),
            "rule_id": [f"SW{101 + i % 7}" for i in range(rows)],
            "message": pd.Series([TEXTS[(i * 3) % len(TEXTS)] for i in range(rows)], dtype=object),
            "waiver_reason": [None if i % 2 else "reviewed" for i in range(rows)],
            "measured": [measured[i % len(measured)] for i in range(rows)],
            "threshold": [None if i % 3 == 0 else 250 for i in range(rows)],
            "waived": [i % 4 == 0 for i in range(rows)],
        },
        geometry=[kinds[i % len(kinds)](i) for i in range(rows)],
        crs=CRS,
    )


def _value(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return "null" if math.isnan(number) or math.isinf(number) else repr(number)
    return encode_basestring(str(value))


def _nested(coords: object) -> str:
    if isinstance(coords, tuple) and len(coords) == 2 and isinstance(coords[0], float):
        x, y = TO_WGS84.transform(coords[0], coords[1])
        lon, lat = np.round(np.array([x, y]), 7).tolist()
        return f"[ {lon!r}, {lat!r} ]"
    return "[ " + ", ".join(_nested(part) for part in coords) + " ]"  # type: ignore[attr-defined]


def _geometry(geometry: shapely.Geometry | None, kind: str) -> str:
    if geometry is None or geometry.is_empty:
        return "null"
    promote = {"Polygon": shapely.MultiPolygon, "LineString": shapely.MultiLineString}
    if geometry.geom_type in promote:
        geometry = promote[geometry.geom_type]([geometry])
    if geometry.geom_type == "Point":
        geometry = shapely.MultiPoint([geometry])
    if kind == "MultiPolygon":
        geometry = shapely.orient_polygons(geometry, exterior_cw=False)
    coords = shapely.geometry.mapping(geometry)["coordinates"]
    return f'{{ "type": "{kind}", "coordinates": {_nested(coords)} }}'


def reference(frame: gpd.GeoDataFrame, name: str, kind: str) -> str:
    """One family's file, row by row."""
    names = [c for c in frame.columns if c != "geometry"]
    features = []
    for row, geometry in zip(
        frame[names].itertuples(index=False), frame.geometry.to_numpy(), strict=True
    ):
        props = ", ".join(
            f"{encode_basestring(n)}: {_value(v)}" for n, v in zip(names, row, strict=True)
        )
        features.append(
            f'{{ "type": "Feature", "properties": {{ {props} }}, '
            f'"geometry": {_geometry(geometry, kind)} }}'
        )
    return (
        f'{{\n"type": "FeatureCollection",\n"name": {json.dumps(name)},\n'
        '"xy_coordinate_resolution": 1e-07,\n"features": [\n' + ",\n".join(features) + "\n]\n}\n"
    )


def test_geojson_files_equal_the_row_by_row_reference(tmp_path: Path) -> None:
    findings = _findings(90)
    written = write_findings_geojson(tmp_path, findings)
    parts = split_by_family(findings)
    parts["polygons"] = pd.concat([parts["polygons"], parts["none"]], ignore_index=True)
    for path, (family, (name, kind)) in zip(written, FAMILY_FILES.items(), strict=True):
        plain = plain_properties(gpd.GeoDataFrame(parts[family], geometry="geometry", crs=CRS))
        expected = reference(plain, Path(name).stem, kind)
        assert path.read_text(encoding="utf-8") == expected, family
        doc = json.loads(expected)
        assert len(doc["features"]) == len(plain) > 0


def test_geojson_shared_and_equal_geometries_read_back_alike(tmp_path: Path) -> None:
    findings = _findings(30)
    path = write_findings_geojson(tmp_path, findings)[0]
    features = json.loads(path.read_text(encoding="utf-8"))["features"]
    by_text = {json.dumps(f["geometry"]) for f in features if f["geometry"] is not None}
    assert len(by_text) < sum(f["geometry"] is not None for f in features)  # shared texts
    ids = [f["properties"]["proposal_id"] for f in features]
    assert "=cmd|' /C calc'!A0" in ids  # JSON keeps the text as given
    measured = [f["properties"]["measured"] for f in features]
    assert None in measured  # NaN and inf are null
    assert -0.0 in measured


def test_geojson_3d_findings_go_to_gdal_with_their_text(tmp_path: Path) -> None:
    """3D geometries are GDAL's to write: the file of the text columns turned into strings."""
    findings = _findings(12)
    findings = findings.set_geometry(
        [shapely.Point(X0 + i, Y0, 100.0 + i) for i in range(len(findings))], crs=CRS
    )
    path = write_findings_geojson(tmp_path, findings)[2]
    plain = plain_properties(split_by_family(findings)["points"])
    pyogrio.write_dataframe(
        plain,
        tmp_path / "gdal.geojson",
        driver="GeoJSON",
        layer=path.stem,
        geometry_type="MultiPoint",
        promote_to_multi=True,
        layer_options={"RFC7946": "YES", "COORDINATE_PRECISION": "7"},
    )
    assert path.read_bytes() == (tmp_path / "gdal.geojson").read_bytes()
    features = json.loads(path.read_text(encoding="utf-8"))["features"]
    assert [f["properties"]["proposal_id"] for f in features][:2] == TEXTS[:2]
    assert features[3]["geometry"]["coordinates"][0][2] == 103.0
