"""One rectangle per geometry: the vectorised clip and its public-API fallback agree."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from gis_sw.analysis import rect_clip
from gis_sw.analysis.rect_clip import clip_by_boxes


def _shapes() -> tuple[np.ndarray, np.ndarray]:
    lot = shapely.box(0.0, 0.0, 100.0, 60.0)
    well = shapely.Point(95.0, 30.0).buffer(50.0, quad_segs=32)
    ell = shapely.Polygon([(0, 0), (40, 0), (40, 10), (10, 10), (10, 40), (0, 40)])
    geoms = np.array([lot, well, ell], dtype=object)
    bounds = np.array([[20.0, 10.0, 50.0, 70.0], [0.0, 0.0, 100.0, 60.0], [5.0, 5.0, 40.0, 40.0]])
    return geoms, bounds


@pytest.mark.parametrize("ufunc", [True, False], ids=["shapely-ufunc", "intersection"])
def test_each_geometry_is_cut_to_its_own_rectangle(
    ufunc: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not ufunc:
        monkeypatch.setattr(rect_clip, "_CLIP_UFUNC", None)
    geoms, bounds = _shapes()
    cut = clip_by_boxes(geoms, bounds)
    # the lot: 30 ft wide (20 to 50) by 50 ft (10 to 60) of it lies in its rectangle
    assert shapely.area(cut[0]) == pytest.approx(1500.0, abs=1e-9)
    # the L: its 5-ft-wide foot (5..40 x 5..10, less nothing) and its leg (5..10 x 10..40)
    assert shapely.area(cut[2]) == pytest.approx(35.0 * 5.0 + 5.0 * 30.0, abs=1e-9)
    # the circle, cut to the lot: the same as the true intersection, to rounding
    inside = shapely.intersection(geoms[1], shapely.box(*bounds[1]))
    assert shapely.area(cut[1]) == pytest.approx(shapely.area(inside), abs=1e-6)
    assert shapely.bounds(cut[1]).tolist() == pytest.approx([45.0, 0.0, 100.0, 60.0], abs=0.01)


def test_no_geometries_give_no_geometries() -> None:
    out = clip_by_boxes(np.empty(0, dtype=object), np.empty((0, 4)))
    assert out.shape == (0,)
