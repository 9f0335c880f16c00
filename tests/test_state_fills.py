"""Compound fill paths: one per colour, holes and parts kept, every polygon once."""

from __future__ import annotations

import numpy as np
import shapely
from matplotlib.path import Path

from gis_sw.outputs.maps import fills


def test_one_path_per_fill_with_holes_and_parts() -> None:
    holed = shapely.Polygon(
        [(0, 0), (10, 0), (10, 10), (0, 10)], [[(2, 2), (2, 4), (4, 4), (4, 2)]]
    )
    two = shapely.MultiPolygon([shapely.box(20, 0, 21, 1), shapely.box(30, 0, 31, 1)])
    geoms = np.array([holed, shapely.box(50, 0, 60, 5), two, None, shapely.Polygon()])
    colours = np.array(["#111111", "#222222", "#111111", "#222222", "#111111"], dtype=object)
    paths, faces = fills.fill_paths(geoms, colours)
    assert faces == ["#111111", "#222222"]
    first, second = paths
    # the holed square (2 rings) and both parts of the multipolygon: 4 rings of 5 vertices
    assert (first.codes == Path.MOVETO).sum() == 4
    assert len(first.vertices) == 20
    assert (second.codes == Path.MOVETO).sum() == 1
    assert second.vertices[:, 0].min() == 50.0
    # the hole runs the other way round from its shell: the non-zero rule leaves it empty
    shell, hole = (shapely.LinearRing(first.vertices[i : i + 5]) for i in (0, 5))
    assert shapely.is_ccw(shell)
    assert not shapely.is_ccw(hole)
    assert shapely.area(shapely.Polygon(hole)) == 4.0


def test_long_runs_are_cut_into_paths_of_path_parts(monkeypatch) -> None:
    monkeypatch.setattr(fills, "PATH_PARTS", 3)
    geoms = shapely.box(np.arange(7.0) * 10, 0, np.arange(7.0) * 10 + 5, 5)
    paths, faces = fills.fill_paths(geoms, np.full(7, "#abcdef", dtype=object))
    assert faces == ["#abcdef"] * 3
    assert [int((p.codes == Path.MOVETO).sum()) for p in paths] == [3, 3, 1]
