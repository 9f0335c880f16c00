"""Findings as a GeoPackage in the working CRS: the authoritative copy for QGIS and ArcGIS.

``findings.gpkg`` holds four layers (ArcGIS Pro reads one geometry type per layer):

* ``findings``: every finding, as an attribute table (no geometry): the one table to
  query, filter or join;
* ``findings_polygons`` (MultiPolygon), ``findings_lines`` (MultiLineString),
  ``findings_points`` (MultiPoint): the findings that carry a geometry of that family,
  with the same columns (see :func:`gis_sw.outputs.geojson.split_by_family`).

Coordinates stay in the ruleset's working CRS (EPSG:2260, US survey feet, by default).

GDAL passes text to SQLite as C strings, so a NUL character would end the value there (an
id of ``a``, NUL, ``b`` would be written ``a``): every NUL in a text value is written as
U+2400 SYMBOL FOR NULL instead (:data:`NUL_STANDIN`), visibly, and nothing after it is lost
(:func:`gdal_text`).  The CSV, xlsx and GeoJSON outputs escape a NUL in their own ways.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import pyogrio

from gis_sw.outputs.atomic import atomic_path
from gis_sw.outputs.geojson import FAMILY_FILES, plain_properties, split_by_family

__all__ = ["NUL_STANDIN", "gdal_text", "gdal_text_arrow", "write_findings_geopackage"]

NUL_STANDIN = "\u2400"
"""What a NUL character in a text value is written as (GDAL would cut the value there)."""


def gdal_text(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with every NUL in its text columns written as :data:`NUL_STANDIN`.

    ``frame`` itself is returned when no value holds a NUL (the usual case: one vectorised
    test per text column, no copy).  Values that are not text are left as they are.
    """
    out = frame
    for name in frame.columns:
        column = frame[name]
        if not (isinstance(column.dtype, pd.StringDtype) or column.dtype == object):
            continue
        if isinstance(column.dtype, pd.StringDtype):
            has_nul = column.str.contains("\x00", regex=False)
        else:
            try:
                has_nul = column.str.contains("\x00", regex=False)
            except AttributeError:  # no text in the column at all
                continue
        has_nul = has_nul.astype("boolean").fillna(value=False).astype(bool)
        if not has_nul.any():
            continue
        if out is frame:
            out = frame.copy()
        out[name] = column.mask(has_nul, column.str.replace("\x00", NUL_STANDIN, regex=False))
    return out


def _nul_free(column: Any) -> Any:
    """Return a string Arrow array (or dictionary of strings) with NUL as :data:`NUL_STANDIN`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(column.type):
        words = _nul_free(column.dictionary)
        if words is column.dictionary:
            return column
        return pa.DictionaryArray.from_arrays(column.indices, words)
    if not pc.any(pc.match_substring(column, "\x00")).as_py():
        return column
    return pc.replace_substring(column, "\x00", NUL_STANDIN)


def gdal_text_arrow(batch: Any) -> Any:
    """:func:`gdal_text` for an Arrow record batch or table: string columns made NUL-free."""
    import pyarrow as pa

    def texty(kind: Any) -> bool:
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))

    for at, field in enumerate(batch.schema):
        if not texty(field.type):
            continue
        column = batch.column(at)
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        fixed = [_nul_free(chunk) for chunk in chunks]
        if all(new is old for new, old in zip(fixed, chunks, strict=True)):
            continue
        if isinstance(column, pa.ChunkedArray):
            batch = batch.set_column(at, field, pa.chunked_array(fixed, type=field.type))
        else:
            batch = batch.set_column(at, field, fixed[0])
    return batch


def write_findings_geopackage(
    path: str | Path, findings: gpd.GeoDataFrame, *, overwrite: bool = False
) -> Path:
    """Write ``findings.gpkg`` (all four layers in one atomic rename).

    Raises
    ------
    OutputError
        If the file exists and ``overwrite`` is False, or it cannot be written.
    """
    path = Path(path)
    parts = split_by_family(findings)
    table = gdal_text(
        pd.DataFrame(
            plain_properties(findings, keep_text=True).drop(columns=findings.geometry.name)
        )
    )
    with atomic_path(path, overwrite=overwrite) as tmp:
        with warnings.catch_warnings():  # an attribute table has no CRS, by design
            warnings.filterwarnings("ignore", message="'crs' was not provided")
            pyogrio.write_dataframe(table, tmp, driver="GPKG", layer="findings", use_arrow=True)
        for family, (_, geometry_type) in FAMILY_FILES.items():
            frame = gdal_text(
                plain_properties(
                    gpd.GeoDataFrame(parts[family], geometry="geometry", crs=findings.crs),
                    keep_text=True,
                )
            )
            pyogrio.write_dataframe(
                frame,
                tmp,
                driver="GPKG",
                layer=f"findings_{family}",
                geometry_type=geometry_type,
                promote_to_multi=True,
                use_arrow=True,  # GDAL's Arrow writer: a third of the time for 500,000 rows
            )
    return path
