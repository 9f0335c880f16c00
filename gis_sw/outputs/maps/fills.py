"""Many polygons as a few compound paths, one per fill colour (the big overview's raster).

A path per polygon costs a Python object each (about 20 µs): at a million parcels that is
the overview's whole time.  Here every vertex comes out of shapely in one call
(:func:`gis_sw.outputs.maps.draw.polygon_vertices`) and each fill colour gets compound
paths of up to :data:`PATH_PARTS` polygons, built with numpy.  Drawn as one
:class:`~matplotlib.collections.PathCollection`, all fills then all outlines: an outline
two polygons share is not half covered by the later one's fill, as it is when each
polygon is its own path, so it draws a little darker; the fills are the same.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PathCollection
from matplotlib.colors import to_rgba
from matplotlib.path import Path

from gis_sw.outputs.maps.draw import polygon_vertices
from gis_sw.outputs.maps.style import LayerStyle

PATH_PARTS = 10_000
"""Polygons in one compound path (Agg's cell limit stays far off)."""


def fill_paths(geoms: np.ndarray, fills: np.ndarray) -> tuple[list[Path], list[str]]:
    """One compound path per fill and run of :data:`PATH_PARTS` polygons, and its fill.

    ``fills`` gives each geometry's colour; a multi-part geometry's parts all take it.
    """
    coords, codes, part, index = polygon_vertices(geoms)
    paths: list[Path] = []
    faces: list[str] = []
    if len(coords) == 0:
        return paths, faces
    part_fill = np.asarray(fills, dtype=object)[index]
    for fill in sorted(set(part_fill.tolist())):
        mine = np.flatnonzero(part_fill == fill)
        for start in range(0, len(mine), PATH_PARTS):
            chosen = np.zeros(len(part_fill), dtype=bool)
            chosen[mine[start : start + PATH_PARTS]] = True
            take = chosen[part]
            paths.append(Path(coords[take], codes[take], readonly=True))
            faces.append(fill)
    return paths, faces


def add_fills(
    ax: Axes, geoms: np.ndarray, fills: np.ndarray | None, style: LayerStyle
) -> PathCollection | None:
    """Draw polygons on ``ax`` as one collection of compound paths (None if none drawn).

    ``fills`` gives each geometry's colour (None: no fill); outlines, hatch and drawing
    order come from ``style``.
    """
    same = np.full(len(geoms), "none", dtype=object)
    paths, faces = fill_paths(geoms, same if fills is None else fills)
    if not paths:
        return None
    face: list[tuple[float, float, float, float]] | str = (
        "none" if fills is None else [to_rgba(f) for f in faces]
    )
    collection = PathCollection(
        paths,
        facecolors=face,
        edgecolors=style.edgecolor,
        linewidths=style.linewidth,
        hatch=style.hatch or None,
        zorder=style.zorder,
    )
    ax.add_collection(collection, autolim=False)
    return collection
