"""The neighbourhood of some proposals, and reading a town only there.

:meth:`gis_sw.Town.local` cuts out of a town the features that can matter to some
geometries (its docstring says which and why); :func:`read_around` reads from the layers'
sources only what that cut can take, so ``gis-sw check`` of one addition on a
100,000-parcel town reads a few dozen parcels, not the town:

1. the parcels (and drainage areas) whose envelope meets the proposals' envelope grown by
   the reach (:func:`near_box`): they grow the neighbourhood to its *region*
   (:func:`region`); drainage areas are read whole (a proposal's own ones count wherever
   they lie, and there are few);
2. every vector layer within the region, by window where its source can filter
   (:mod:`gis_sw.layers.window_read`), but :data:`WHOLE_KINDS` whole; rasters over the
   extent of what was read, the DEM too but as far as the runoff from the proposals runs
   on the whole town's grid (:mod:`gis_sw.dem_reach`);
3. for every layer read by window, the nearest feature of every proposal geometry at any
   distance (SW208): when the window holds a feature at distance ``d`` of a geometry, every
   feature as near lies in the geometry's envelope grown by ``d``; where that box leaves
   the window, the layer is read again within a window that holds it, and a layer with no
   feature in its window is read whole.

So the features read are a superset of what :meth:`~gis_sw.Town.local` takes from the whole
town, in the same order and with the same names, and the findings are the same
(``tests/test_window_reads.py``).  The :class:`~gis_sw.Town` keeps the windows
(:attr:`~gis_sw.Town.windows`) and refuses, with a clear error, to screen something whose
neighbourhood leaves them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import shapely

from gis_sw.dem_reach import read_dem_reach
from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.read import LayerInspection, inspect_layers, layerset_of, read_vector_window
from gis_sw.layers.window import Bounds
from gis_sw.layers.window_read import whole_extent
from gis_sw.nearest import far_box, nearest_box, split_nearest
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

__all__ = [
    "GROWING_KINDS",
    "WHOLE_KINDS",
    "contains",
    "live",
    "near_box",
    "nearest_outside",
    "outside_error",
    "prefetch",
    "read_around",
    "region",
]

WHOLE_KINDS = ("drainage_areas", "impaired_waters")
"""Layers taken whole: a proposal's own drainage areas count wherever they lie, and a
runoff path traced on the DEM (Condition A) may reach any impaired water, however far.
Both are small layers."""
GROWING_KINDS = ("parcels", "drainage_areas")
"""Layers whose features near the proposals grow the neighbourhood (the lots and drainage
areas the runoff calculations take whole)."""


def live(geoms: Iterable[Any]) -> np.ndarray:
    """Return the geometries that are neither missing nor empty, as an object array."""
    arr = np.asarray(list(geoms), dtype=object)
    if len(arr):
        arr = arr[~unlocated(arr)]
    return arr


def _grown(box: Bounds | np.ndarray, by: float) -> Bounds:
    minx, miny, maxx, maxy = (float(v) for v in box)
    return (minx - by, miny - by, maxx + by, maxy + by)


def near_box(arr: np.ndarray, reach_ft: float) -> Bounds:
    """Return the envelope of ``arr`` grown by ``reach_ft``."""
    return _grown(shapely.total_bounds(arr), reach_ft)


def contains(outer: Bounds, inner: Bounds) -> bool:
    """Whether box ``outer`` holds box ``inner``."""
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and outer[2] >= inner[2]
        and outer[3] >= inner[3]
    )


def region(
    arr: np.ndarray,
    reach_ft: float,
    *,
    trees: Mapping[str, shapely.STRtree],
    geoms: Mapping[str, np.ndarray],
    drainage_areas: gpd.GeoDataFrame | None,
    proposal_ids: Sequence[str] = (),
) -> tuple[Bounds, np.ndarray | None]:
    """Return the box of every feature that can matter to ``arr``, and its drainage areas.

    Parameters
    ----------
    arr
        Live geometries (:func:`live`), working CRS.
    reach_ft
        The largest distance a rule looks, with a margin.
    trees, geoms
        By kind, an STRtree of a layer and its geometries (only :data:`GROWING_KINDS`
        are used).
    drainage_areas
        The drainage areas layer (its ``proposal_id`` column), or None.
    proposal_ids
        Proposals whose drainage areas count wherever they lie.

    Returns
    -------
    (box, rows)
        The envelope of ``arr``, of every parcel and drainage area whose envelope meets
        :func:`near_box`, and of the proposals' own drainage areas, grown by the reach;
        and the rows of those own drainage areas (None when there are none).
    """
    near = shapely.box(*near_box(arr, reach_ft))
    boxes = [np.asarray(shapely.total_bounds(arr))]
    for kind in GROWING_KINDS:
        if kind in trees:
            hit = trees[kind].query(near)
            if len(hit):
                boxes.append(shapely.total_bounds(geoms[kind][hit]))
    own = None
    if proposal_ids and drainage_areas is not None and "proposal_id" in drainage_areas.columns:
        rows = np.flatnonzero(
            drainage_areas["proposal_id"].astype("object").isin(list(proposal_ids))
        )
        if len(rows):
            own = rows
            boxes.append(shapely.total_bounds(geoms["drainage_areas"][rows]))
    every = np.array(boxes)
    whole = (every[:, 0].min(), every[:, 1].min(), every[:, 2].max(), every[:, 3].max())
    return _grown(np.asarray(whole), reach_ft), own


def nearest_outside(
    window: Bounds, arr: np.ndarray, layer: np.ndarray, tree: shapely.STRtree
) -> bool:
    """Return whether a feature as near to ``arr`` as the nearest may lie beyond ``window``."""
    need = nearest_box(arr, layer, tree)
    return need is None or not contains(window, need)


def outside_error(kinds: Sequence[str]) -> LayerError:
    """Return the error of a town read around other proposals than those screened."""
    return LayerError(
        Problem(
            ", ".join(sorted(kinds)),
            "this town was read only around other proposals (read_town(..., around=...)), "
            "and these geometries need features outside what was read.",
            "read the town again around these proposals, or whole (around=None).",
        )
    )


def _union(a: Bounds, b: Bounds) -> Bounds:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _fill_nearest(
    inspection: LayerInspection,
    arr: np.ndarray,
    *,
    ruleset: Ruleset,
    strict: bool,
    reach_ft: float,
) -> None:
    """Read again the layers whose nearest features may lie outside their window.

    Each is read in a window that holds them (step 3 of the module docstring); a layer
    with no feature in its window is read whole.  Every window holds the envelope of
    ``arr`` grown by ``reach_ft``, so only the geometries with no feature within the reach
    (:func:`near_mask`) are searched.
    """
    for kind, window in list(inspection.windows.items()):
        layer = np.asarray(inspection.vectors[kind].geometry.to_numpy(), dtype=object)
        if len(layer):
            tree = shapely.STRtree(layer)
            far, found = split_nearest(arr, tree, reach_ft)
            need = far_box(far, found, layer, tree) if len(far) else window
        else:
            need = None
        if need is not None and contains(window, need):
            continue
        wider = None if need is None else _union(window, need)
        entry = inspection.manifest.entries[kind]
        frame, report, windowed = read_vector_window(
            entry, working_crs=ruleset.working_crs, strict=strict, window=wider
        )
        log.info("%s: read again for the nearest feature (%d features)", kind, len(frame))
        inspection.vectors[kind] = frame
        inspection.reports[kind] = report
        if windowed and wider is not None:
            inspection.windows[kind] = wider
        else:
            del inspection.windows[kind]


def _lots_under(devices: np.ndarray, parcels: gpd.GeoDataFrame | None) -> np.ndarray:
    """Return the parcels the devices lie on (``Town.screen`` sites devices on them)."""
    if parcels is None or not len(parcels) or not len(devices):
        return np.empty(0, dtype=object)
    geoms = np.asarray(parcels.geometry.to_numpy(), dtype=object)
    _, hit = shapely.STRtree(geoms).query(devices, predicate="intersects")
    return geoms[np.unique(hit)]


def _first_read(
    source: str | Path, ruleset: Ruleset, strict: bool, box: Bounds
) -> tuple[dict[str, shapely.STRtree], dict[str, np.ndarray], LayerInspection]:
    """Read the parcels whose envelope meets ``box`` and every drainage area, indexed."""
    first = inspect_layers(
        source, ruleset=ruleset, strict=strict, kinds=GROWING_KINDS, windows={"parcels": box}
    )
    trees: dict[str, shapely.STRtree] = {}
    geoms: dict[str, np.ndarray] = {}
    for kind, frame in first.vectors.items():
        geoms[kind] = np.asarray(frame.geometry.to_numpy(), dtype=object)
        trees[kind] = shapely.STRtree(geoms[kind])
    return trees, geoms, first


def prefetch(source: str | Path) -> None:
    """Start checking the whole ids of the source's windowed layers in a thread.

    :func:`gis_sw.layers.clean.prefetch_whole_ids`: the checks :func:`read_around` makes
    run while it (or what comes before it, reading the proposals) reads; a source that
    cannot be resolved is left for the reading to name.
    """
    from gis_sw.layers.clean import prefetch_whole_ids
    from gis_sw.layers.manifest import resolve_source

    try:
        prefetch_whole_ids(resolve_source(source).entries.values())
    except GisSwError:
        return


def read_around(
    source: str | Path,
    *,
    ruleset: Ruleset,
    strict: bool,
    geoms: np.ndarray,
    devices: np.ndarray,
    proposal_ids: Sequence[str],
    reach_ft: float,
) -> tuple[LayerSet, dict[str, Bounds]]:
    """Read a town's layers only where :meth:`gis_sw.Town.local` can take features.

    That is, for ``geoms`` and for the lots under ``devices`` (module docstring).

    Returns
    -------
    (layers, windows)
        The layers, and the box each layer read by window was read in (layers read whole
        are absent).

    Raises
    ------
    GisSwError
        As :func:`gis_sw.layers.read.read_layers`.
    """
    arr = live(geoms)
    if not len(arr):
        return layerset_of(inspect_layers(source, ruleset=ruleset, strict=strict)), {}
    prefetch(source)
    near = near_box(arr, reach_ft)
    trees, layer_geoms, first = _first_read(source, ruleset, strict, near)
    lots = _lots_under(live(devices), first.vectors.get("parcels"))
    if len(lots):  # Town.screen sites devices on their lots: their neighbourhood too
        near = _union(near, near_box(lots, reach_ft))
        trees, layer_geoms, first = _first_read(source, ruleset, strict, near)
    box, _ = region(
        arr,
        reach_ft,
        trees=trees,
        geoms=layer_geoms,
        drainage_areas=first.vectors.get("drainage_areas"),
        proposal_ids=proposal_ids,
    )
    if len(lots):
        lot_box, _ = region(lots, reach_ft, trees=trees, geoms=layer_geoms, drainage_areas=None)
        box = _union(box, lot_box)
        arr = np.concatenate([arr, lots])
    windows = {
        kind: box
        for kind, entry in first.manifest.entries.items()
        if not entry.is_raster and kind not in WHOLE_KINDS
    }
    extents = {
        kind: extent
        for kind in windows
        if (extent := whole_extent(first.manifest.entries[kind], ruleset.working_crs)) is not None
    }
    inspection = inspect_layers(
        source, ruleset=ruleset, strict=strict, windows=windows, extents=extents
    )
    if inspection.ok:
        _fill_nearest(inspection, arr, ruleset=ruleset, strict=strict, reach_ft=reach_ft)
        read_dem_reach(inspection, arr, ruleset=ruleset)  # the DEM as far as runoff runs
    return layerset_of(inspection), dict(inspection.windows)
