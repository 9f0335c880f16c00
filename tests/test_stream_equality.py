"""Streamed batch (layers spilled to disk, chunk by chunk) equals the whole-frame batch."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import gis_sw
from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.run import RunOptions, plan_for, rows_equal, screen_layers
from gis_sw.batch.stream_run import spill_layerset
from gis_sw.batch.synthetic import synthetic_town, write_synthetic_town
from gis_sw.errors import GisSwError
from gis_sw.ruleset import Ruleset


def _write_town(folder: Path, n: int, seed: int) -> Path:
    """A generated town as GeoParquet files and a layers manifest, as `gis-sw sample` does."""
    return write_synthetic_town(folder, n, seed=seed)


def test_disk_chunks_hold_the_same_features_as_memory_chunks(
    ruleset: Ruleset, tmp_path: Path
) -> None:
    layers = synthetic_town(400, seed=5)
    prepared, plan = plan_for(layers, ruleset, chunk_size=50)
    memory = ChunkSource(
        prepared.parcels,
        {k: layers.get(k) for k in ("zoning", "wetlands", "wells", "buildings")},
        plan,
    )
    disk = spill_layerset(layers, prepared, plan, tmp_path)
    assert plan.n_chunks == 8
    seen = 0
    for i in range(plan.n_chunks):
        a, b = memory.chunk(i), disk.chunk(i)
        assert np.array_equal(a.parcels.index, b.parcels.index)
        assert list(shapely.to_wkb(a.parcels.geometry)) == list(shapely.to_wkb(b.parcels.geometry))
        for kind in ("zoning", "wetlands", "wells", "buildings"):
            left, right = a.context[kind], b.context[kind]
            assert np.array_equal(left.index, right.index), (i, kind)
            assert list(shapely.to_wkb(left.geometry)) == list(shapely.to_wkb(right.geometry))
            seen += len(right)
    assert seen > 500  # the halo features really came from several row groups


def test_streamed_rows_equal_whole_frame_rows(ruleset: Ruleset) -> None:
    layers = synthetic_town(500, seed=7)
    whole = screen_layers(layers, ruleset, options=RunOptions(chunk_size=10_000, workers=1))
    streamed = screen_layers(
        layers, ruleset, options=RunOptions(chunk_size=83, workers=2, stream=True)
    )
    assert streamed.plan.n_chunks == 7
    assert rows_equal(whole.rows, streamed.rows)
    rows = whole.rows
    assert (rows["wetland_sqft"] > 0).sum() > 15
    assert (rows["vehicle_siting_sqft"] > 0).sum() > 150
    assert (rows["zones"].str.contains(";")).sum() > 5


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, gis_sw.batch.api.BatchRun]:
    folder = tmp_path_factory.mktemp("stream")
    manifest = _write_town(folder / "town", 400, seed=3)
    gis_sw.screen_town(manifest, folder / "whole", chunk_size=10_000, workers=1)
    streamed = gis_sw.screen_town(manifest, folder / "streamed", chunk_size=90, stream=True)
    return folder / "whole", folder / "streamed", streamed


def test_streamed_outputs_equal_whole_outputs(runs) -> None:
    whole, streamed, run = runs
    assert run.streamed
    assert run.chunks == 5
    assert run.parcels == 400
    a = gpd.read_parquet(whole / "parcels.parquet")
    b = gpd.read_parquet(streamed / "parcels.parquet")
    # chunk order on disk (along the Hilbert curve), the same rows sorted by `row`
    assert not b["row"].is_monotonic_increasing
    b = b.sort_values("row").reset_index(drop=True)
    pd.testing.assert_frame_equal(
        pd.DataFrame(a).drop(columns="geometry"), pd.DataFrame(b).drop(columns="geometry")
    )
    assert list(shapely.to_wkb(a.geometry)) == list(shapely.to_wkb(b.geometry))
    assert a.crs == b.crs
    for name in ("summary.csv", "problems.csv"):
        assert (whole / name).read_bytes() == (streamed / name).read_bytes(), name
    ga = gpd.read_file(whole / "parcels.gpkg")
    gb = gpd.read_file(streamed / "parcels.gpkg").sort_values("row").reset_index(drop=True)
    pd.testing.assert_frame_equal(
        pd.DataFrame(ga).drop(columns="geometry"), pd.DataFrame(gb).drop(columns="geometry")
    )
    assert (streamed / "overview.png").stat().st_size > 10_000
    # the spill folder is gone
    assert not list(streamed.glob(".gis-sw-spill-*"))


def test_streamed_resume_finishes_the_same_run(runs, tmp_path: Path) -> None:
    whole, streamed, _ = runs
    manifest = streamed.parent / "town" / "layers.toml"
    again = gis_sw.screen_town(
        manifest, streamed, chunk_size=90, stream=True, resume=True, overwrite=True
    )
    assert again.chunks_run == 0  # every part was sound and kept
    a = gpd.read_parquet(whole / "parcels.parquet")
    b = gpd.read_parquet(streamed / "parcels.parquet").sort_values("row")
    assert a["vehicle_siting_sqft"].tolist() == b["vehicle_siting_sqft"].tolist()


def test_stream_with_proposals_is_one_clear_error(tmp_path: Path) -> None:
    proposals = tmp_path / "p.gpkg"
    proposals.write_bytes(b"")
    with pytest.raises(GisSwError, match="stream screens the parcels only"):
        gis_sw.screen_town(
            tmp_path / "layers.toml", tmp_path / "out", proposals=proposals, stream=True
        )


def test_screen_town_is_public_and_lazy() -> None:
    assert "screen_town" in gis_sw.__all__
    from gis_sw.batch.api import screen_town

    assert gis_sw.screen_town is screen_town
    assert screen_town.__doc__
    assert "Parameters" in screen_town.__doc__
