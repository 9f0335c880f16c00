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
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import islice, pairwise
from json.encoder import encode_basestring
from typing import IO, Any

import numpy as np
import pandas as pd
import shapely
from pyproj import CRS, Transformer

__all__ = ["feature_lines", "write_feature_collection"]

_MULTI: dict[str, Callable[..., Any]] = {
    "MultiPolygon": shapely.multipolygons,
    "MultiLineString": shapely.multilinestrings,
    "MultiPoint": shapely.multipoints,
}
"""Multi* type to the shapely constructor that promotes single parts."""


_CHUNK_FEATURES = 20_000
"""Feature lines joined and written at a time."""


def _nest(items: list[str], offsets: np.ndarray) -> list[str]:
    """Join ``items`` into one JSON array per offsets window."""
    return ["[ " + ", ".join(items[a:b]) + " ]" for a, b in pairwise(offsets.tolist())]


def _transformer(crs: object) -> Transformer | None:
    """Return the transformer to WGS84 longitude/latitude (None: already there, or no CRS)."""
    if crs is None:
        return None
    source, wgs84 = CRS.from_user_input(crs), CRS.from_epsg(4326)
    return None if source == wgs84 else Transformer.from_crs(source, wgs84, always_xy=True)


def _distinct(geometries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the rows with a geometry, each one's index into the distinct geometries, and those.

    Distinct by object first (the same drainage area on four rules' rows), then by WKB (the
    same disturbance, built again for each rule that shows it: 80,000 rows of 4,000
    applications held 5,600 distinct geometries).
    """
    geoms = np.asarray(geometries, dtype=object)
    present = np.flatnonzero(~shapely.is_missing(geoms) & ~shapely.is_empty(geoms))
    rows = geoms[present]
    by_object, _ = pd.factorize(np.fromiter(map(id, rows), dtype="int64", count=len(rows)))
    objects = rows[np.unique(by_object, return_index=True)[1]]
    by_wkb, _ = pd.factorize(np.asarray(shapely.to_wkb(objects), dtype=object))
    distinct = objects[np.unique(by_wkb, return_index=True)[1]]
    return present, by_wkb[by_object], distinct


def _geometry_texts(geometries: np.ndarray, kind: str, crs: object) -> list[str]:
    """Return the ``geometry`` member of every row: one vectorised pass over distinct ones."""
    texts = np.full(len(geometries), "null", dtype=object)
    present, where, distinct = _distinct(geometries)
    if not len(present):
        return list(texts)
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
    texts[present] = np.array([head + item + " }" for item in items], dtype=object)[where]
    return list(texts)


def _number(value: Any) -> str:
    """Return a number as the shortest text that reads back as it (``null`` when missing)."""
    if value is None:
        return "null"
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        return "null"
    return repr(number)  # the shortest text that reads back as the very number


def _value_texts(
    values: Sequence[Any] | np.ndarray | pd.api.extensions.ExtensionArray, prefix: str = ""
) -> list[str]:
    """Return ``prefix`` and the JSON text of each value of one column (text, number, ...).

    Each distinct value is encoded once (rule ids, citations, outcomes and figures repeat
    over thousands of rows): a float or boolean array by its values, pandas' text array or
    a column of texts and None by its distinct texts; any other mix value by value.
    """
    if isinstance(values, pd.api.extensions.ExtensionArray) and isinstance(
        values.dtype, pd.StringDtype
    ):  # pandas' text: its distinct texts found without making Python strings of every row
        codes, found = values.factorize(use_na_sentinel=True)
        texts = [prefix + encode_basestring(u) for u in np.asarray(found, dtype=object)]
        return list(np.array([*texts, prefix + "null"], dtype=object)[codes])
    if isinstance(values, np.ndarray) and values.dtype.kind in "fb":
        # floats by bit pattern: -0.0 and 0.0 are two texts
        codes, distinct = pd.factorize(
            values.astype("float64").view("int64") if values.dtype.kind == "f" else values
        )
        if values.dtype.kind == "f":
            distinct = distinct.view("float64")
        texts = [prefix + _value_text(v) for v in distinct.tolist()]
        return list(np.array(texts, dtype=object)[codes])
    array = np.empty(len(values), dtype=object)
    array[:] = list(values)
    codes, uniques = pd.factorize(array, use_na_sentinel=True)
    missing = codes < 0
    plain = all(type(u) is str for u in uniques.tolist()) and all(
        v is None for v in array[missing].tolist()
    )
    if not plain:
        return [prefix + _value_text(value) for value in array.tolist()]
    texts = [prefix + encode_basestring(u) for u in uniques.tolist()]
    return list(np.array([*texts, prefix + "null"], dtype=object)[codes])


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
    properties: Mapping[str, Sequence[Any] | np.ndarray],
    geometries: np.ndarray,
    kind: str,
    crs: object,
) -> Iterator[str]:
    """Yield one ``Feature`` line per row (``properties``: column name to its values)."""
    columns = [
        _value_texts(values, encode_basestring(str(name)) + ": ")
        for name, values in properties.items()
    ]
    rows = map(", ".join, zip(*columns, strict=True)) if columns else iter(lambda: "", None)
    for props, geometry in zip(rows, _geometry_texts(geometries, kind, crs), strict=False):
        yield f'{{ "type": "Feature", "properties": {{ {props} }}, "geometry": {geometry} }}'


def write_feature_collection(
    handle: IO[str],
    name: str,
    properties: Mapping[str, Sequence[Any] | np.ndarray],
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
    lines = feature_lines(properties, geometries, kind, crs)
    joiner = ""
    while chunk := list(islice(lines, _CHUNK_FEATURES)):
        handle.write(joiner + ",\n".join(chunk))
        joiner = ",\n"
    handle.write("\n]\n}\n")
