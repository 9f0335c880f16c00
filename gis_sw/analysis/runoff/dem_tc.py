"""Time of concentration from the DEM for thousands of drainage areas at once.

:func:`~gis_sw.analysis.runoff.site.dem_time_of_concentration` of every area, its cells
found in one vectorised pass: each area's window of DEM cells (the same window), the cell
centres tested in one ``shapely.contains_xy`` call for all areas, the highest and lowest
cell of each area taken as ``argmax``/``argmin`` do (the first of equal values, in the
window's row order).  The flow path of each area (its length, slope and TR-55 segments) is
then computed as the one-area function does, with the same float operations, so the figures
are the same.  Areas are taken a few thousand at a time (their cells held at once).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import shapely

from gis_sw.analysis.runoff.levels import same_areas
from gis_sw.analysis.runoff.params import HydrologyParams
from gis_sw.analysis.runoff.site import TimeOfConcentration, flow_path_tc
from gis_sw.layers.raster import RasterLayer

__all__ = ["dem_times_of_concentration"]

CELLS_AT_ONCE = 2_000_000
"""At most about this many DEM cells are held at once (a chunk of areas' windows)."""


def _windows(areas: np.ndarray, dem: RasterLayer) -> tuple[np.ndarray, ...]:
    """Return each area's first row, first column, rows and columns of DEM cells."""
    bounds = shapely.bounds(areas)
    inv = ~dem.transform
    c0, r0 = inv @ (bounds[:, 0], bounds[:, 3])
    c1, r1 = inv @ (bounds[:, 2], bounds[:, 1])
    nrows, ncols = dem.shape
    col_lo = np.maximum(np.floor(np.minimum(c0, c1)), 0).astype("int64")
    col_hi = np.minimum(np.ceil(np.maximum(c0, c1)), ncols).astype("int64")
    row_lo = np.maximum(np.floor(np.minimum(r0, r1)), 0).astype("int64")
    row_hi = np.minimum(np.ceil(np.maximum(r0, r1)), nrows).astype("int64")
    n_cols = np.maximum(col_hi - col_lo, 0)
    n_rows = np.maximum(row_hi - row_lo, 0)
    return row_lo, col_lo, n_rows, n_cols


def _first_at(owner: np.ndarray, hit: np.ndarray, n: int) -> np.ndarray:
    """Return, for each owner in ``range(n)``, the first position where ``hit`` (or -1)."""
    out = np.full(n, -1, dtype="int64")
    pos = np.flatnonzero(hit)
    owners, first = np.unique(owner[pos], return_index=True)
    out[owners] = pos[first]
    return out


def _extremes(
    areas: np.ndarray, dem: RasterLayer
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return the inside cells' x, y, values, and each area's highest and lowest (or -1)."""
    n = len(areas)
    row_lo, col_lo, n_rows, n_cols = _windows(areas, dem)
    sizes = n_rows * n_cols
    owner = np.repeat(np.arange(n), sizes)
    k = np.arange(len(owner)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    cc = col_lo[owner] + k % np.maximum(n_cols, 1)[owner]
    rr = row_lo[owner] + k // np.maximum(n_cols, 1)[owner]
    a, b, c, d, e, f = dem.transform[:6]
    xs = a * (cc + 0.5) + b * (rr + 0.5) + c
    ys = d * (cc + 0.5) + e * (rr + 0.5) + f
    values = dem.values[rr, cc]
    inside = shapely.contains_xy(areas[owner], xs, ys) & ~np.isnan(values)
    owner, xs, ys, values = owner[inside], xs[inside], ys[inside], values[inside]
    counts = np.bincount(owner, minlength=n)
    hi = np.full(n, -1, dtype="int64")
    lo = np.full(n, -1, dtype="int64")
    if len(owner):
        fill = np.full(n, -np.inf)
        np.maximum.at(fill, owner, values)
        hi = _first_at(owner, values == fill[owner], n)
        fill = np.full(n, np.inf)
        np.minimum.at(fill, owner, values)
        lo = _first_at(owner, values == fill[owner], n)
    few = counts < 2
    hi[few], lo[few] = -1, -1
    return xs, ys, values, hi, lo


def dem_times_of_concentration(
    areas: Sequence[shapely.Geometry], dem: RasterLayer, params: HydrologyParams, p2_in: float
) -> list[TimeOfConcentration | None]:
    """Return :func:`~gis_sw.analysis.runoff.site.dem_time_of_concentration` of every area.

    None where fewer than two cells fall inside an area, or its highest and lowest cells
    are one point.  Found once per distinct area (:func:`same_areas`).
    """
    codes, first = same_areas(areas)
    arr = np.empty(len(first), dtype=object)
    arr[:] = [areas[i] for i in first.tolist()]
    shapely.prepare(arr)
    out: list[TimeOfConcentration | None] = [None] * len(arr)
    if len(arr) == 0:
        return out
    _, _, n_rows, n_cols = _windows(arr, dem)
    cells = np.cumsum(n_rows * n_cols)
    start = 0
    while start < len(arr):
        stop = max(int(np.searchsorted(cells, cells[start] + CELLS_AT_ONCE)), start + 1)
        stop = min(stop, len(arr))
        xs, ys, values, hi, lo = _extremes(arr[start:stop], dem)
        for j in np.flatnonzero(hi >= 0).tolist():
            ends = (int(hi[j]), int(lo[j]))
            out[start + j] = flow_path_tc((xs, ys, values), ends, params, p2_in)
        start = stop
    return [out[k] for k in codes.tolist()]
