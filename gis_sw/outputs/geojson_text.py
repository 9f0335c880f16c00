"""RFC 7946 GeoJSON text written without GDAL, each distinct geometry formatted once.

GDAL's GeoJSON driver spends about 3 microseconds on every coordinate it writes; a finding
set whose SW501-SW504 rows all carry one drainage area of 100,000 small polygons took half
a minute to write.  This writer gives the file :func:`gis_sw.outputs.geojson.write_findings_geojson`
asked GDAL for (``RFC7946=YES``, ``COORDINATE_PRECISION=7``, every geometry promoted to its
Multi* type): WGS84 longitude/latitude (PROJ, as GDAL uses it), counter-clockwise outer
rings and clockwise holes, coordinates rounded to 7 decimals, properties as JSON strings,
numbers (missing: ``null``; GDAL trims some float noise such as 0.30000000000000004 to
0.3, this writer keeps every number exact) and booleans.  A geometry object
met again (the same drainage area on four rules' rows) is formatted once.
``tests/test_perf14_geojson.py`` compares its files with GDAL's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from itertools import pairwise
from json.encoder import encode_basestring
from typing import IO, Any

import numpy as np
import shapely
from pyproj import CRS, Transformer

__all__ = ["feature_lines", "write_feature_collection"]

_MULTI: dict[str, Callable[..., Any]] = {
    "MultiPolygon": shapely.multipolygons,
    "MultiLineString": shapely.multilinestrings,
    "MultiPoint": shapely.multipoints,
}
"""Multi* type to the shapely constructor that promotes single parts."""


def _nest(items: list[str], offsets: np.ndarray) -> list[str]:
    """Join ``items`` into one JSON array per offsets window."""
    return ["[ " + ", ".join(items[a:b]) + " ]" for a, b in pairwise(offsets.tolist())]


def _transformer(crs: object) -> Transformer | None:
    """Return the transformer to WGS84 longitude/latitude (None: already there, or no CRS)."""
    if crs is None:
        return None
    source, wgs84 = CRS.from_user_input(crs), CRS.from_epsg(4326)
    return None if source == wgs84 else Transformer.from_crs(source, wgs84, always_xy=True)


def _geometry_texts(geometries: np.ndarray, kind: str, crs: object) -> list[str]:
    """Return the ``geometry`` member of every row: one vectorised pass over distinct objects."""
    texts = ["null"] * len(geometries)
    present = [
        i for i, g in enumerate(geometries.tolist()) if g is not None and not shapely.is_empty(g)
    ]
    if not present:
        return texts
    first: dict[int, int] = {}  # id of a geometry object -> its position among the distinct
    where = [first.setdefault(id(geometries[i]), len(first)) for i in present]
    distinct = np.empty(len(first), dtype=object)
    for i in present:
        distinct[first[id(geometries[i])]] = geometries[i]
    single = np.isin(shapely.get_type_id(distinct), (0, 1, 3))  # Point, LineString, Polygon
    if single.any():
        distinct[single] = _MULTI[kind](distinct[single], indices=np.arange(int(single.sum())))
    if kind == "MultiPolygon":
        distinct = shapely.orient_polygons(distinct, exterior_cw=False)
    _, coords, offsets = shapely.to_ragged_array(distinct, include_z=False)
    transformer = _transformer(crs)
    if transformer is not None and len(coords):
        lon, lat = transformer.transform(coords[:, 0], coords[:, 1])
        coords = np.column_stack([lon, lat])
    items = [f"[ {x!r}, {y!r} ]" for x, y in np.round(coords, 7).tolist()]
    for level in offsets:  # rings, then polygons, then geometries (as the kind nests)
        items = _nest(items, level)
    head = f'{{ "type": "{kind}", "coordinates": '
    for i, k in zip(present, where, strict=True):
        texts[i] = head + items[k] + " }"
    return texts


def _number(value: Any) -> str:
    """Return a number as the shortest text that reads back as it (``null`` when missing)."""
    if value is None:
        return "null"
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return "null"
    return repr(number)  # the shortest text that reads back as the very number


def _value_texts(values: list[Any]) -> list[str]:
    """Return the JSON text of each value of one column (text, number, boolean or null)."""
    if all(value is None or isinstance(value, str) for value in values):
        memo: dict[str | None, str] = {None: "null"}  # texts repeat: rule ids, citations
        out = []
        for value in values:
            text = memo.get(value)
            if text is None:
                text = memo[value] = encode_basestring(value)
            out.append(text)
        return out
    return [_value_text(value) for value in values]


def _value_text(value: Any) -> str:
    """Return the JSON text of one value."""
    if value is None:
        return "null"
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | float | np.integer | np.floating):
        return _number(value)
    return encode_basestring(str(value))


def feature_lines(
    properties: Mapping[str, list[Any]], geometries: np.ndarray, kind: str, crs: object
) -> Iterator[str]:
    """Yield one ``Feature`` line per row (``properties``: column name to its values)."""
    columns = []
    for name, values in properties.items():
        prefix = encode_basestring(str(name)) + ": "
        columns.append([prefix + text for text in _value_texts(values)])
    rows = map(", ".join, zip(*columns, strict=True)) if columns else iter(lambda: "", None)
    for props, geometry in zip(rows, _geometry_texts(geometries, kind, crs), strict=False):
        yield f'{{ "type": "Feature", "properties": {{ {props} }}, "geometry": {geometry} }}'


def write_feature_collection(
    handle: IO[str],
    name: str,
    properties: Mapping[str, list[Any]],
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
