"""Issue 16, write stage: ``parcels.gpkg`` written from Arrow (the parquet's WKB as is, one
write, one R-tree) holds what ``GeoDataFrame.to_file`` wrote: layer, columns, types, values,
geometries; the streamed writer's one Arrow stream holds what its appends held."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio
import pytest
import shapely

from gis_sw.batch.gpkg_out import gpkg_geometry, parcels_gpkg_source, write_parcels_gpkg
from gis_sw.batch.stream_write import _write_gpkg


def _frame(n: int = 12, *, mixed: bool = False) -> gpd.GeoDataFrame:
    """Parcel rows shaped like a batch's: floats with NaN, nullable ints, bools, strings."""
    geoms = list(shapely.box(np.arange(n) * 50.0, 0, np.arange(n) * 50.0 + 40, 40))
    if mixed:
        geoms[3] = shapely.MultiPolygon([shapely.box(150, 0, 160, 10), shapely.box(170, 0, 180, 9)])
    geoms[5] = None
    return gpd.GeoDataFrame(
        {
            "row": np.arange(n, dtype=np.int64),
            "parcel_id": [f"P-{i:03d}" for i in range(n)],
            "zone_main": [None if i % 4 == 0 else "R-10" for i in range(n)],
            "area_sqft": [np.nan if i == 2 else 1600.0 + i / 100 for i in range(n)],
            "wells_near": pd.array([pd.NA if i == 1 else i for i in range(n)], dtype="Int64"),
            "no_vehicle_site": [i % 3 == 0 for i in range(n)],
            "notes": [None if i < 8 else f"note {i}" for i in range(n)],
        },
        geometry=geoms,
        crs="EPSG:2260",
    )


def _same_layer(a: Path, b: Path) -> None:
    ia, ib = pyogrio.read_info(a), pyogrio.read_info(b)
    for key in ("layer_name", "geometry_type", "crs", "features", "fid_column", "geometry_name"):
        assert ia[key] == ib[key], key
    for key in ("fields", "dtypes", "ogr_types", "ogr_subtypes"):
        assert list(ia[key]) == list(ib[key]), key
    fa = pyogrio.read_dataframe(a, fid_as_index=True)
    fb = pyogrio.read_dataframe(b, fid_as_index=True)
    pd.testing.assert_frame_equal(fa.drop(columns="geometry"), fb.drop(columns="geometry"))
    assert list(shapely.to_wkb(fa.geometry.values)) == list(shapely.to_wkb(fb.geometry.values))


def _rtree_rows(path: Path) -> int:
    with sqlite3.connect(path) as con:
        return int(con.execute("select count(*) from rtree_parcels_geom").fetchone()[0])


@pytest.mark.parametrize("mixed", [False, True])
@pytest.mark.parametrize("from_parquet", [False, True])
def test_gpkg_from_arrow_holds_what_to_file_wrote(
    tmp_path: Path, mixed: bool, from_parquet: bool
) -> None:
    frame = _frame(mixed=mixed)
    frame.to_file(
        tmp_path / "old.gpkg", driver="GPKG", layer="parcels", engine="pyogrio", use_arrow=True
    )
    parquet = None
    if from_parquet:
        parquet = tmp_path / "parcels.parquet"
        frame.to_parquet(parquet, index=False)
    table, kind = parcels_gpkg_source(frame, parquet)
    assert kind == ("MultiPolygon" if mixed else "Polygon")
    write_parcels_gpkg(tmp_path / "new.gpkg", table, geometry_type=kind, crs=frame.crs)
    _same_layer(tmp_path / "old.gpkg", tmp_path / "new.gpkg")
    assert _rtree_rows(tmp_path / "new.gpkg") == 11  # every parcel with a geometry
    back = pyogrio.read_dataframe(tmp_path / "new.gpkg")
    assert back.loc[2, "area_sqft"] != back.loc[2, "area_sqft"]  # NaN stays missing
    assert back.loc[11, "area_sqft"] == 1600.11
    assert pd.isna(back.loc[1, "wells_near"])
    assert int(back.loc[7, "wells_near"]) == 7


def test_gpkg_geometry_types_as_pyogrio_infers_them() -> None:
    box = shapely.box(0, 0, 1, 1)
    multi = shapely.MultiPolygon([box, shapely.box(2, 0, 3, 1)])
    wkb = pa.array(shapely.to_wkb(np.array([box, None], dtype=object)), pa.binary())
    same, kind = gpkg_geometry(np.array([box, None], dtype=object), wkb)
    assert kind == "Polygon"
    assert same.to_pylist() == wkb.to_pylist()  # the parquet's WKB, as is
    made, kind = gpkg_geometry(np.array([box, multi], dtype=object))
    assert kind == "MultiPolygon"
    parts = shapely.from_wkb(made.to_numpy(zero_copy_only=False))
    assert shapely.get_type_id(parts).tolist() == [6, 6]
    assert shapely.area(parts).tolist() == [1.0, 2.0]
    assert gpkg_geometry(np.array([None, None], dtype=object))[1] == "Unknown"
    assert gpkg_geometry(np.array([box, shapely.Point(0, 0)], dtype=object))[1] == "Unknown"
    z = shapely.Polygon([(0, 0, 1), (1, 0, 1), (1, 1, 2), (0, 0, 1)])
    assert gpkg_geometry(np.array([z], dtype=object))[1] == "Polygon Z"


@pytest.mark.filterwarnings("ignore:A geometry of type POLYGON is inserted")
def test_streamed_gpkg_holds_what_the_appends_held(tmp_path: Path) -> None:
    frame = _frame(30, mixed=True)
    # the second chunk mixes single and multi parts; the first two have no notes at all
    cuts = [(0, 3), (3, 8), (8, 30)]
    for at, (lo, hi) in enumerate(cuts):
        piece = frame.iloc[lo:hi]
        piece.to_file(
            tmp_path / "old.gpkg",
            driver="GPKG",
            layer="parcels",
            engine="pyogrio",
            mode="a" if at else "w",
        )

    def chunks():
        for lo, hi in cuts:
            piece = frame.iloc[lo:hi]
            geoms = piece.geometry.to_numpy()
            table = pa.Table.from_pandas(
                pd.DataFrame(piece.drop(columns="geometry")), preserve_index=False
            )
            yield table, geoms, pa.array(shapely.to_wkb(geoms), pa.binary())

    _write_gpkg(tmp_path / "new.gpkg", chunks(), frame.crs)
    _same_layer(tmp_path / "old.gpkg", tmp_path / "new.gpkg")
    assert pyogrio.read_info(tmp_path / "new.gpkg")["geometry_type"] == "Polygon"  # chunk 1's
    assert _rtree_rows(tmp_path / "new.gpkg") == 29
    back = pyogrio.read_dataframe(tmp_path / "new.gpkg")
    assert back["notes"].isna().tolist()[7:9] == [True, False]
    assert back["notes"].tolist()[8:10] == ["note 8", "note 9"]
    assert shapely.get_type_id(back.geometry.values).tolist()[:5] == [3, 3, 3, 6, 6]


def test_read_back_in_small_batches_holds_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gis_sw.batch import gpkg_out

    frame = _frame(23)
    frame.to_file(
        tmp_path / "old.gpkg", driver="GPKG", layer="parcels", engine="pyogrio", use_arrow=True
    )
    frame.to_parquet(tmp_path / "parcels.parquet", index=False)
    monkeypatch.setattr(gpkg_out, "PARQUET_BATCH_ROWS", 5)  # 23 rows in 5 batches
    source, kind = parcels_gpkg_source(frame, tmp_path / "parcels.parquet")
    assert isinstance(source, pa.RecordBatchReader)
    write_parcels_gpkg(tmp_path / "new.gpkg", source, geometry_type=kind, crs=frame.crs)
    _same_layer(tmp_path / "old.gpkg", tmp_path / "new.gpkg")
    assert _rtree_rows(tmp_path / "new.gpkg") == 22
