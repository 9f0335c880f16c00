"""Issue 16, write stage: the overview painted from a raster shows what the vector map
shows: each parcel's class fill at its place, the same share of the page per class, the
review hatch, the counts of the legend."""

from __future__ import annotations

import subprocess
import sys

import geopandas as gpd
import numpy as np
import shapely
from matplotlib.colors import to_rgb
from PIL import Image

from gis_sw.outputs.maps import overview
from gis_sw.outputs.maps.overview import CONSTRAINT_CLASSES, OverviewCanvas, write_overview

FILLS = {key: fill for key, _, fill in CONSTRAINT_CLASSES}


def _town(n_side: int = 60) -> gpd.GeoDataFrame:
    """A grid of 100 ft lots; lot i's class is set by i mod 5, every 7th is review."""
    xs, ys = np.meshgrid(np.arange(n_side) * 100.0, np.arange(n_side) * 100.0)
    boxes = shapely.box(xs.ravel(), ys.ravel(), xs.ravel() + 100, ys.ravel() + 100)
    i = np.arange(len(boxes))
    kind = i % 5
    return gpd.GeoDataFrame(
        {
            "result": np.where(i % 7 == 0, "review", "pass"),
            "roof_siting_sqft": np.where(kind == 0, 0.99, 400.0),  # 0.99 < 1.00: no place
            "vehicle_siting_sqft": np.where(kind == 1, 0.0, 200.0),
            "wetland_sqft": np.where(kind == 2, 12.5, 0.0),
            "wetland_adjacent_sqft": 0.0,
            "water_body_sqft": 0.0,
            "floodplain_sqft": 0.0,
            "low_zone_area_sqft": np.where(kind == 3, 9_000.0, 0.0),
        },
        geometry=boxes,
        crs="EPSG:2260",
    )


def _rgb(colour: str) -> list[int]:
    return [round(c * 255) for c in to_rgb(colour)]


def test_each_parcel_shows_its_class_fill_at_its_place() -> None:
    town = _town()
    canvas = OverviewCanvas(tuple(town.total_bounds), crs=town.crs, by_class=True, dpi=150)
    canvas.add(town.iloc[:1700])
    canvas.add(town.iloc[1700:])
    image = canvas.image()
    (x0, x1), (y0, y1) = canvas._xlim, canvas._ylim
    height, width = image.shape[:2]
    names = ["no_roof_site", "no_vehicle_site", "resource", "low_zone", "clear"]
    checked = 0
    for i in range(0, len(town), 37):
        if i % 7 == 0:  # hatched: not one flat colour
            continue
        cx, cy = town.geometry.iloc[i].centroid.coords[0]
        col = int((cx - x0) / (x1 - x0) * width)
        row = int((y1 - cy) / (y1 - y0) * height)
        assert image[row, col, :3].tolist() == _rgb(FILLS[names[i % 5]]), i
        checked += 1
    assert checked > 70
    assert canvas.tally.parcels == 3600
    assert canvas.tally.classes == dict.fromkeys(names, 720)
    assert canvas.tally.review == 515  # ceil(3600 / 7)


def test_raster_page_has_the_vector_pages_class_shares(tmp_path) -> None:
    town = _town()
    vector = write_overview(tmp_path / "v.png", town, ruleset=_ruleset(), dpi=100, vector=True)
    raster = write_overview(tmp_path / "r.png", town, ruleset=_ruleset(), dpi=100)
    a = np.asarray(Image.open(vector).convert("RGB")).astype(int)
    b = np.asarray(Image.open(raster).convert("RGB")).astype(int)
    assert a.shape == b.shape
    # each pixel read as the nearest colour of the map's palette, as an eye would
    palette = {key: _rgb(fill) for key, fill in FILLS.items()}
    palette |= {"paper": [255, 255, 255], "outline": [96, 96, 96], "hatch": [230, 97, 1]}
    palette["ink"] = [0, 0, 0]
    share_a, share_b = _shares(a, palette), _shares(b, palette)
    for key in ("no_roof_site", "no_vehicle_site", "resource", "low_zone", "clear"):
        assert share_b[key] > 0.08, key
        assert abs(share_a[key] - share_b[key]) < 0.006, key
    assert share_b["hatch"] > 0.004
    assert abs(share_a["hatch"] - share_b["hatch"]) < 0.3 * share_a["hatch"]
    # everything off the map frame (title, legend, furniture) is the same page
    frame = np.zeros(a.shape[:2], dtype=bool)
    h, w = frame.shape
    frame[int(h * 0.08) : int(h * 0.9), int(w * 0.04) : int(w * 0.74)] = True
    assert (np.abs(a - b).sum(axis=2)[~frame] > 30).mean() < 0.001


def test_pdf_of_a_small_town_stays_vector(tmp_path, monkeypatch) -> None:
    town = _town(10)
    drawn = []
    monkeypatch.setattr(overview, "_draw_parcels", lambda *a: drawn.append(len(a[1])) or [])
    write_overview(tmp_path / "o.pdf", town, ruleset=_ruleset())
    write_overview(tmp_path / "o.png", town, ruleset=_ruleset())
    assert drawn == [100]  # the PDF's vectors; the PNG was painted


def _shares(image: np.ndarray, palette: dict[str, list[int]]) -> dict[str, float]:
    colours = np.array(list(palette.values()))
    nearest = ((image[:, :, None, :] - colours[None, None]) ** 2).sum(axis=-1).argmin(axis=-1)
    return {key: float((nearest == at).mean()) for at, key in enumerate(palette)}


def _ruleset():
    from gis_sw.ruleset import load_ruleset

    return load_ruleset(None)


def test_the_overview_does_not_load_the_pdf_backend() -> None:
    code = (
        "import sys, gis_sw.outputs.maps.overview\n"
        "print('matplotlib.backends.backend_pdf' in sys.modules)\n"
        "from gis_sw.outputs.maps import write_overview, write_sheets\n"
        "print(write_overview.__module__, write_sheets.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "False"
    assert out[1] == "gis_sw.outputs.maps.overview gis_sw.outputs.maps.sheets"
