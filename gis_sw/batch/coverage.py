"""Layers that map part of the town: their coverage areas go with every chunk.

A layer whose manifest gives a coverage area (:attr:`gis_sw.layers.layerset.LayerSet.coverage`)
cannot show what lies outside it: a parcel not wholly inside is never ``clear`` in the
batch, it is ``review``, with a note naming the layer.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import shapely

from gis_sw.batch.areas import GeomArray
from gis_sw.batch.chunks import CONTEXT_KINDS, Chunk
from gis_sw.layers.layerset import LayerSet

COVERAGE_PREFIX = "coverage:"
"""Context key of the area a layer maps (``coverage:buildings``), when it maps part of
the town (:attr:`gis_sw.layers.layerset.LayerSet.coverage`)."""


def coverage_context(layers: LayerSet) -> dict[str, gpd.GeoDataFrame | None]:
    """One context frame per layer that maps only part of the town: its coverage area."""
    return {
        f"{COVERAGE_PREFIX}{kind}": gpd.GeoDataFrame(
            geometry=gpd.GeoSeries([area], crs=layers.crs), crs=layers.crs
        )
        for kind in CONTEXT_KINDS
        if (area := layers.covers(kind)) is not None
    }


def outside_coverage(
    chunk: Chunk, geoms: GeomArray, unusable: np.ndarray, notes: dict[int, list[str]]
) -> np.ndarray:
    """Parcels not wholly inside the coverage of a layer that maps part of the town.

    Such a parcel is never ``clear``: the layer cannot show what lies on it (review).
    """
    outside_any = np.zeros(len(geoms), dtype=bool)
    for kind in CONTEXT_KINDS:
        key = f"{COVERAGE_PREFIX}{kind}"
        if key not in chunk.present:
            continue
        frame = chunk.context.get(key)
        area = (
            shapely.union_all(frame.geometry.to_numpy())
            if frame is not None and len(frame)
            else None
        )
        inside = np.zeros(len(geoms), dtype=bool)
        usable = ~unusable
        if area is not None and usable.any():
            inside[usable] = shapely.covered_by(geoms[usable], area)
        outside = usable & ~inside
        words = kind.replace("_", " ")
        for i in np.flatnonzero(outside):
            notes.setdefault(int(i), []).append(
                f"{words} cover only part of the town; this parcel is outside it"
            )
        outside_any |= outside
    return outside_any
