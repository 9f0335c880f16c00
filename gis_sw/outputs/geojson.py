"""Findings as RFC 7946 GeoJSON that ArcGIS Pro's *JSON To Features* and QGIS both read.

The files are what GDAL writes with ``RFC7946=YES`` and ``COORDINATE_PRECISION=7``: WGS84
longitude/latitude, counter-clockwise outer rings, no ``crs`` member, 7 decimals (about
1 cm).  They are written as text by :mod:`gis_sw.outputs.geojson_text` (GDAL took half a
minute for a drainage area of 100,000 polygons on four rows), by GDAL for 3D geometries.

One geometry type per file, never a GeometryCollection: findings are split by geometry
family and every geometry is promoted to its Multi* type:

=========================== =============== ==================================
file                        geometry type   holds
=========================== =============== ==================================
``findings.geojson``        MultiPolygon    polygon findings, and findings with no
                                            geometry (``"geometry": null``)
``findings_lines.geojson``  MultiLineString line findings (device to well, ...)
``findings_points.geojson`` MultiPoint      point findings (devices, wells)
=========================== =============== ==================================

All three files are always written (possibly with no features), so a re-run never leaves a
stale file from an earlier run.  A GeometryCollection (an overlay result with slivers of
lines) keeps its polygonal part, or else its lines, or else its points.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from gis_sw.outputs.atomic import atomic_path, check_writable
from gis_sw.outputs.geojson_text import write_feature_collection

__all__ = [
    "FAMILY_FILES",
    "geometry_family",
    "plain_properties",
    "split_by_family",
    "write_findings_geojson",
]

FAMILY_FILES: dict[str, tuple[str, str]] = {
    "polygons": ("findings.geojson", "MultiPolygon"),
    "lines": ("findings_lines.geojson", "MultiLineString"),
    "points": ("findings_points.geojson", "MultiPoint"),
}
"""Geometry family to (file name, geometry type)."""

_TYPE_FAMILY = {
    0: "points",
    4: "points",
    1: "lines",
    2: "lines",
    5: "lines",
    3: "polygons",
    6: "polygons",
}


def _simplify_collection(geometry: shapely.Geometry) -> shapely.Geometry | None:
    parts = shapely.get_parts(geometry)
    for family in ("polygons", "lines", "points"):
        chosen = [p for p in parts if _TYPE_FAMILY.get(int(shapely.get_type_id(p))) == family]
        if chosen:
            return shapely.union_all(chosen) if len(chosen) > 1 else chosen[0]
    return None


def geometry_family(geometries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Family of each geometry (``polygons``, ``lines``, ``points``, ``none``).

    Returns
    -------
    (families, geometries)
        The family names and the geometries, with collections reduced to one family and
        empty geometries replaced by None.
    """
    geoms = np.asarray(geometries, dtype=object).copy()
    type_ids = shapely.get_type_id(geoms)
    for pos in np.flatnonzero(type_ids == 7):
        geoms[pos] = _simplify_collection(geoms[pos])
    type_ids = shapely.get_type_id(geoms)
    empty = shapely.is_empty(geoms) | (type_ids < 0)
    geoms[empty] = None
    families = np.array([_TYPE_FAMILY.get(int(t), "none") for t in type_ids], dtype=object)
    families[empty] = "none"
    return families, geoms


def split_by_family(findings: gpd.GeoDataFrame) -> dict[str, gpd.GeoDataFrame]:
    """Return the findings by geometry family: ``polygons``, ``lines``, ``points`` and ``none``."""
    families, geoms = geometry_family(findings.geometry.to_numpy())
    frame = findings.copy()
    frame = frame.set_geometry(gpd.GeoSeries(geoms, index=frame.index, crs=findings.crs))
    return {
        family: frame[families == family].reset_index(drop=True)
        for family in ("polygons", "lines", "points", "none")
    }


def _texts(column: pd.Series) -> pd.Series:
    """Each value as text, None where missing (one pass: 500,000 findings).

    A text column's values are its texts already: only its missing values change.
    """
    if isinstance(column.dtype, pd.StringDtype):
        values = column.array.to_numpy(dtype=object, na_value=None)
        return pd.Series(values, index=column.index, dtype=object)
    values = column.to_numpy(dtype=object)
    missing = pd.isna(values)
    texts = pd.Series(list(map(str, values)), index=column.index, dtype=object)
    return texts.where(~missing, None)


def plain_properties(frame: gpd.GeoDataFrame, *, keep_text: bool = False) -> gpd.GeoDataFrame:
    """Plain types GDAL writes well: str, float, bool.

    With ``keep_text``, a column of pandas' text dtype is kept as it is (GDAL's Arrow
    writer takes it without a conversion; its missing values are nulls either way).
    """
    out = frame.copy()
    for name in out.columns:
        if name == out.geometry.name or (
            keep_text
            and isinstance(out[name].dtype, pd.StringDtype)
            and name not in ("waived", "measured", "threshold")
        ):
            continue
        if name == "waived":
            out[name] = out[name].fillna(False).astype(bool)  # noqa: FBT003
        elif name in ("measured", "threshold"):
            out[name] = pd.to_numeric(out[name], errors="coerce").astype("float64")
        else:
            out[name] = _texts(out[name])
    return out


def write_findings_geojson(
    out_dir: str | Path, findings: gpd.GeoDataFrame, *, overwrite: bool = False
) -> list[Path]:
    """Write ``findings.geojson``, ``findings_lines.geojson``, ``findings_points.geojson``.

    Raises
    ------
    OutputError
        If a file exists and ``overwrite`` is False (checked for all three before any is
        written), or a file cannot be written.
    """
    out_dir = Path(out_dir)
    targets = {family: out_dir / name for family, (name, _) in FAMILY_FILES.items()}
    for path in targets.values():
        check_writable(path, overwrite=overwrite)
    parts = split_by_family(findings)
    parts["polygons"] = pd.concat([parts["polygons"], parts["none"]], ignore_index=True)
    written = []
    for family, path in targets.items():
        frame = plain_properties(
            gpd.GeoDataFrame(parts[family], geometry="geometry", crs=findings.crs),
            keep_text=True,
        )
        with atomic_path(path, overwrite=overwrite) as tmp:
            _write_one(tmp, path.stem, frame, FAMILY_FILES[family][1])
        written.append(path)
    return written


def _column_values(column: pd.Series) -> Any:
    """Return a column as the text writer takes it: pandas' text array, numpy array or list."""
    if isinstance(column.dtype, pd.StringDtype):
        return column.array
    return column.to_numpy() if column.dtype.kind in "fb" else column.tolist()


def _write_one(tmp: Path, name: str, frame: gpd.GeoDataFrame, kind: str) -> None:
    """Write one family's file: as text (:mod:`gis_sw.outputs.geojson_text`), by GDAL for 3D."""
    geoms = frame.geometry.to_numpy()
    if len(geoms) and bool(shapely.has_z(geoms[~pd.isna(geoms)]).any()):
        pyogrio.write_dataframe(
            frame,
            tmp,
            driver="GeoJSON",
            layer=name,
            geometry_type=kind,
            promote_to_multi=True,
            layer_options={"RFC7946": "YES", "COORDINATE_PRECISION": "7"},
        )
        return
    properties = {c: _column_values(frame[c]) for c in frame.columns if c != frame.geometry.name}
    with tmp.open("w", encoding="utf-8") as handle:
        write_feature_collection(handle, name, properties, geoms, kind=kind, crs=frame.crs)
