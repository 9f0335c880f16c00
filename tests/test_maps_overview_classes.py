"""The batch overview an analyst can read: parcels coloured by what constrains them, review
as a hatch over the class, counts in the legend, the scale bar inside the frame."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from matplotlib.colors import to_rgb
from PIL import Image

from gis_sw.outputs.maps.overview import (
    CONSTRAINT_CLASSES,
    constraint_classes,
    scale_bar_length_ft,
    write_overview,
)


def _parcels() -> gpd.GeoDataFrame:
    rows = {
        #                 low   wet  adj  water flood roof  vehicle result
        "no-roof-0.99": (0.0, 0.0, 0.0, 0.0, 0.0, 0.99, 0.0, "info"),
        "roof-1.00": (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.99, "info"),
        "wetland-band": (0.0, 0.0, 0.01, 0.0, 0.0, 500.0, 200.0, "required"),
        "r10": (9000.0, 0.0, 0.0, 0.0, 0.0, 500.0, 200.0, "pass"),
        "clear": (0.0, 0.0, 0.0, 0.0, 0.0, 500.0, 200.0, "pass"),
        "clear-review": (0.0, np.nan, np.nan, 0.0, 0.0, np.nan, np.nan, "review"),
    }
    names = list(rows)
    columns = [
        "low_zone_area_sqft",
        "wetland_sqft",
        "wetland_adjacent_sqft",
        "water_body_sqft",
        "floodplain_sqft",
        "roof_siting_sqft",
        "vehicle_siting_sqft",
        "result",
    ]
    data = {c: [rows[n][i] for n in names] for i, c in enumerate(columns)}
    boxes = [shapely.box(i * 100.0, 0, i * 100.0 + 100, 100) for i in range(len(names))]
    return gpd.GeoDataFrame({"parcel_id": names, **data}, geometry=boxes, crs="EPSG:2260")


def test_classes_in_priority_order_at_the_boundary() -> None:
    classes = constraint_classes(_parcels())
    assert list(classes) == [
        "no_roof_site",
        "no_vehicle_site",
        "resource",
        "low_zone",
        "clear",
        "clear",
    ]


@pytest.mark.parametrize(
    ("width_ft", "bar_ft"),
    [(3_150.0, 500.0), (40_000.0, 10_000.0), (39_999.0, 5_000.0), (600.0, 100.0)],
)
def test_scale_bar_is_a_quarter_of_the_frame_or_less(width_ft: float, bar_ft: float) -> None:
    assert scale_bar_length_ft(width_ft) == bar_ft


def test_overview_draws_classes_and_review_hatch(tmp_path, ruleset) -> None:
    parcels = _parcels()
    path = write_overview(tmp_path / "overview.png", parcels, ruleset=ruleset, dpi=100)
    image = np.asarray(Image.open(path).convert("RGB")).astype(int)
    for key, _, fill in CONSTRAINT_CLASSES[:-1]:
        rgb = np.array([round(c * 255) for c in to_rgb(fill)])
        assert (np.abs(image - rgb).sum(axis=2) < 12).sum() > 200, key
    hatch = np.array([round(c * 255) for c in to_rgb("#e66101")])
    assert (np.abs(image - hatch).sum(axis=2) < 40).sum() > 50
