"""Which layers of a manifest can be read by window, the window in their CRS, and names.

A layer is read by window (:mod:`gis_sw.layers.window`) when its source can filter by
envelope and nothing about the layer needs all of it:

- a GeoPackage layer with its R-tree, a GeoParquet file with a bbox covering column
  (GeoParquet 1.1: row groups skipped by their statistics), or a PostGIS table (``&&`` on
  the GiST index)
  whose features all carry their id (the row of a feature in a whole table or Parquet
  file is not known, so such a layer whose id is optional, named ``#<row>`` without
  one, is read whole);
- no ``where`` filter (pyogrio cannot combine a filter with a read by fid);
- ``on_bad_feature = "error"`` (dropped features are reported by their row in the layer);
- ``coverage = "town"`` (a layer that maps part of the town gets its coverage from its
  whole extent, so it is read whole: such layers are small).

Anything else (Shapefile, GeoJSON, GeoParquet without a covering, DXF, rasters) is read
whole; rasters are
read over the extent of the vectors read, so a window of them follows
(:func:`gis_sw.layers.rasters_io.needed_area`).

The window is given in the working CRS.  A source in another CRS is asked for the box the
window's corners and edges (21 points a side) project to, grown by
:data:`REPROJECTED_MARGIN` of its size: the features that come back are a superset of the
ones whose envelope meets the window once reprojected.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyproj import CRS, Transformer
from pyproj.exceptions import CRSError, ProjError

from gis_sw.layers.manifest import LayerEntry
from gis_sw.layers.specs import TOWN_LAYERS, LayerSpec
from gis_sw.layers.vector import PARQUET_SUFFIXES, WINDOW_ROW
from gis_sw.layers.window import (
    Bounds,
    GpkgLayer,
    GpkgWindow,
    ParquetWindow,
    gpkg_layers,
    parquet_crs,
)

__all__ = [
    "REPROJECTED_MARGIN",
    "name_by_layer_row",
    "project_box",
    "source_box",
    "whole_extent",
    "windowable",
]

REPROJECTED_MARGIN = 0.01
"""Share of a reprojected window's size added on every side."""


def windowable(entry: LayerEntry) -> bool:
    """Whether ``entry`` can be read by window (module docstring)."""
    if entry.none or entry.is_raster or entry.where is not None or entry.skip_bad:
        return False
    if entry.coverage != "town":
        return False
    spec = TOWN_LAYERS[entry.kind]
    all_named = spec.id_column is None or spec.id_column in spec.required
    if entry.postgis is not None:  # a table, whose features all carry their id
        return entry.table is not None and all_named
    suffix = "" if entry.path is None else entry.path.suffix.lower()
    return suffix == ".gpkg" or (suffix in PARQUET_SUFFIXES and all_named)


def _grown(box: Bounds, share: float) -> Bounds:
    minx, miny, maxx, maxy = box
    pad = max(maxx - minx, maxy - miny) * share
    return (minx - pad, miny - pad, maxx + pad, maxy + pad)


def project_box(window: Bounds, *, working_crs: CRS, crs: CRS) -> Bounds:
    """``window`` (working CRS) as a box in ``crs`` that holds all of it."""
    if crs.equals(working_crs):
        return window
    transformer = Transformer.from_crs(working_crs, crs, always_xy=True)
    found = transformer.transform_bounds(*window, densify_pts=21)
    return _grown(tuple(float(v) for v in found), REPROJECTED_MARGIN)  # type: ignore[arg-type]


def _gpkg_layer(entry: LayerEntry) -> tuple[GpkgLayer, CRS] | None:
    """Return the GeoPackage layer of a windowable entry with an R-tree, and its CRS."""
    layers = gpkg_layers(entry.path) if entry.path is not None else None
    if not layers:
        return None
    table = entry.layer
    if table is None:
        table = entry.kind if entry.kind in layers else None
        if table is None and len(layers) == 1:
            table = next(iter(layers))
    layer = None if table is None else layers.get(table)
    if layer is None or layer.rtree is None:
        return None  # the whole read names a missing layer
    file_crs = CRS(layer.crs) if layer.crs else None
    crs = entry.crs if file_crs is None or entry.crs_override else file_crs
    return None if crs is None else (layer, crs)


def source_box(
    entry: LayerEntry, window: Bounds | None, working_crs: CRS
) -> GpkgWindow | ParquetWindow | Bounds | None:
    """Return where to read a layer: a GeoPackage layer and the window in its CRS.

    For PostGIS, the window itself (working CRS: the query projects it); None to read the
    layer whole.
    """
    if window is None or not windowable(entry):
        return None
    if entry.postgis is not None or entry.path is None:
        return window
    if entry.path.suffix.lower() in PARQUET_SUFFIXES:
        return _parquet_window(entry, window, working_crs)
    found = _gpkg_layer(entry)
    if found is None:
        return None
    layer, crs = found
    try:
        box = project_box(window, working_crs=working_crs, crs=crs)
    except (ProjError, CRSError):  # a CRS nothing projects to: the whole read says so
        return None
    return GpkgWindow(layer.table, box)


def _parquet_window(entry: LayerEntry, window: Bounds, working_crs: CRS) -> ParquetWindow | None:
    """Return the window of a GeoParquet file with a bbox covering, in its CRS, or None."""
    found = _parquet_meta(entry)
    if found is None:
        return None
    crs, _ = found
    return ParquetWindow(project_box(window, working_crs=working_crs, crs=crs))


def _parquet_meta(entry: LayerEntry) -> tuple[CRS, Bounds] | None:
    """Return the CRS and extent of a GeoParquet file with a bbox covering, or None."""
    assert entry.path is not None
    found = parquet_crs(entry.path)
    if found is None:
        return None
    text, extent = found
    given = entry.crs_override and entry.crs is not None
    return (entry.crs if given else CRS.from_user_input(text)), extent  # type: ignore[return-value]


def whole_extent(entry: LayerEntry, working_crs: CRS) -> Bounds | None:
    """Return the extent of a whole GeoPackage layer or GeoParquet file (working CRS).

    None when the layer is not read by window or its catalog records no extent.  A
    reprojected extent is the box its edges project to.
    """
    if not windowable(entry) or entry.postgis is not None or entry.path is None:
        return None
    if entry.path.suffix.lower() in PARQUET_SUFFIXES:
        meta = _parquet_meta(entry)
        if meta is None:
            return None
        crs, extent = meta
    else:
        found = _gpkg_layer(entry)
        if found is None or found[0].extent is None:
            return None
        layer, crs = found
        extent = layer.extent  # type: ignore[assignment]
    if crs.equals(working_crs):
        return extent
    try:
        back = Transformer.from_crs(crs, working_crs, always_xy=True)
    except (ProjError, CRSError):  # a CRS nothing projects from: the whole read says so
        return None
    return tuple(float(v) for v in back.transform_bounds(*extent, densify_pts=21))  # type: ignore[return-value]


def name_by_layer_row(frame: pd.DataFrame, spec: LayerSpec) -> pd.DataFrame:
    """Drop :data:`WINDOW_ROW`, first naming features without their optional id ``#<row>``.

    The row is the feature's row in the whole layer (from 1), the name the checks and
    :class:`gis_sw.Town` give such a feature when the whole layer is read.
    """
    rows = np.asarray(frame[WINDOW_ROW], dtype=np.int64)
    out = frame.drop(columns=WINDOW_ROW)
    column = spec.id_column
    if column is None or column in spec.required or column not in out.columns:
        return out
    missing = out[column].isna().to_numpy()
    if not missing.any():
        return out
    values = out[column].astype("object").to_numpy().copy()
    values[missing] = [f"#{r + 1}" for r in rows[missing]]
    out[column] = values
    return out
