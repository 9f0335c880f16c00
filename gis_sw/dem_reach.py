"""The DEM of a check read around the proposals, and as far as their runoff runs.

A town's DEM is read whole by a whole read (the town's extent grown by the reach), because
a runoff path traced on it (SW103 Condition A, :mod:`gis_sw.analysis.flow`) goes where the
ground falls, however far.  ``gis-sw check`` of one addition on a 100,000-parcel town read
it so: 2,360 x 2,573 cells read and prepared for 4 cells of disturbance (1.5 s of a 2 s
check).  :func:`gis_sw.around.read_around` reads it over the proposals' windows instead
(:func:`gis_sw.layers.read.inspect_layers`, with the whole read's grid as the layer's
:attr:`~gis_sw.layers.raster.RasterLayer.full_bounds`), and :func:`read_dem_reach` then
reads more of it wherever a path from the proposals runs beyond that window, until none
does.

Why the findings are those of the whole read:

- the window's cells are the whole read's cells (one grid, a window of whole cells);
- on the window's edges where the whole read goes on, a path stops on entering an edge
  cell (:attr:`~gis_sw.analysis.flow.FlowEnd.CUT`): every other cell has its eight true
  neighbours, so every step taken is the whole read's step, and a path that is not cut is
  the whole read's path, with its end;
- the paths traced here follow the ground alone, with no water: with the impaired waters a
  path is the same path ended where it first enters a water cell (water only ever ends a
  path; a water cell with no elevation, lower than any ground, is a neighbour of a cell on
  the path, so inside the window).  So when no path from the proposals' cells is cut here,
  none is in the check;
- the window grows by its own size on each side where a path is cut, until no path is cut
  or it is the whole read's grid.

A town read around some proposals and then asked to screen others may find their paths cut
at the window's edge: Condition A then answers ``review`` (the path "leaves the part of the
DEM that was read"), never ``pass`` (``tests/test_cold_dem_reach.py``).
"""

from __future__ import annotations

import logging

import numpy as np

from gis_sw.analysis.flow import FlowEnd, FlowGrid
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.read import LayerInspection, read_raster_entry
from gis_sw.layers.window import Bounds
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

__all__ = ["DEM_KIND", "cut_ends", "read_dem_reach"]

DEM_KIND = "dem"
MAX_READS = 64
"""Reads of the DEM at most (each one at least doubles the window towards a cut)."""


def cut_ends(dem: RasterLayer, geoms: np.ndarray) -> np.ndarray:
    """Return the (x, y) of every cell where a path from ``geoms``' cells is cut (n, 2).

    The paths follow the ground alone (no water), from every cell each geometry touches.
    """
    grid = FlowGrid(dem, [])
    cells = [grid.cells_of(g) for g in geoms]
    if not cells:
        return np.empty((0, 2))
    rows = np.concatenate([c[0] for c in cells])
    cols = np.concatenate([c[1] for c in cells])
    result = grid.trace(rows, cols)
    cut = result.end == FlowEnd.CUT
    return grid.centres(result.end_row[cut], result.end_col[cut])


def _grown_area(dem: RasterLayer, ends: np.ndarray) -> Bounds:
    """Return the window's box grown by its own size on each side where a path is cut.

    A cut end is an edge cell of the window: within a cell of the side it is cut on.
    """
    minx, miny, maxx, maxy = dem.bounds
    dx, dy = dem.cell_size
    by = max(maxx - minx, maxy - miny)
    x, y = ends[:, 0], ends[:, 1]
    return (
        minx - by * bool((x < minx + dx).any()),
        miny - by * bool((y < miny + dy).any()),
        maxx + by * bool((x > maxx - dx).any()),
        maxy + by * bool((y > maxy - dy).any()),
    )


def read_dem_reach(inspection: LayerInspection, geoms: np.ndarray, *, ruleset: Ruleset) -> None:
    """Read more of a DEM read in a window wherever a path from ``geoms`` runs beyond it.

    In place: the inspection's DEM and its report (module docstring).  Nothing happens
    when the DEM was read whole (:attr:`LayerInspection.full_areas` has no ``dem``).

    Raises
    ------
    GisSwError
        As :func:`gis_sw.layers.read.read_raster_entry` (the DEM read once already).
    """
    full = inspection.full_areas.get(DEM_KIND)
    dem = inspection.rasters.get(DEM_KIND)
    if full is None or dem is None:
        return
    entry = inspection.manifest.entries[DEM_KIND]
    for _ in range(MAX_READS):
        if dem.full_bounds is None:
            break
        ends = cut_ends(dem, geoms)
        if not len(ends):
            break
        area = _grown_area(dem, ends)
        dem, report = read_raster_entry(
            entry, working_crs=ruleset.working_crs, area=area, full_area=full
        )
        log.info("dem: read again for %d cut flow path(s): %s", len(ends), dem.shape)
        inspection.rasters[DEM_KIND] = dem
        inspection.reports[DEM_KIND] = report
