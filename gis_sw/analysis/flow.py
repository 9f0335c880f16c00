"""Where runoff goes: steepest-descent (D8) flow paths over the DEM, vectorised.

Condition A of § 183-7B(2)(a) asks whether runoff from the site *discharges to* an impaired
water, so for a mapped impaired water body (not a watershed) SW103 follows the surface flow
path from every DEM cell the disturbance touches and asks where it ends.

The reading, cell by cell (one step per iteration, every path at once, numpy only):

- each step goes to the one of the eight neighbours with the steepest strictly positive drop
  per foot of distance (diagonals are ``hypot(dx, dy)`` away); ties go to the first neighbour
  in the fixed order N, NE, E, SE, S, SW, W, NW, so a run is reproducible;
- a path **reaches the water** when it enters a cell the water touches (``all_touched``, so
  a brook narrower than a cell is not stepped over); the start cell itself does not count (a
  real overlap is the vector test's business, and a cell shared by site and water within one
  cell's width is judged by where that cell drains);
- a path **leaves the DEM** when its steepest drop is across the DEM's edge: outside the
  edge the ground is extended by odd reflection (``2 z_edge - z_inner``), so a path leaves
  only where the ground still falls towards the edge;
- a path ends in a **pit** when every neighbour is higher (a closed depression: it may
  pond, or drain through a culvert or storm sewer the DEM does not show), in a **flat** when
  no neighbour is lower and at least one is level, and at **nodata** when its cell has no
  elevation.  SW103 answers ``review`` for all three: a DEM cannot show where such water goes.
- water cells without an elevation (lidar DEMs often blank water) count as lower than any
  ground, so runoff beside them runs in.

Paths strictly descend, so they cannot cycle.  Each iteration steps every path still running,
with a few numpy operations; a path that enters a dry cell another path has already entered
stops there and takes that path's end, so the work is about one step per distinct cell
crossed (a test checks the merged answer against a cell-by-cell trace).  Measured here
(2 cores, shared): a 5-acre site on a 3,000 x 3,000 DEM of 3.28-ft cells (20,449 start cells,
paths of up to 447 steps to a brook 1,000 ft away) traces in 0.07 s, against 4.1 s without
merging; preparing that grid (padding, rasterising the water) takes 0.2-1.1 s.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np
import shapely
from affine import Affine
from rasterio import features

from gis_sw.layers.raster import RasterLayer, cell_window


class FlowEnd(IntEnum):
    """Where a flow path ends."""

    RUNNING = 0
    WATER = 1
    EDGE = 2
    PIT = 3
    FLAT = 4
    NODATA = 5
    CUT = 6
    """Reached the edge of a DEM read in a window where a whole read goes on (its
    :attr:`~gis_sw.layers.raster.RasterLayer.full_bounds`): where it goes from there is not
    known from this grid."""


# (d_row, d_col): N, NE, E, SE, S, SW, W, NW
_OFFSETS = np.array(
    [(-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1)], dtype="int64"
)


@dataclass(frozen=True, slots=True)
class FlowResult:
    """Ends of the flow paths from a set of start cells (raster row, column).

    Attributes
    ----------
    end
        :class:`FlowEnd` code of each path.
    end_row, end_col
        Last cell inside the DEM (the water cell reached, the edge cell left from, the pit).
    steps
        Number of steps taken.
    """

    end: np.ndarray
    end_row: np.ndarray
    end_col: np.ndarray
    steps: np.ndarray


class FlowGrid:
    """A DEM prepared for D8 tracing towards a set of water polygons.

    Parameters
    ----------
    dem
        Ground elevation raster (north-up, no rotation), ft.
    water
        Polygons (or lines) of the water the paths are traced to.
    """

    def __init__(self, dem: RasterLayer, water: list[Any]) -> None:
        values = np.asarray(dem.values, dtype="float64")
        self.dem = dem
        self.shape = values.shape
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None
        self._scratch_lock = threading.Lock()
        self.transform: Affine = dem.transform
        target = np.zeros(self.shape, dtype=bool)
        shapes = [g for g in water if g is not None and not shapely.is_empty(g)]
        if shapes and dem.full_bounds is not None:  # a window: only the water around it
            shapes = _clipped(shapes, dem)
        if shapes:
            target = features.rasterize(
                [(g, 1) for g in shapes],
                out_shape=self.shape,
                transform=self.transform,
                all_touched=True,
                fill=0,
                dtype="uint8",
            ).astype(bool)
        values = values.copy()
        values[target & np.isnan(values)] = -np.inf
        with np.errstate(invalid="ignore"):
            padded = (
                np.pad(values, 1, mode="reflect", reflect_type="odd")
                if min(self.shape) >= 2
                else np.pad(values, 1, mode="edge")  # one row or column: level beyond it
            )
        self._z = padded
        self._water = np.pad(target, 1, constant_values=False)
        cell_x, cell_y = dem.cell_size
        self._dist = np.hypot(_OFFSETS[:, 1] * cell_x, _OFFSETS[:, 0] * cell_y)
        self.target = target
        self._cut = _cut_cells(dem, self.shape)

    def __getstate__(self) -> dict[str, Any]:
        """Return the grid without its lock and scratch arrays (for pickling)."""
        state = dict(self.__dict__)
        state["_scratch"], state["_scratch_lock"] = None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a pickled grid with a new lock."""
        self.__dict__.update(state)
        self._scratch_lock = threading.Lock()

    # -- cells ---------------------------------------------------------------------------

    def cells_of(self, geometry: Any) -> tuple[np.ndarray, np.ndarray]:
        """Raster (row, col) of every cell a geometry touches (all-touched), inside the DEM."""
        empty = (np.empty(0, dtype="int64"), np.empty(0, dtype="int64"))
        if geometry is None or shapely.is_empty(geometry):
            return empty
        found = cell_window(self.transform, self.shape, geometry)
        if found is None:
            return empty
        row_lo, row_hi, col_lo, col_hi = found
        window = self.transform @ Affine.translation(col_lo, row_lo)
        mask = features.geometry_mask(
            [geometry],
            out_shape=(row_hi - row_lo, col_hi - col_lo),
            transform=window,
            all_touched=True,
            invert=True,
        )
        rows, cols = np.nonzero(mask)
        return rows.astype("int64") + row_lo, cols.astype("int64") + col_lo

    def centres(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Cell centres as an (n, 2) array of working-CRS coordinates."""
        t = self.transform
        c = np.asarray(cols, dtype="float64") + 0.5
        r = np.asarray(rows, dtype="float64") + 0.5
        return np.column_stack([t.a * c + t.b * r + t.c, t.d * c + t.e * r + t.f])

    # -- tracing ------------------------------------------------------------------------

    def _step(self, r: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One D8 step from padded cells: (next row, next col, end code where stopped)."""
        z = self._z[r, c]
        nr = r[:, None] + _OFFSETS[None, :, 0]
        nc = c[:, None] + _OFFSETS[None, :, 1]
        with np.errstate(invalid="ignore"):
            drop = (z[:, None] - self._z[nr, nc]) / self._dist[None, :]
        drop = np.where(np.isnan(drop), -np.inf, drop)
        best = np.argmax(drop, axis=1)
        rows = np.arange(len(r))
        steepest = drop[rows, best]
        end = np.full(len(r), FlowEnd.RUNNING, dtype="int8")
        level = np.any(drop == 0.0, axis=1)
        stopped = ~(steepest > 0.0)
        end[stopped & level] = FlowEnd.FLAT
        end[stopped & ~level] = FlowEnd.PIT
        end[np.isnan(z)] = FlowEnd.NODATA
        return nr[rows, best], nc[rows, best], end

    def trace(self, rows: np.ndarray, cols: np.ndarray) -> FlowResult:
        """Follow the D8 path from every start cell (raster row, col) to its end.

        Paths that meet follow one route from there on, so a path entering a dry cell another
        path has already entered stops and later takes that path's end (its steps are its own
        to the meeting cell plus the other's from there).  The work is then about one step
        per distinct cell crossed, however many paths share the route.
        """
        # the grid's claim arrays are reused (a whole-grid allocation costs more than a small
        # site's trace); a second trace at the same time in another thread makes its own
        scratch = self._scratch_lock.acquire(blocking=False)
        claim, claim_step = self._claims() if scratch else self._new_claims()
        claimed: list[np.ndarray] = []  # the cells claimed, cleared after (even on an error)
        try:
            return self._trace(rows, cols, claim, claim_step, claimed)
        finally:
            if scratch:
                self._clear(claim, claim_step, claimed)

    def _clear(self, claim: np.ndarray, claim_step: np.ndarray, claimed: list[np.ndarray]) -> None:
        """Clear the cells a trace claimed in the scratch arrays, and free them.

        Every index numpy may have written is cleared (a trace stopped by an error may have
        written some); should the clearing itself fail, the arrays are dropped.
        """
        try:
            if claimed:
                touched = np.concatenate(claimed)
                touched = touched[(touched >= -claim.size) & (touched < claim.size)]
                claim[touched], claim_step[touched] = -1, 0
        except BaseException:
            self._scratch = None
            raise
        finally:
            self._scratch_lock.release()

    def _new_claims(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (path that first entered each padded cell, at which step): none yet."""
        return np.full(self._z.size, -1, dtype="int64"), np.zeros(self._z.size, dtype="int64")

    def _claims(self) -> tuple[np.ndarray, np.ndarray]:
        if self._scratch is None:
            self._scratch = self._new_claims()
        return self._scratch

    def _trace(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        claim: np.ndarray,
        claim_step: np.ndarray,
        claimed: list[np.ndarray],
    ) -> FlowResult:
        """:meth:`trace` with the claim arrays given; each cell it claims is put in ``claimed``."""
        n = len(rows)
        r = np.asarray(rows, dtype="int64") + 1
        c = np.asarray(cols, dtype="int64") + 1
        end = np.full(n, FlowEnd.RUNNING, dtype="int8")
        steps = np.zeros(n, dtype="int64")
        nrows, ncols = self.shape
        width = ncols + 2
        join = np.full(n, -1, dtype="int64")  # path whose route a path joined
        join_at = np.zeros(n, dtype="int64")  # that path's step count at the meeting cell
        flat = r * width + c
        cells, first = np.unique(flat, return_index=True)
        claimed.append(cells)
        claim[cells] = first
        same = np.ones(n, dtype=bool)
        same[first] = False
        join[same] = claim[flat[same]]  # the same start cell twice: one path
        active = first
        if self._cut is not None:  # starting on the edge of a window: cut at once
            at_cut = self._cut.ravel()[flat[active]]
            end[active[at_cut]] = FlowEnd.CUT
            active = active[~at_cut]
        iteration = 0
        while len(active):
            iteration += 1
            nr, nc, stop = self._step(r[active], c[active])
            halted = stop != FlowEnd.RUNNING
            end[active[halted]] = stop[halted]
            moving = active[~halted]
            nr, nc = nr[~halted], nc[~halted]
            outside = (nr == 0) | (nr == nrows + 1) | (nc == 0) | (nc == ncols + 1)
            end[moving[outside]] = FlowEnd.EDGE
            inside = ~outside
            moving, nr, nc = moving[inside], nr[inside], nc[inside]
            r[moving], c[moving] = nr, nc
            steps[moving] = iteration
            wet = self._water[nr, nc]
            end[moving[wet]] = FlowEnd.WATER
            moving, flat = moving[~wet], (nr * width + nc)[~wet]
            if self._cut is not None:
                at_cut = self._cut.ravel()[flat]
                end[moving[at_cut]] = FlowEnd.CUT
                moving, flat = moving[~at_cut], flat[~at_cut]
            owner = claim[flat]
            taken = owner >= 0
            join[moving[taken]] = owner[taken]
            join_at[moving[taken]] = claim_step[flat[taken]]
            moving, flat = moving[~taken], flat[~taken]
            cells, first = np.unique(flat, return_index=True)
            claimed.append(cells)
            claim[cells] = moving[first]
            claim_step[cells] = iteration
            met = np.ones(len(moving), dtype=bool)
            met[first] = False
            join[moving[met]] = claim[flat[met]]
            join_at[moving[met]] = iteration
            active = moving[first]
        self._resolve(join, join_at, end, steps, r, c)
        return FlowResult(end=end, end_row=r - 1, end_col=c - 1, steps=steps)

    @staticmethod
    def _resolve(  # noqa: PLR0917
        join: np.ndarray,
        join_at: np.ndarray,
        end: np.ndarray,
        steps: np.ndarray,
        r: np.ndarray,
        c: np.ndarray,
    ) -> None:
        """Give every path that joined another that path's end (in place)."""
        done = join < 0
        for _ in range(len(join) + 1):  # routes descend, so joins form no cycle
            if done.all():
                return
            pending = np.flatnonzero(~done)
            ready = pending[done[join[pending]]]
            target = join[ready]
            steps[ready] = steps[ready] + steps[target] - join_at[ready]
            end[ready], r[ready], c[ready] = end[target], r[target], c[target]
            done[ready] = True
        raise AssertionError("flow paths joined in a cycle")  # unreachable: paths descend

    def path(self, row: int, col: int) -> shapely.LineString:
        """Return the flow path from one cell as a line through cell centres (to its end)."""
        r, c = np.array([row + 1]), np.array([col + 1])
        cells = [(row, col)]
        nrows, ncols = self.shape
        for _ in range(nrows * ncols + 1):
            nr, nc, stop = self._step(r, c)
            if stop[0] != FlowEnd.RUNNING:
                break
            if nr[0] in (0, nrows + 1) or nc[0] in (0, ncols + 1):
                cells.append((int(nr[0]) - 1, int(nc[0]) - 1))  # the first cell outside
                break
            r, c = nr, nc
            cells.append((int(r[0]) - 1, int(c[0]) - 1))
            if self._water[r[0], c[0]]:
                break
        pts = self.centres(np.array([p[0] for p in cells]), np.array([p[1] for p in cells]))
        if len(pts) == 1:
            pts = np.vstack([pts, pts])
        return shapely.LineString(pts)


def _cut_cells(dem: RasterLayer, shape: tuple[int, ...]) -> np.ndarray | None:
    """Return the padded mask of the edge cells of a window beyond which a whole read goes on.

    A path's step from such a cell would weigh the reflected ground beyond the window, not
    the cells a whole read has there, so a path stops on entering one (:attr:`FlowEnd.CUT`);
    every other cell has its eight true neighbours, so every path that never enters one is
    the path of the whole read.  None when the grid is the whole read's.
    """
    if dem.full_bounds is None or not min(shape):
        return None
    minx, miny, maxx, maxy = dem.bounds
    fminx, fminy, fmaxx, fmaxy = dem.full_bounds
    half_x, half_y = (size / 2 for size in dem.cell_size)
    cut = np.zeros((shape[0] + 2, shape[1] + 2), dtype=bool)
    north_up = dem.transform.e < 0
    top, bottom = (fmaxy > maxy + half_y, fminy < miny - half_y)
    if not north_up:
        top, bottom = bottom, top
    cut[1, 1:-1] |= top
    cut[-2, 1:-1] |= bottom
    cut[1:-1, 1] |= fminx < minx - half_x
    cut[1:-1, -2] |= fmaxx > maxx + half_x
    return cut if cut.any() else None


def _clipped(shapes: list[Any], dem: RasterLayer) -> list[Any]:
    """Return the parts of ``shapes`` within two cells of the grid (what its cells can touch)."""
    dx, dy = dem.cell_size
    minx, miny, maxx, maxy = dem.bounds
    box = (minx - 2 * dx, miny - 2 * dy, maxx + 2 * dx, maxy + 2 * dy)
    clipped = shapely.clip_by_rect(np.asarray(shapes, dtype=object), *box)
    return [g for g in clipped if not shapely.is_empty(g)]
