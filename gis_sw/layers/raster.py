"""Rasters of the town: DEM, seasonal high groundwater, bedrock.

A :class:`RasterLayer` is held in memory in the working CRS (rasters of a town are small;
a county DEM should be clipped by the caller).  Values are float64 feet with ``nan`` for
nodata.  Groundwater and bedrock come either as depth below ground (``mode="depth"``) or as
elevation (``mode="elevation"``); the manifest says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import shapely
from affine import Affine
from pyproj import CRS
from rasterio import features

SNAP_DECIMALS = 6
"""Coordinates are rounded to 1e-6 working-CRS units before finding the cells under them.

A vertex on a cell edge (a grid-aligned survey, or a layer reprojected from metres and
back) otherwise lands on either side of it by a rounding error of 1e-9, and a device's
"worst place" would change with the CRS the files were stored in."""


class RasterMode(StrEnum):
    """What a raster's values are: ground or surface elevations, or depths below ground."""

    ELEVATION = "elevation"
    DEPTH = "depth"


def cell_window(
    transform: Affine, shape: tuple[int, ...], geometry: Any
) -> tuple[int, int, int, int] | None:
    """Return ``(row_lo, row_hi, col_lo, col_hi)`` of the cells under ``geometry``'s bounds.

    One cell of margin each side, clipped to a grid of ``shape``; None when none is inside.
    """
    minx, miny, maxx, maxy = shapely.bounds(geometry).tolist()
    inv = ~transform
    c0, r0 = inv @ (minx, maxy)
    c1, r1 = inv @ (maxx, miny)
    nrows, ncols = shape[0], shape[1]
    col_lo = max(int(np.floor(min(c0, c1))) - 1, 0)
    col_hi = min(int(np.ceil(max(c0, c1))) + 1, ncols)
    row_lo = max(int(np.floor(min(r0, r1))) - 1, 0)
    row_hi = min(int(np.ceil(max(r0, r1))) + 1, nrows)
    if col_lo >= col_hi or row_lo >= row_hi:
        return None
    return row_lo, row_hi, col_lo, col_hi


@dataclass(frozen=True, slots=True, eq=False)
class RasterLayer:
    """A single-band raster in the working CRS.

    Attributes
    ----------
    kind
        ``dem``, ``seasonal_high_groundwater`` or ``bedrock``.
    values
        2-D float64 array, ``nan`` where there is no data.
    transform
        Affine transform from (col, row) to working-CRS coordinates.
    crs
        The working CRS.
    mode
        Whether values are elevations or depths below ground (ft).
    source
        Where it was read from, for messages.
    file_extent
        When only a window of the file was read (the area the other layers need), the
        whole file's extent in the working CRS: beyond the grid's edge the file goes on
        there, so a flow path leaving the grid has not left the DEM.  None when the whole
        file was read (or the raster was built in memory).
    full_bounds
        When the grid is a window of the grid a whole read of the town gives (the DEM of
        ``gis-sw check`` is read around the proposals, :mod:`gis_sw.dem_reach`), that
        grid's bounds: on a side where they reach beyond this grid, its edge is not the edge
        a whole read has (a flow path reaching it is cut short, not off the DEM).  None:
        this grid is that one.
    """

    kind: str
    values: np.ndarray
    transform: Affine
    crs: CRS
    mode: RasterMode = RasterMode.ELEVATION
    source: str = ""
    file_extent: tuple[float, float, float, float] | None = None
    full_bounds: tuple[float, float, float, float] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the grid."""
        return (int(self.values.shape[0]), int(self.values.shape[1]))

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(minx, miny, maxx, maxy) in the working CRS."""
        rows, cols = self.shape
        x0, y0 = self.transform @ (0, 0)
        x1, y1 = self.transform @ (cols, rows)
        return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))

    @property
    def cell_size(self) -> tuple[float, float]:
        """(width, height) of a cell in the working CRS's unit."""
        return (abs(self.transform.a), abs(self.transform.e))

    def sample_xy(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Value of the cell under each (x, y); ``nan`` outside the raster or on nodata."""
        x = np.round(np.asarray(x, dtype="float64"), SNAP_DECIMALS)
        y = np.round(np.asarray(y, dtype="float64"), SNAP_DECIMALS)
        inv = ~self.transform
        cols, rows = inv @ (x, y)
        cols = np.floor(np.asarray(cols)).astype("int64")
        rows = np.floor(np.asarray(rows)).astype("int64")
        nrows, ncols = self.shape
        inside = (rows >= 0) & (rows < nrows) & (cols >= 0) & (cols < ncols)
        out = np.full(x.shape, np.nan)
        out[inside] = self.values[rows[inside], cols[inside]]
        return out

    def cells_under(self, geometry: shapely.Geometry) -> np.ndarray:
        """Values of every cell a geometry touches (all-touched), nodata dropped.

        A point gives the one cell it falls in.  An empty array means the geometry lies
        outside the raster or only over nodata.
        """
        if geometry is None or shapely.is_empty(geometry):
            return np.empty(0)
        if isinstance(geometry, shapely.Point):
            value = self.sample_xy(np.array([geometry.x]), np.array([geometry.y]))
            return value[~np.isnan(value)]
        geometry = shapely.set_precision(geometry, 10.0**-SNAP_DECIMALS)
        found = cell_window(self.transform, self.shape, geometry)
        if found is None:
            return np.empty(0)
        row_lo, row_hi, col_lo, col_hi = found
        window = self.values[row_lo:row_hi, col_lo:col_hi]
        win_transform = self.transform @ Affine.translation(col_lo, row_lo)
        mask = features.geometry_mask(
            [geometry],
            out_shape=window.shape,
            transform=win_transform,
            all_touched=True,
            invert=True,
        )
        vals = window[mask]
        return vals[~np.isnan(vals)]
