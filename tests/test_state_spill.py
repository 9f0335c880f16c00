"""Spilled row groups: envelopes, empty groups and geometry-less rows; nothing kept alive."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyarrow.parquet as pq
import shapely

from gis_sw.batch.stream import Spiller, read_groups, read_window, spill_groups

CRS = "EPSG:2260"


def _frame() -> gpd.GeoDataFrame:
    geoms = [
        shapely.box(0, 0, 10, 10),
        None,
        shapely.box(100, 50, 120, 70),
        shapely.Polygon(),
        shapely.Point(-5.5, 200.25),
        shapely.box(30, -7, 31, -6),
    ]
    return gpd.GeoDataFrame(
        {"well_id": [f"W{i}" for i in range(6)], "depth_ft": [1.5, 2.0, None, 4.0, 5.0, 6.0]},
        geometry=geoms,
        crs=CRS,
    )


def test_each_group_keeps_its_rows_order_and_envelope(tmp_path: Path) -> None:
    frame = _frame()
    groups = [np.array([4, 0, 2]), np.array([1, 3]), np.array([5])]
    layer = spill_groups(frame, tmp_path / "w.parquet", groups)
    assert pq.ParquetFile(layer.path).num_row_groups == 3
    assert layer.bounds[0].tolist() == [-5.5, 0.0, 120.0, 200.25]
    assert np.isnan(layer.bounds[1]).all()  # no location in the group: no envelope
    assert layer.bounds[2].tolist() == [30.0, -7.0, 31.0, -6.0]
    first = read_groups(layer, np.array([0]))
    assert first.index.tolist() == [4, 0, 2]
    assert first["well_id"].tolist() == ["W4", "W0", "W2"]
    assert np.isnan(first["depth_ft"].iloc[2])
    assert list(shapely.to_wkb(first.geometry)) == list(shapely.to_wkb(frame.geometry[[4, 0, 2]]))
    second = read_groups(layer, np.array([1]))
    assert second.geometry.iloc[0] is None
    assert second.geometry.iloc[1].is_empty
    assert list(first.columns) == list(frame.columns)


def test_window_reads_only_meeting_features_in_row_order(tmp_path: Path) -> None:
    frame = _frame()
    layer = spill_groups(frame, tmp_path / "w.parquet", [np.array([4, 0, 2]), np.array([5])])
    # touching counts: the box's edge at x = 10 meets the first square
    hit = read_window(layer, np.array([10.0, 5.0, 30.0, 60.0]))
    assert hit.index.tolist() == [0]
    hit = read_window(layer, np.array([-10.0, -10.0, 200.0, 300.0]))
    assert hit.index.tolist() == [0, 2, 4, 5]
    assert len(read_window(layer, np.array([500.0, 500.0, 600.0, 600.0]))) == 0


def test_spiller_keeps_no_row_of_a_spilled_layer(tmp_path: Path) -> None:
    spiller = Spiller(tmp_path, chunk_size=2, halo_ft=100.0, hash_layer=lambda _: "")
    frame = _frame()
    geoms = np.asarray(frame.geometry.array)  # the array of shapely objects itself
    alive = weakref.ref(geoms)
    kept = spiller("wells", frame)
    assert len(kept) == 0
    assert list(kept.columns) == list(frame.columns)
    del frame, geoms
    gc.collect()
    assert alive() is None  # the empty frame handed back is not a view of the layer
    assert spiller.spilled["wells"].n_groups == 1
