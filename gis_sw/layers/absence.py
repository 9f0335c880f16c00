"""Layers with no features: a declared absence, or an empty layer that must be declared.

An optional layer provided with no features (an empty wells layer, or one whose every
feature was dropped as bad) would let the rules that rely on it pass ("no well"), though an
empty export says nothing about the ground.  It is refused, naming the layer and the fix:
declare the absence in the layers manifest (``none = true``), whose messages then say so.
A window of a layer that found nothing near the proposals is fine when the layer itself has
features (:func:`has_any_feature`).
"""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
from pyproj import CRS

from gis_sw.errors import Problem
from gis_sw.layers.layerset import LayerReport
from gis_sw.layers.manifest import LayerEntry
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.layers.vector import PARQUET_SUFFIXES, crs_text, crs_units

__all__ = ["declared_none", "empty_layer_problem", "has_any_feature"]


def declared_none(entry: LayerEntry, *, working_crs: CRS) -> tuple[gpd.GeoDataFrame, LayerReport]:
    """Return the empty layer of a declared absence (``none = true``), with its report."""
    spec = TOWN_LAYERS[entry.kind]
    columns = {name: pd.Series(dtype="object") for name in {**spec.required, **spec.optional}}
    frame = gpd.GeoDataFrame(columns, geometry=gpd.GeoSeries([], crs=working_crs), crs=working_crs)
    nan = float("nan")
    report = LayerReport(
        kind=entry.kind,
        source="declared none in the layers manifest",
        features=0,
        source_crs=crs_text(working_crs),
        units=crs_units(working_crs),
        bounds=(nan, nan, nan, nan),
        declared_none=True,
    )
    return frame, report


def empty_layer_problem(entry: LayerEntry, *, dropped: int = 0) -> Problem:
    """Return the problem of an optional layer read whole with no features left."""
    why = (
        f"has no features left: all {dropped:,} were dropped as bad (on_bad_feature = skip)"
        if dropped
        else "has no features"
        + ("" if entry.where is None else f" (where {entry.where} kept none)")
    )
    return Problem(
        f"{entry.kind} [{entry.label}]",
        f"{why}, so the rules that rely on it could pass on no data.",
        f"if the town has no {entry.kind.replace('_', ' ')}, declare it in the layers manifest "
        f"([{entry.kind}] none = true) and the rules' messages will say so; otherwise "
        "export the layer again with its features.",
    )


def has_any_feature(entry: LayerEntry) -> bool | None:
    """Return whether a windowable layer's source holds any feature; None if not known.

    A GeoPackage layer's count comes from GDAL (its ``gpkg_ogr_contents``), a GeoParquet
    file's from its footer; a PostGIS table is not asked (None: read it whole).
    """
    if entry.path is None:
        return None
    if entry.path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        return bool(pq.read_metadata(entry.path).num_rows)
    from gis_sw.layers.window import gpkg_has_rows

    found = gpkg_has_rows(entry.path, entry.layer if entry.layer is not None else entry.kind)
    if found is not None:  # a GeoPackage's table, asked in SQLite: GDAL need not open it
        return found
    import pyogrio

    layer = entry.layer
    if layer is None:
        names = [str(n) for n in pyogrio.list_layers(entry.path)[:, 0]]
        layer = entry.kind if entry.kind in names else (names[0] if len(names) == 1 else None)
    if layer is None:
        return None
    count = int(pyogrio.read_info(entry.path, layer=layer)["features"])
    return None if count < 0 else bool(count)
