"""RFC 7946 GeoJSON text written without GDAL, each distinct geometry formatted once.

GDAL's GeoJSON driver spends about 3 microseconds on every coordinate it writes; a finding
set whose SW501-SW504 rows all carry one drainage area of 100,000 small polygons took half
a minute to write.  This writer gives the file :func:`gis_sw.outputs.geojson.write_findings_geojson`
asked GDAL for (``RFC7946=YES``, ``COORDINATE_PRECISION=7``, every geometry promoted to its
Multi* type): WGS84 longitude/latitude (PROJ, as GDAL uses it), counter-clockwise outer
rings and clockwise holes, coordinates rounded to 7 decimals, properties as JSON strings,
numbers of 15 significant digits (missing: ``null``) and booleans.  A geometry object
met again (the same drainage area on four rules' rows) is formatted once.
``tests/test_perf14_geojson.py`` compares its files with GDAL's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from itertools import pairwise
from typing import IO, Any

import numpy as np
import shapely
from pyproj import CRS, Transformer

__all__ = ["feature_lines", "write_feature_collection"]

_MULTI = {
    "MultiPolygon": shapely.multipolygons,
    "MultiLineString": shapely.multilinestrings,
    "MultiPoint": shapely.multipoints,
}
"""Multi* type to the shapely constructor that promotes a single part."""


def _nest(items: list[str], offsets: np.ndarray) -> list[str]:
    """Join ``items`` into one JSON array per offsets window."""
    return ["[ " + ", ".join(items[a:b]) + " ]" for a, b in pairwise(offsets.tolist())]


def _coordinates(geometry: shapely.Geometry, transformer: Transformer | None) -> str:
    """Return the ``coordinates`` text of one Multi* geometry in longitude/latitude."""
    _, coords, offsets = shapely.to_ragged_array(np.array([geometry], dtype=object))
    if transformer is not None and len(coords):
        lon, lat = transformer.transform(coords[:, 0], coords[:, 1])
        coords = np.column_stack([lon, lat])
    rounded = np.round(coords, 7).tolist()
    items = [f"[ {x!r}, {y!r} ]" for x, y in rounded]
    for level in offsets:  # rings, then polygons, then the one multi geometry
        items = _nest(items, level)
    return items[0]


def _geometry_text(
    geometry: shapely.Geometry | None, kind: str, transformer: Transformer | None
) -> str:
    """Return the ``geometry`` member's text (``null`` for no geometry)."""
    if geometry is None or shapely.is_empty(geometry):
        return "null"
    if shapely.get_type_id(geometry) in (0, 1, 3):  # a single Point, LineString, Polygon
        geometry = _MULTI[kind]([geometry])
    if kind == "MultiPolygon":
        geometry = shapely.orient_polygons(geometry, exterior_cw=False)
    return f'{{ "type": "{kind}", "coordinates": {_coordinates(geometry, transformer)} }}'


def _plain(value: Any) -> Any:
    """Return a property value as JSON takes it (NaN and missing: None)."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            return None
        return float(f"{number:.15g}")  # GDAL's 15 significant digits
    return str(value)


def feature_lines(
    properties: list[dict[str, Any]],
    geometries: np.ndarray,
    kind: str,
    crs: object,
) -> Iterator[str]:
    """Yield one ``Feature`` line per row, each distinct geometry object formatted once."""
    source = CRS.from_user_input(crs) if crs is not None else None
    wgs84 = CRS.from_epsg(4326)
    transformer = (
        Transformer.from_crs(source, wgs84, always_xy=True)
        if source is not None and source != wgs84
        else None
    )
    done: dict[int, str] = {}
    for row, geometry in zip(properties, geometries, strict=True):
        key = id(geometry)
        text = done.get(key)
        if text is None:
            text = done[key] = _geometry_text(geometry, kind, transformer)
        props = json.dumps({k: _plain(v) for k, v in row.items()}, ensure_ascii=False)
        yield f'{{ "type": "Feature", "properties": {props}, "geometry": {text} }}'


def write_feature_collection(
    handle: IO[str],
    name: str,
    properties: list[dict[str, Any]],
    geometries: np.ndarray,
    *,
    kind: str,
    crs: object,
) -> None:
    """Write one FeatureCollection named ``name`` to an open text file."""
    handle.write(
        f'{{\n"type": "FeatureCollection",\n"name": {json.dumps(name)},\n'
        '"xy_coordinate_resolution": 1e-07,\n"features": [\n'
    )
    first = True
    for line in feature_lines(properties, geometries, kind, crs):
        handle.write(line if first else ",\n" + line)
        first = False
    handle.write("\n]\n}\n")
