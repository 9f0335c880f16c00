"""The overview map of a big town, rasterised a slice at a time, looks like the vector one."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from matplotlib.colors import to_rgb
from PIL import Image

from gis_sw.outputs.maps import overview
from gis_sw.outputs.maps.style import OUTCOME_COLOURS
from gis_sw.ruleset import Ruleset


def _grid(n_side: int) -> gpd.GeoDataFrame:
    xs, ys = np.meshgrid(np.arange(n_side) * 100.0, np.arange(n_side) * 100.0)
    boxes = shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + 100, ys.ravel() + 100)
    results = np.array(["pass", "required", "review", "info"])[np.arange(len(boxes)) % 4]
    results[: len(boxes) // 3] = "fail"  # the southern third fails
    return gpd.GeoDataFrame({"result": results}, geometry=boxes, crs="EPSG:2260")


def _share(path, colour: str) -> float:
    image = np.asarray(Image.open(path).convert("RGB")).astype(int)
    target = np.array([round(c * 255) for c in to_rgb(colour)])
    return float((np.abs(image - target).sum(axis=2) < 30).mean())


def test_sliced_raster_matches_vector_map(
    tmp_path, ruleset: Ruleset, monkeypatch: pytest.MonkeyPatch
) -> None:
    parcels = _grid(60)
    vector = overview.write_overview(
        tmp_path / "vector.png", parcels, ruleset=ruleset, dpi=80, vector=True
    )
    monkeypatch.setattr(overview, "VECTOR_MAX_PARCELS", 0)
    monkeypatch.setattr(overview, "SLICE_PARCELS", 700)  # 3,600 parcels in 6 slices
    raster = overview.write_overview(tmp_path / "raster.png", parcels, ruleset=ruleset, dpi=80)
    a = np.asarray(Image.open(vector).convert("RGB")).astype(int)
    b = np.asarray(Image.open(raster).convert("RGB")).astype(int)
    assert a.shape == b.shape
    # the same page: only parcel edges and anti-aliasing differ
    assert (np.abs(a - b).sum(axis=2) > 30).mean() < 0.06
    fail_vector, fail_raster = (
        _share(vector, OUTCOME_COLOURS["fail"]),
        _share(raster, OUTCOME_COLOURS["fail"]),
    )
    assert fail_raster > 0.05
    assert abs(fail_vector - fail_raster) < 0.01


def test_canvas_counts_every_piece_once(ruleset: Ruleset) -> None:
    parcels = _grid(30).assign(
        low_zone_area_sqft=0.0,
        wetland_sqft=0.0,
        wetland_adjacent_sqft=0.0,
        water_body_sqft=0.0,
        floodplain_sqft=0.0,
        roof_siting_sqft=50.0,
        vehicle_siting_sqft=np.where(np.arange(900) % 3 == 0, 0.99, 1.0),
    )
    canvas = overview.OverviewCanvas(tuple(parcels.total_bounds), crs=parcels.crs, by_class=True)
    for start in range(0, 900, 250):
        canvas.add(parcels.iloc[start : start + 250])
    assert canvas.tally.parcels == 900
    # 0.99 sq ft is no legal place (below 1.0), 1.00 is
    assert canvas.tally.classes == {"no_vehicle_site": 300, "clear": 600}
    assert canvas.tally.review == int((parcels["result"] == "review").sum())
    handles, title = canvas.tally.handles(ruleset)
    assert title == "What constrains the parcel"
    assert any(h.get_label().endswith(": 300") for h in handles)
