"""GeoPackage features read by window straight from SQLite equal pyogrio's read of them.

Issue 16: ``gis-sw check`` opened the town's GeoPackage in GDAL once per layer read by
window (about 7 ms each, a dozen a check) for a few dozen rows.  The window's rows are now
read on the SQLite connection the R-tree lookup holds (:mod:`gis_sw.layers.gpkg_rows`),
column types and gaps converted as pyogrio converts GDAL's Arrow stream; what that reader
does not read exactly so (a date and time column here) is still read by pyogrio.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

from gis_sw.layers import gpkg_rows
from gis_sw.layers.absence import has_any_feature
from gis_sw.layers.gpkg_rows import read_gpkg_rows
from gis_sw.layers.manifest import LayerEntry
from gis_sw.layers.vector import read_vector
from gis_sw.layers.window import (
    GpkgWindow,
    gpkg_fields,
    gpkg_has_rows,
    gpkg_window_rows,
    read_gpkg_table,
    read_gpkg_window,
)

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0


def _lots(n: int) -> list[shapely.Geometry]:
    return [shapely.box(X0 + 100 * i, Y0, X0 + 100 * i + 90, Y0 + 90) for i in range(n)]


def write_buildings(path: Path) -> None:
    """Buildings as an export gives them: text, yes/no and numbers with gaps, one no-shape."""
    n = 8
    geoms = _lots(n)
    geoms[5] = None
    frame = gpd.GeoDataFrame(
        {
            "building_id": [f"B-{i}" for i in range(n)],
            "parcel_id": ["P-0", None, "P-2", "P-3", "P-4", "P-5", "P-6", "P-7"],
            "habitable_basement": pd.array(
                [True, None, False, True, False, True, None, False], dtype="boolean"
            ),
            "stories": pd.array([1, 2, None, 2, 1, 3, 1, 2], dtype="Int64"),
            "height_ft": [22.5, 30.0, np.nan, 18.25, 21.0, 35.0, 24.0, 19.5],
            "rooms": np.array([4, 5, 6, 7, 8, 9, 10, 11], dtype="int32"),
        },
        geometry=geoms,
        crs=CRS,
    )
    pyogrio.write_dataframe(frame, path, layer="buildings", driver="GPKG")
    dated = frame[["building_id"]].assign(
        built=pd.to_datetime(["2001-05-01 08:30"] * n), geometry=_lots(n)
    )
    pyogrio.write_dataframe(
        gpd.GeoDataFrame(dated, crs=CRS), path, layer="dated", driver="GPKG", append=True
    )


def _pyogrio_window(path: Path, layer: str, fids: np.ndarray) -> gpd.GeoDataFrame:
    """The features as read_gpkg_window read them through pyogrio before issue 16."""
    if not len(fids):
        return pyogrio.read_dataframe(path, layer=layer, max_features=0, use_arrow=True)
    frame = pyogrio.read_dataframe(path, layer=layer, fids=fids, use_arrow=True, fid_as_index=True)
    frame = frame.iloc[np.argsort(np.asarray(frame.index, dtype=np.int64), kind="stable")]
    return frame.reset_index(drop=True)


@pytest.mark.parametrize(
    "box",
    [
        (X0 + 150, Y0 + 10, X0 + 460, Y0 + 20),  # lots 1 to 4
        (X0 - 10, Y0 - 10, X0 + 900, Y0 + 100),  # every lot
        (X0 + 10_000, Y0, X0 + 10_100, Y0 + 100),  # none
    ],
    ids=["four-lots", "whole-layer", "empty-window"],
)
def test_window_read_from_sqlite_equals_pyogrio(tmp_path: Path, box: tuple) -> None:
    path = tmp_path / "town.gpkg"
    write_buildings(path)
    window = GpkgWindow("buildings", box)
    found = gpkg_window_rows(path, window)
    assert found is not None
    fids, rows = found
    read = read_gpkg_window(path, window)
    assert read is not None
    expected = _pyogrio_window(path, "buildings", fids)
    pd.testing.assert_frame_equal(read.frame.to_wkb(), expected.to_wkb(), check_exact=True)
    assert dict(read.frame.dtypes.astype(str)) == dict(expected.dtypes.astype(str))
    assert read.frame.crs == expected.crs
    assert read.rows.tolist() == rows.tolist()


def test_window_read_values_and_types(tmp_path: Path) -> None:
    path = tmp_path / "town.gpkg"
    write_buildings(path)
    read = read_gpkg_window(path, GpkgWindow("buildings", (X0 - 10, Y0 - 10, X0 + 900, Y0 + 100)))
    assert read is not None
    frame = read.frame
    # the feature with no geometry has no R-tree entry and is read all the same
    assert frame["building_id"].tolist() == [f"B-{i}" for i in range(8)]
    assert read.rows.tolist() == list(range(8))
    assert frame.geometry.isna().tolist() == [False] * 5 + [True] + [False] * 2
    assert frame.geometry.iloc[1].bounds == (X0 + 100, Y0, X0 + 190, Y0 + 90)
    assert str(frame["parcel_id"].dtype) == "str"
    assert pd.isna(frame["parcel_id"].iloc[1])
    assert frame["habitable_basement"].tolist()[:3] == [True, None, False]
    assert frame["stories"].dtype == "float64"  # integers with a gap, as Arrow gives them
    assert frame["stories"].tolist()[:2] == [1.0, 2.0]
    assert np.isnan(frame["stories"].iloc[2])
    assert frame["height_ft"].tolist()[3] == 18.25
    assert frame["rooms"].tolist() == [4, 5, 6, 7, 8, 9, 10, 11]
    assert frame.crs == CRS


def test_a_datetime_column_is_left_to_pyogrio(tmp_path: Path) -> None:
    path = tmp_path / "town.gpkg"
    write_buildings(path)
    conn = sqlite3.connect(path)
    try:
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        assert read_gpkg_rows(conn, key, "dated", np.array([1, 2])) is None
        direct = read_gpkg_rows(conn, key, "buildings", np.array([2, 3, 99]))
    finally:
        conn.close()
    assert direct is not None
    frame, fids = direct
    assert fids.tolist() == [2, 3]  # fid 99 is not in the table
    assert frame["building_id"].tolist() == ["B-1", "B-2"]
    read = read_gpkg_window(path, GpkgWindow("dated", (X0 + 150, Y0 + 10, X0 + 260, Y0 + 20)))
    assert read is not None
    assert read.frame["building_id"].tolist() == ["B-1", "B-2"]
    assert read.frame["built"].tolist() == [pd.Timestamp("2001-05-01 08:30")] * 2


def test_fields_and_rows_from_the_catalog_as_gdal_lists_them(tmp_path: Path) -> None:
    path = tmp_path / "town.gpkg"
    write_buildings(path)
    assert gpkg_fields(path, "buildings") == list(
        pyogrio.read_info(path, layer="buildings")["fields"]
    )
    assert gpkg_fields(path, "no_such_layer") is None
    assert gpkg_has_rows(path, "buildings") is True
    empty = gpd.GeoDataFrame({"well_id": pd.Series([], dtype="str")}, geometry=[], crs=CRS)
    pyogrio.write_dataframe(empty, path, layer="wells", driver="GPKG", append=True)
    assert gpkg_has_rows(path, "wells") is False
    assert has_any_feature(LayerEntry("wells", path=path)) is False
    assert has_any_feature(LayerEntry("buildings", path=path)) is True


def test_small_table_read_whole_from_sqlite_equals_pyogrio(tmp_path: Path) -> None:
    path = tmp_path / "town.gpkg"
    write_buildings(path)
    whole = read_gpkg_table(path, "buildings")
    assert whole is not None
    expected = pyogrio.read_dataframe(path, layer="buildings", use_arrow=True)
    pd.testing.assert_frame_equal(whole.to_wkb(), expected.to_wkb(), check_exact=True)
    assert dict(whole.dtypes.astype(str)) == dict(expected.dtypes.astype(str))
    frame, _, warnings = read_vector(path, layer="buildings", kind="buildings")
    assert warnings == []
    assert frame["building_id"].tolist() == [f"B-{i}" for i in range(8)]
    assert read_gpkg_table(path, "dated") is None  # its date and time column: pyogrio


def test_large_table_is_left_to_pyogrio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "town.gpkg"
    write_buildings(path)
    monkeypatch.setattr(gpkg_rows, "MAX_FIDS", 7)  # the table's fids span 8
    assert read_gpkg_table(path, "buildings") is None
    frame, _, _ = read_vector(path, layer="buildings", kind="buildings")
    assert frame["building_id"].tolist() == [f"B-{i}" for i in range(8)]
    monkeypatch.setattr(gpkg_rows, "MAX_FIDS", 8)
    assert read_gpkg_table(path, "buildings") is not None


def test_layer_of_geometries_alone_and_text_with_nul(tmp_path: Path) -> None:
    path = tmp_path / "town.gpkg"
    shapes = gpd.GeoDataFrame(geometry=_lots(3), crs=CRS)
    pyogrio.write_dataframe(shapes, path, layer="shapes", driver="GPKG")
    whole = read_gpkg_table(path, "shapes")
    assert whole is not None
    expected = pyogrio.read_dataframe(path, layer="shapes", use_arrow=True)
    pd.testing.assert_frame_equal(whole.to_wkb(), expected.to_wkb(), check_exact=True)
    assert list(whole.columns) == ["geometry"]
    named = gpd.GeoDataFrame({"well_id": ["W-1", "W-2"]}, geometry=_lots(2), crs=CRS)
    pyogrio.write_dataframe(named, path, layer="wells", driver="GPKG", append=True)
    conn = sqlite3.connect(path)
    for name in ("ST_IsEmpty", "ST_MinX", "ST_MaxX", "ST_MinY", "ST_MaxY"):  # R-tree triggers
        conn.create_function(name, 1, lambda _blob: 0)
    conn.execute("UPDATE wells SET well_id = 'W-' || char(0) || 'x' WHERE fid = 2")
    conn.commit()
    conn.close()
    assert read_gpkg_table(path, "wells") is None  # GDAL reads text up to the NUL: pyogrio
    frame, _, _ = read_vector(path, layer="wells", kind="wells")
    expected = pyogrio.read_dataframe(path, layer="wells", use_arrow=True)
    assert frame["well_id"].tolist() == expected["well_id"].tolist()
