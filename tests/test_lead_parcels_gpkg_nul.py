"""parcels.gpkg keeps what follows a NUL in a text value, from a table and from the parquet."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pyarrow as pa
import pyogrio
import shapely

from gis_sw.batch.gpkg_out import parcels_gpkg_source, write_parcels_gpkg
from gis_sw.outputs.geopackage import NUL_STANDIN, gdal_text_arrow


def _parcels() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {
            "parcel_id": ["a\x00b", "plain", "c\x00"],
            "zones": ["R-10", "R-20", None],
            "area_sqft": [100.0, 200.5, 300.25],
        },
        geometry=[shapely.box(0, 0, 10, 10), shapely.box(10, 0, 30, 10), shapely.box(0, 10, 5, 70)],
        crs="EPSG:2260",
    )


def test_parcels_gpkg_from_the_parquet_keeps_text_after_a_nul(tmp_path: Path) -> None:
    parcels = _parcels()
    parquet = tmp_path / "parcels.parquet"
    parcels.to_parquet(parquet)
    source, kind = parcels_gpkg_source(parcels, parquet)
    write_parcels_gpkg(tmp_path / "parcels.gpkg", source, geometry_type=kind, crs=parcels.crs)
    back = pyogrio.read_dataframe(tmp_path / "parcels.gpkg")
    assert back["parcel_id"].tolist() == [f"a{NUL_STANDIN}b", "plain", f"c{NUL_STANDIN}"]
    assert back["area_sqft"].tolist() == [100.0, 200.5, 300.25]
    assert back.geometry.area.round(2).tolist() == [100.0, 200.0, 300.0]


def test_arrow_batches_without_nul_are_returned_as_they_are() -> None:
    table = pa.table({"a": ["x", None], "b": [1.0, 2.0]})
    assert gdal_text_arrow(table) is table
    words = pa.array(["p\x00q", "r", "p\x00q"]).dictionary_encode()
    fixed = gdal_text_arrow(pa.record_batch({"w": words, "n": [1, 2, 3]}))
    assert fixed.column(0).to_pylist() == [f"p{NUL_STANDIN}q", "r", f"p{NUL_STANDIN}q"]
    assert fixed.column(1).to_pylist() == [1, 2, 3]
