"""A town read around the proposals checks its ids over the whole layer, as a whole read does.

Before: ``read_town(..., around=proposals)`` validated only the features in the window, so a
``parcel_id`` given twice (or left empty) 2,000 ft away was no error, while the same town
read whole was refused.  Now the windowed read reads the id column alone (no geometry) and
raises the same LayerError.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely

import gis_sw
from gis_sw.errors import LayerError
from gis_sw.layers.build import make_proposals
from gis_sw.layers.proposals import Proposals

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0  # Mount Pleasant, NY, in EPSG:2260 ftUS
LOT_FT = 100.0
COLS = 40  # 40 x 40 lots: 4,000 ft a side


def write_town(
    folder: Path, ids: list[object] | None = None, *, wells: list[object] | None = None
) -> Path:
    """A GeoPackage town as a county export gives it: parcels, zoning and wells."""
    n = COLS * COLS
    i = np.arange(n)
    x, y = X0 + (i % COLS) * LOT_FT, Y0 + (i // COLS) * LOT_FT
    parcels = gpd.GeoDataFrame(
        {
            "parcel_id": ids if ids is not None else [f"1.{k // COLS}-{k % COLS}" for k in i],
            "owner": ["OWNER"] * n,
        },
        geometry=shapely.box(x, y, x + LOT_FT, y + LOT_FT),
        crs=CRS,
    )
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-20"]},
        geometry=[shapely.box(X0 - 10, Y0 - 10, X0 + COLS * LOT_FT + 10, Y0 + COLS * LOT_FT + 10)],
        crs=CRS,
    )
    well_ids = wells if wells is not None else ["W-1", "W-2"]
    points = [shapely.Point(X0 + 50, Y0 + 3_950), shapely.Point(X0 + 3_950, Y0 + 3_950)]
    wells_frame = gpd.GeoDataFrame({"well_id": well_ids}, geometry=points, crs=CRS)
    path = folder / "town.gpkg"
    for layer, frame in (("parcels", parcels), ("zoning", zoning), ("wells", wells_frame)):
        pyogrio.write_dataframe(frame, path, layer=layer, driver="GPKG")
    return path


def addition() -> Proposals:
    """A 10 x 12 ft addition on the lot at the town's south-west corner."""
    box = shapely.box(X0 + 40, Y0 + 40, X0 + 50, Y0 + 52)
    return make_proposals(CRS, gpd.GeoDataFrame({"proposal_id": ["ADD1"]}, geometry=[box], crs=CRS))


def ids_with(changes: dict[int, object]) -> list[object]:
    ids: list[object] = [f"1.{k // COLS}-{k % COLS}" for k in range(COLS * COLS)]
    for k, value in changes.items():
        ids[k] = value
    return ids


FAR = COLS * COLS - 1  # the lot at the north-east corner, 5,500 ft from the addition


def test_control_a_clean_town_is_read_by_window(tmp_path: Path) -> None:
    town = gis_sw.read_town(write_town(tmp_path), around=addition())
    assert "parcels" in town.windows
    assert len(town.layers.get("parcels")) < COLS * COLS / 10


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        pytest.param({FAR: "1.0-0"}, "duplicate parcel_id: '1.0-0' (2 times).",
                     id="far-lot-repeats-a-near-id"),
        pytest.param({FAR: "1.39-38"}, "duplicate parcel_id: '1.39-38' (2 times).",
                     id="two-far-lots-share-an-id"),
        pytest.param({FAR: "1.39-38 "}, "duplicate parcel_id: '1.39-38' (2 times).",
                     id="padded-text-is-the-same-id"),
        pytest.param({FAR: None}, "required column 'parcel_id' is empty for 1 feature(s): "
                     f"row {FAR + 1}.", id="far-lot-without-id"),
    ],
)  # fmt: skip
def test_far_id_problems_are_the_same_error_as_a_whole_read(
    tmp_path: Path, changes: dict[int, object], message: str
) -> None:
    path = write_town(tmp_path, ids_with(changes))
    with pytest.raises(LayerError) as whole:
        gis_sw.read_town(path)
    with pytest.raises(LayerError) as windowed:
        gis_sw.read_town(path, around=addition())
    assert [str(p) for p in windowed.value.problems] == [str(p) for p in whole.value.problems]
    (problem,) = windowed.value.problems
    assert problem.layer == f"parcels [{path}:parcels]"
    assert problem.message == message


def test_far_repeated_well_id_is_refused_by_window_too(tmp_path: Path) -> None:
    path = write_town(tmp_path, wells=["W-1", "W-1"])
    with pytest.raises(LayerError) as windowed:
        gis_sw.read_town(path, around=addition())
    assert [p.message for p in windowed.value.problems] == ["duplicate well_id: 'W-1' (2 times)."]


def test_a_rewritten_file_is_checked_again(tmp_path: Path) -> None:
    path = write_town(tmp_path)
    gis_sw.read_town(path, around=addition())
    path.unlink()
    write_town(tmp_path, ids_with({FAR: "1.0-0"}))
    with pytest.raises(LayerError, match=r"duplicate parcel_id: '1\.0-0' \(2 times\)"):
        gis_sw.read_town(path, around=addition())


def test_far_repeated_id_in_a_geoparquet_read_by_window(tmp_path: Path) -> None:
    gpkg = write_town(tmp_path, ids_with({FAR: "1.0-0"}))
    parcels = gpd.read_file(gpkg, layer="parcels")
    parcels.to_parquet(tmp_path / "parcels.parquet", write_covering_bbox=True)
    manifest = tmp_path / "layers.toml"
    manifest.write_text(
        '[parcels]\npath = "parcels.parquet"\n\n[zoning]\npath = "town.gpkg"\nlayer = "zoning"\n',
        encoding="utf-8",
    )
    with pytest.raises(LayerError) as windowed:
        gis_sw.read_town(manifest, around=addition())
    assert [p.message for p in windowed.value.problems] == [
        "duplicate parcel_id: '1.0-0' (2 times)."
    ]
    parcels.drop_duplicates("parcel_id").to_parquet(
        tmp_path / "parcels.parquet", write_covering_bbox=True
    )
    town = gis_sw.read_town(manifest, around=addition())
    assert "parcels" in town.windows
