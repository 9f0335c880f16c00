"""Where a town raster is read: the area the vectors and the rules' reach need, in the working CRS.

Split from :mod:`gis_sw.layers.read`, which calls :func:`raster_area` for every raster of
a manifest and :func:`read_raster_entry` to read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from pyproj import CRS

from gis_sw.layers.layerset import LayerReport
from gis_sw.layers.manifest import LayerEntry
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.rasters_io import largest_distance_ft, needed_area, read_raster
from gis_sw.layers.window import Bounds
from gis_sw.ruleset import Ruleset
from gis_sw.units import feet_per_unit

if TYPE_CHECKING:
    from gis_sw.layers.read import LayerInspection

__all__ = ["TOWN_WIDE_RASTERS", "raster_area", "read_raster_entry"]

TOWN_WIDE_RASTERS = ("dem",)
"""Rasters whose grid is the whole town's: a runoff path goes where the ground falls.  Read
by window as the others (in the working CRS), the town's grid its ``full_bounds``, and more
of it where a path runs beyond (:mod:`gis_sw.dem_reach`, :func:`read_raster_entry`)."""


def raster_area(
    entry: LayerEntry,
    inspection: LayerInspection,
    ruleset: Ruleset,
    extents: Mapping[str, Bounds] | None,
) -> tuple[Bounds | None, Bounds | None]:
    """Return the area a raster is read over, and a whole read's area when that is more.

    The area is the vectors' extent grown by the reach; the second is None when the raster
    is read as a whole read reads it.  When the vectors were read by window (``extents``
    given), a raster is read over the windows; one to reproject (its grid in the working
    CRS follows the area read) over the whole town: the windowed layers' whole extents and
    the layers read whole, as a whole read would; one of :data:`TOWN_WIDE_RASTERS` over
    the windows, within that whole area.
    """
    margin_ft = largest_distance_ft(ruleset.raw)
    if extents is None:
        return needed_area(inspection.vectors, margin_ft=margin_ft), None
    pad = margin_ft / feet_per_unit(ruleset.working_crs)
    padded = [(b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad) for b in inspection.windows.values()]
    reprojected = not _in_working_crs(entry, ruleset.working_crs)
    if entry.kind in TOWN_WIDE_RASTERS or reprojected:
        area = needed_area(inspection.vectors, margin_ft=margin_ft)
        boxes = [] if area is None else [area]
        boxes += [(b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad) for b in extents.values()]
        whole = _box_of(boxes) or needed_area(inspection.vectors, margin_ft=margin_ft)
        if reprojected or not padded or whole is None:
            return whole, None
        return _box_of(padded), whole
    return _box_of(padded) or needed_area(inspection.vectors, margin_ft=margin_ft), None


def _box_of(boxes: list[Bounds]) -> Bounds | None:
    """Return the box holding every box of ``boxes`` (None: no box)."""
    if not boxes:
        return None
    stack = np.asarray(boxes, dtype="float64")
    return (
        float(stack[:, 0].min()),
        float(stack[:, 1].min()),
        float(stack[:, 2].max()),
        float(stack[:, 3].max()),
    )


def read_raster_entry(
    entry: LayerEntry,
    *,
    working_crs: CRS,
    area: Bounds | None,
    full_area: Bounds | None = None,
) -> tuple[RasterLayer, LayerReport]:
    """One raster of a manifest over ``area`` (within ``full_area``), in the working CRS.

    Raises
    ------
    InputFileError, CRSError, LayerError
        As :func:`gis_sw.layers.rasters_io.read_raster`.
    """
    assert entry.path is not None  # the manifest refuses PostGIS rasters
    return read_raster(
        entry.path,
        kind=entry.kind,
        working_crs=working_crs,
        mode=entry.mode,
        units=entry.units,
        crs=entry.crs,
        area=area,
        full_area=full_area,
    )


def _in_working_crs(entry: LayerEntry, working_crs: CRS) -> bool:
    """Whether a raster's cells are in the working CRS (read as they are, not resampled)."""
    import rasterio
    from rasterio.errors import RasterioIOError

    try:
        with rasterio.open(entry.path) as src:
            crs = CRS.from_wkt(src.crs.to_wkt()) if src.crs is not None else entry.crs
    except RasterioIOError:
        return True  # the read names the file
    return crs is not None and crs.equals(working_crs)
