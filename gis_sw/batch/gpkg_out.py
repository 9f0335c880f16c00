"""``parcels.gpkg`` written through pyogrio's Arrow writer, as ``to_file`` would write it.

The layer's geometry type is inferred as pyogrio infers it (single and multi parts of one
kind make a multi layer), column types GDAL cannot take become strings, the CRS goes to
GDAL as ``EPSG:n`` or WKT1, and text is written with a NUL as U+2400
(:func:`gis_sw.outputs.geopackage.gdal_text_arrow`): the same file as
``GeoDataFrame.to_file(driver="GPKG")``, read back from ``parcels.parquet`` batch by batch
in bounded memory, and one R-tree built at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import shapely

from gis_sw.layers.validate import GEOMETRY_TYPE_NAMES

GPKG_LAYER = "parcels"

_PROMOTE: dict[tuple[int, ...], Callable[..., Any]] = {
    (0, 4): shapely.multipoints,
    (1, 5): shapely.multilinestrings,
    (3, 6): shapely.multipolygons,
}
"""(single, multi) type ids of one kind, and what makes the single ones multi."""


def gpkg_layer_type(geoms: np.ndarray) -> tuple[str, tuple[int, ...] | None]:
    """Return the geometry type of a GeoPackage layer of ``geoms``, as pyogrio infers it.

    As ``GeoDataFrame.to_file(driver="GPKG", engine="pyogrio")`` does: one type is the
    layer's type; single and multi parts of one kind make a multi layer, and the single
    parts must be made multi (the second value: their type ids, else None); anything else
    is ``Unknown``; `` Z`` is added when a geometry has z.
    """
    missing = shapely.is_missing(geoms)
    kinds = tuple(int(k) for k in np.unique(shapely.get_type_id(geoms)[~missing]))
    kind = GEOMETRY_TYPE_NAMES[kinds[0]] if len(kinds) == 1 else "Unknown"
    promote = kinds if kinds in _PROMOTE else None
    if promote is not None:
        kind = GEOMETRY_TYPE_NAMES[promote[1]]
    present = geoms[~missing & ~shapely.is_empty(geoms)]
    if kind != "Unknown" and shapely.has_z(present).any():
        kind = f"{kind} Z"
    return kind, promote


def gpkg_geometry(geoms: np.ndarray, wkb: pa.Array | None = None) -> tuple[pa.Array, str]:
    """Return the WKB a GeoPackage layer of ``geoms`` holds and the layer's geometry type.

    See :func:`gpkg_layer_type`.  ``wkb``: ``geoms`` already encoded, used as is unless
    single parts are made multi.
    """
    kind, promote = gpkg_layer_type(geoms)
    if promote is not None:
        single = shapely.get_type_id(geoms) == promote[0]
        geoms = geoms.copy()
        geoms[single] = _PROMOTE[promote](np.atleast_2d(geoms[single]), axis=0)
        wkb = None
    if wkb is None:
        wkb = pa.array(shapely.to_wkb(geoms), pa.binary())
    return wkb.cast(pa.binary()), kind


def gpkg_fields(table: pa.Table) -> pa.Table:
    """Return ``table`` with the column types GDAL cannot write made strings (as pyogrio)."""
    for at, column in enumerate(table.schema):
        kind = column.type
        if pa.types.is_null(kind):
            target: pa.DataType = pa.string()
        elif pa.types.is_dictionary(kind) and pa.types.is_null(kind.value_type):
            target = pa.dictionary(kind.index_type, pa.string())
        else:
            continue
        table = table.set_column(at, column.with_type(target), table.column(at).cast(target))
    return table


def gpkg_crs(crs: object) -> str | None:
    """Return the CRS as pyogrio gives it to GDAL: ``EPSG:n`` when it has a code, else WKT1."""
    if crs is None:
        return None
    from pyproj import CRS

    parsed = CRS.from_user_input(crs)
    epsg = parsed.to_epsg()
    return f"EPSG:{epsg}" if epsg else parsed.to_wkt("WKT1_GDAL")


def write_parcels_gpkg(
    path: Path, source: object, *, geometry_type: str, crs: object, append: bool = False
) -> None:
    """Write Arrow data (a table, or a stream of record batches) to a ``parcels`` layer.

    One call: the layer is created once and its R-tree index built once, at the end.
    ``source``'s ``geometry`` column is WKB (:func:`gpkg_geometry`).
    """
    from pyogrio.raw import write_arrow

    from gis_sw.outputs.geopackage import gdal_text_arrow

    reader = source.to_reader() if isinstance(source, pa.Table) else source
    if not isinstance(reader, pa.RecordBatchReader):
        raise TypeError(f"parcels.gpkg: Arrow data expected, not {type(source).__name__}")
    nul_free = pa.RecordBatchReader.from_batches(
        reader.schema, (gdal_text_arrow(batch) for batch in reader)
    )  # GDAL would cut a text value at a NUL
    write_arrow(
        nul_free,
        str(path),
        layer=GPKG_LAYER,
        driver="GPKG",
        geometry_name="geometry",
        geometry_type=geometry_type,
        crs=gpkg_crs(crs),
        append=append,
    )


PARQUET_BATCH_ROWS = 65_536
"""Rows of ``parcels.parquet`` read back at a time into ``parcels.gpkg`` (bounded memory)."""


def parcels_gpkg_source(parcels: gpd.GeoDataFrame, parquet: Path | None) -> tuple[Any, str]:
    """Return the Arrow data of ``parcels.gpkg`` and its layer's geometry type.

    Read back from the ``parcels.parquet`` just written, batch by batch, its WKB as is
    (the columns are the frame's as pyogrio would convert them); from the frame when there
    is no parquet, or when single parts must be made multi (:func:`gpkg_layer_type`).
    """
    geoms = parcels.geometry.to_numpy()
    kind, promote = gpkg_layer_type(geoms)
    if parquet is None or promote is not None:
        table = pa.Table.from_pandas(
            pd.DataFrame(parcels.drop(columns="geometry")), preserve_index=False
        )
        wkb, kind = gpkg_geometry(geoms)
        return gpkg_fields(table.replace_schema_metadata(None)).append_column("geometry", wkb), kind
    source = pq.ParquetFile(parquet)
    names = source.schema_arrow.names
    empty = gpkg_fields(source.schema_arrow.empty_table().replace_schema_metadata(None))
    fields = [pa.field(f.name, pa.binary()) if f.name == "geometry" else f for f in empty.schema]
    schema = pa.schema(fields)

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in source.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=names):
            yield pa.Table.from_batches([batch]).cast(schema).combine_chunks().to_batches()[0]

    return pa.RecordBatchReader.from_batches(schema, batches()), kind
