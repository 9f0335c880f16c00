"""Townwide overview map: 10,000 parcels coloured by screening result, drawn fast."""

from __future__ import annotations

import time

import geopandas as gpd
import numpy as np
import pytest
import shapely
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from PIL import Image

from gis_sw.errors import OutputError
from gis_sw.outputs.maps import write_overview
from gis_sw.outputs.maps.draw import add_polygons, polygon_paths
from gis_sw.outputs.maps.overview import result_counts
from gis_sw.outputs.maps.style import OUTCOME_COLOURS, LayerStyle


def _grid(n_side: int) -> gpd.GeoDataFrame:
    xs, ys = np.meshgrid(np.arange(n_side) * 100.0, np.arange(n_side) * 100.0)
    boxes = shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + 100, ys.ravel() + 100)
    results = np.array(["pass", "required", "review", "fail"])[np.arange(len(boxes)) % 4]
    # the first 2,500 parcels (south rows) all fail
    results[: len(boxes) // 4] = "fail"
    return gpd.GeoDataFrame({"result": results}, geometry=boxes, crs="EPSG:2260")


def test_ten_thousand_parcels_in_seconds(tmp_path, ruleset):
    parcels = _grid(100)
    start = time.perf_counter()
    path = write_overview(tmp_path / "overview.png", parcels, ruleset=ruleset, dpi=100)
    elapsed = time.perf_counter() - start
    assert elapsed < 30  # about 2 s alone; a shared 2-core machine is slower
    assert result_counts(parcels) == {"fail": 4375, "pass": 1875, "required": 1875, "review": 1875}
    image = np.asarray(Image.open(path).convert("RGB")).astype(int)
    red = np.array([round(c * 255) for c in to_rgb(OUTCOME_COLOURS["fail"])])
    close = (np.abs(image - red).sum(axis=2) < 30).mean()
    # fail parcels cover 44% of the town, the town about half of the page
    assert 0.1 < close < 0.4


def test_polygon_with_a_hole_keeps_it():
    ring = shapely.Polygon(
        [(0, 0), (10, 0), (10, 10), (0, 10)], holes=[[(4, 4), (6, 4), (6, 6), (4, 6)]]
    )
    multi = shapely.MultiPolygon([shapely.box(20, 0, 30, 10), shapely.box(40, 0, 50, 10)])
    paths, index = polygon_paths([ring, None, multi])
    assert list(index) == [0, 2, 2]
    assert [len(p.vertices) for p in paths] == [10, 5, 5]
    # drawn, the hole stays white and the ring is filled
    fig = Figure(figsize=(5, 1), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 50)
    ax.set_ylim(0, 10)
    add_polygons(ax, [ring], LayerStyle("t", "#000000", "#000000", 0.0))
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[:, :, :3]
    assert pixels[50, 50].tolist() == [255, 255, 255]  # (5, 5): in the hole
    assert pixels[80, 20].tolist() == [0, 0, 0]  # (2, 2): in the ring


def test_overview_needs_a_result_column(tmp_path, ruleset):
    parcels = _grid(2).drop(columns="result")
    with pytest.raises(OutputError, match="no result column"):
        write_overview(tmp_path / "o.png", parcels, ruleset=ruleset)
