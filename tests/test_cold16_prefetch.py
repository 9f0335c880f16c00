"""The whole-layer id checks of a windowed read, started early in a thread, answer the same.

Issue 16: reading the id column of a 100,000-parcel layer is most of what reading the town
around one addition costs.  ``gis-sw check`` now starts those reads in a thread before it
reads the proposals (:func:`gis_sw.around.prefetch`); the windowed read then takes each
answer, a clean layer or the same error, instead of reading the column again.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely

import gis_sw
from gis_sw.around import prefetch
from gis_sw.errors import LayerError
from gis_sw.layers import clean
from gis_sw.layers.build import make_proposals
from gis_sw.layers.proposals import Proposals

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0
COLS = 30  # 30 x 30 lots of 100 ft


def write_town(folder: Path, *, far_id: str | None = None, wells: tuple = ("W-1", "W-2")) -> Path:
    """A GeoPackage town: parcels (the far corner's id replaced), zoning and wells."""
    n = COLS * COLS
    i = np.arange(n)
    x, y = X0 + (i % COLS) * 100.0, Y0 + (i // COLS) * 100.0
    ids: list[str | None] = [f"1.{k // COLS}-{k % COLS}" for k in i]
    if far_id != "keep":
        ids[-1] = far_id
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ids}, geometry=shapely.box(x, y, x + 100, y + 100), crs=CRS
    )
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-20"]},
        geometry=[shapely.box(X0 - 10, Y0 - 10, X0 + COLS * 100 + 10, Y0 + COLS * 100 + 10)],
        crs=CRS,
    )
    points = [shapely.Point(X0 + 50, Y0 + 2_950), shapely.Point(X0 + 2_950, Y0 + 2_950)]
    well_frame = gpd.GeoDataFrame({"well_id": list(wells)}, geometry=points, crs=CRS)
    path = folder / "town.gpkg"
    for layer, frame in (("parcels", parcels), ("zoning", zoning), ("wells", well_frame)):
        pyogrio.write_dataframe(frame, path, layer=layer, driver="GPKG")
    return path


def addition() -> Proposals:
    """A 10 x 12 ft addition on the lot at the south-west corner, 4,200 ft from the far one."""
    box = shapely.box(X0 + 40, Y0 + 40, X0 + 50, Y0 + 52)
    return make_proposals(CRS, gpd.GeoDataFrame({"proposal_id": ["ADD1"]}, geometry=[box], crs=CRS))


def _pending_for(path: Path) -> list[str]:
    return sorted(key[2] for key in clean._PENDING if key[0] == str(path))


def test_prefetched_clean_town_reads_as_without(tmp_path: Path) -> None:
    path = write_town(tmp_path, far_id="keep")
    prefetch(path)
    assert _pending_for(path) == ["parcels", "wells"]
    town = gis_sw.read_town(path, around=addition())
    assert _pending_for(path) == []  # both answers taken by the read
    assert "parcels" in town.windows
    assert len(town.layers.get("parcels")) < COLS * COLS / 4  # 900 lots, the far ones unread


@pytest.mark.parametrize(
    ("far_id", "wells", "messages"),
    [
        pytest.param(
            "1.0-0", ("W-1", "W-2"), ["duplicate parcel_id: '1.0-0' (2 times)."], id="far-repeat"
        ),
        pytest.param(
            None,
            ("W-1", "W-2"),
            [f"required column 'parcel_id' is empty for 1 feature(s): row {COLS * COLS}."],
            id="far-lot-without-id",
        ),
        pytest.param(
            "keep", ("W-1", "W-1"), ["duplicate well_id: 'W-1' (2 times)."], id="far-well-repeat"
        ),
    ],
)
def test_prefetched_far_problems_are_the_same_error(
    tmp_path: Path, far_id: str | None, wells: tuple, messages: list[str]
) -> None:
    path = write_town(tmp_path, far_id=far_id, wells=wells)
    with pytest.raises(LayerError) as plain:
        gis_sw.read_town(path, around=addition())
    clean._whole_id_problems.cache_clear()  # so the prefetch reads the columns again
    prefetch(path)
    with pytest.raises(LayerError) as early:
        gis_sw.read_town(path, around=addition())
    assert [str(p) for p in early.value.problems] == [str(p) for p in plain.value.problems]
    assert [p.message for p in early.value.problems] == messages


def test_prefetched_read_error_is_raised_by_the_read(tmp_path: Path) -> None:
    write_town(tmp_path, far_id="keep")
    manifest = tmp_path / "layers.toml"
    manifest.write_text(
        '[parcels]\npath = "town.gpkg"\nlayer = "parcels"\ncolumns = { parcel_id = "PIN" }\n\n'
        '[zoning]\npath = "town.gpkg"\nlayer = "zoning"\n',
        encoding="utf-8",
    )
    with pytest.raises(LayerError) as plain:
        gis_sw.read_town(manifest, around=addition())
    prefetch(manifest)
    with pytest.raises(LayerError) as early:
        gis_sw.read_town(manifest, around=addition())
    assert [str(p) for p in early.value.problems] == [str(p) for p in plain.value.problems]
    assert "column mapping parcel_id = 'PIN'" in early.value.problems[0].message
