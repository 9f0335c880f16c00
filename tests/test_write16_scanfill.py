"""Issue 16, write stage: parcels painted into a label image with numpy (no matplotlib path
per parcel), checked pixel by pixel against shapely's point-in-polygon."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from shapely import affinity

from gis_sw.outputs.maps import scanfill
from gis_sw.outputs.maps.scanfill import PixelGrid, compose, paint


def _grid(width: int = 10, height: int = 10, step: float = 1.0) -> PixelGrid:
    return PixelGrid(
        left=0.0, top=height * step, step_x=step, step_y=step, width=width, height=height
    )


def _painted(geoms: list, grid: PixelGrid) -> np.ndarray:
    labels = np.zeros((grid.height, grid.width), dtype=np.int32)
    paint(labels, grid, np.asarray(geoms, dtype=object), np.arange(1, len(geoms) + 1))
    return labels


def _centres(grid: PixelGrid) -> tuple[np.ndarray, np.ndarray]:
    cols, rows = np.meshgrid(np.arange(grid.width), np.arange(grid.height))
    x = grid.left + (cols + 0.5) * grid.step_x
    y = grid.top - (rows + 0.5) * grid.step_y
    return x, y


@pytest.mark.parametrize(
    ("x0", "x1", "columns"),
    [
        (0.5, 3.5, [0, 1, 2]),  # a centre on the left edge is in, on the right edge out
        (0.49, 3.51, [0, 1, 2, 3]),  # 0.01 outside both centres: both in
        (0.51, 3.49, [1, 2]),  # 0.01 inside: both out
    ],
)
def test_a_pixel_is_painted_when_its_centre_is_inside(
    x0: float, x1: float, columns: list[int]
) -> None:
    labels = _painted([shapely.box(x0, 0.2, x1, 0.8)], _grid())
    rows, cols = np.nonzero(labels)
    assert rows.tolist() == [9] * len(columns)  # y 0.5 is the bottom row's centre
    assert cols.tolist() == columns


def test_matches_shapely_point_in_polygon_on_every_pixel() -> None:
    grid = PixelGrid(left=3.3, top=157.7, step_x=1.07, step_y=0.93, width=180, height=160)
    l_shape = shapely.Polygon([(10, 10), (80, 12), (78, 40), (35, 42), (33, 95), (11, 93)])
    holed = shapely.Polygon(
        shapely.box(100, 20, 180, 90).exterior.coords,
        holes=[shapely.box(120, 40, 150, 70).exterior.coords],
    )
    rotated = affinity.rotate(shapely.box(40, 100, 120, 140), 27.0)
    triangle = shapely.Polygon([(140, 100), (190, 150), (125, 149)])  # runs off the right
    multi = shapely.MultiPolygon([shapely.box(-5, 120, 20, 150), shapely.box(22, 145, 30, 160)])
    geoms = [l_shape, holed, rotated, triangle, multi]
    labels = _painted(geoms, grid)
    x, y = _centres(grid)
    expected = np.zeros_like(labels)
    for value, geom in enumerate(geoms, start=1):
        expected[shapely.contains_xy(geom, x, y)] = value
    assert (expected > 0).sum() > 8_000
    assert np.array_equal(labels, expected)


def test_later_polygons_paint_over_earlier_ones() -> None:
    a, b = shapely.box(1, 1, 6, 6), shapely.box(4, 4, 9, 9)
    grid = _grid()
    first = _painted([a, b], grid)
    assert first[5, 4] == 2  # centre (4.5, 4.5), in both
    assert (first == 1).sum() == 25 - 4
    assert (first == 2).sum() == 25
    second = _painted([b, a], grid)
    assert second[5, 4] == 2
    assert (second == 2).sum() == 25


def test_holes_missing_and_empty_geometries_paint_nothing() -> None:
    ring = shapely.Polygon(
        shapely.box(0, 0, 10, 10).exterior.coords, holes=[shapely.box(3, 3, 7, 7).exterior.coords]
    )
    geoms = [ring, None, shapely.Polygon(), shapely.GeometryCollection([shapely.Point(1, 1)])]
    labels = _painted(geoms, _grid())
    assert (labels == 1).sum() == 100 - 16
    assert labels[5, 5] == 0
    assert set(np.unique(labels).tolist()) == {0, 1}


def test_small_batches_paint_the_same_image(monkeypatch: pytest.MonkeyPatch) -> None:
    xs, ys = np.meshgrid(np.arange(30) * 7.3, np.arange(20) * 6.1)
    boxes = list(shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + 7.3, ys.ravel() + 6.1))
    grid = _grid(width=230, height=130)
    whole = _painted(boxes, grid)
    monkeypatch.setattr(scanfill, "POLYGON_BATCH", 7)
    monkeypatch.setattr(scanfill, "CELL_BATCH", 50)
    assert np.array_equal(_painted(boxes, grid), whole)
    assert set(np.unique(whole).tolist()) == set(range(601))  # every box, and the rest 0


def test_compose_averages_blocks_and_draws_outlines() -> None:
    labels = np.ones((6, 6), dtype=np.int32)
    labels[:, 3:] = 2
    fills = np.array([[255, 255, 255, 255], [90, 0, 0, 255], [0, 180, 0, 255]], dtype=np.uint8)
    out = compose(labels, fills, scale=3, outline=(0, 0, 0, 255))
    assert out.shape == (2, 2, 4)
    # left blocks: 6 of 9 pixels fill 1, the column where 1 meets 2 the outline
    assert out[0, 0].tolist() == [60, 0, 0, 255]
    assert out[1, 1].tolist() == [0, 180, 0, 255]  # no label meets another inside
    half = compose(labels, fills, scale=3, outline=(0, 0, 0, 255), outline_alpha=0.5)
    assert half[0, 0].tolist() == [75, 0, 0, 255]  # (6 x 90 + 3 x 45) / 9


def test_hatch_lines_every_period_over_the_labels_asked() -> None:
    labels = np.ones((40, 200), dtype=np.int32)
    labels[:, 100:] = 2
    fills = np.full((3, 4), 255, dtype=np.uint8)
    hatch = np.array([False, True, False])
    out = compose(
        labels,
        fills,
        scale=1,
        outline=(255, 255, 255, 255),
        hatch=hatch,
        hatch_colour=(230, 97, 1, 255),
        hatch_period_px=12.5,
        hatch_width_px=1.77,
    )
    orange = out[:, :, 1] == 97
    assert not orange[:, 100:].any()  # label 2 carries no hatch
    starts = np.flatnonzero(orange[20, 1:99] & ~orange[20, :98]) + 1
    assert np.diff(starts).mean() == pytest.approx(12.5, abs=0.2)
    assert orange[:, :99].mean() == pytest.approx(1.77 / 12.5, abs=0.02)
