"""``gis-sw sample --format parquet`` writes the town by blocks: the same town as built whole.

The streamed GeoParquet files must hold the rows (ids, attributes, WKB), order, schema, CRS
and GeoParquet ``geo`` metadata that :func:`gis_sw.sample.write.write_town` writes for the
town built whole by :func:`gis_sw.sample.build_town`; only the row groups differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import rasterio
import shapely
from click.testing import CliRunner

from gis_sw.cli import cli
from gis_sw.errors import OutputError
from gis_sw.sample import build_town, generate_town
from gis_sw.sample.cases import build_cases
from gis_sw.sample.layout import BAND_CYCLE, RNG_BUILDINGS, band_parcel_count, plan_layout
from gis_sw.sample.stream import lot_blocks, stream_town
from gis_sw.sample.town import HOUSE_DRAWS, LAYER_ORDER, LOT_LAYERS, WATER_LAYERS, _house_draws
from gis_sw.sample.write import RASTER_FILES, write_proposals, write_town

SEED = 16


def _whole(out: Path, parcels: int) -> None:
    """The town built whole in memory and written as today (the reference)."""
    town = build_town(parcels=parcels, seed=SEED)
    command = f"gis-sw sample --out DIR --parcels {parcels} --seed {SEED} --format parquet"
    write_town(town, out, fmt="parquet", overwrite=True, command=command)
    write_proposals(build_cases(town), out, overwrite=True)


@pytest.mark.parametrize("parcels", [2520, 4321])
def test_streamed_town_is_the_town_built_whole(tmp_path: Path, parcels: int) -> None:
    # 2,520 parcels are exactly three cycles of seven block columns; 4,321 end part-way
    # through the fourth cycle's band, so the last block is short
    whole, streamed = tmp_path / "whole", tmp_path / "streamed"
    _whole(whole, parcels)
    command = f"gis-sw sample --out DIR --parcels {parcels} --seed {SEED} --format parquet"
    summary = stream_town(
        streamed, parcels=parcels, seed=SEED, block_lots=1, command=command
    )  # one band cycle per block
    plan = plan_layout(parcels=parcels)
    blocks = list(lot_blocks(plan, 1))
    assert len(blocks) >= 3
    for kind in LAYER_ORDER:
        a = pq.read_table(whole / f"{kind}.parquet")
        b = pq.read_table(streamed / f"{kind}.parquet")
        assert a.schema.equals(b.schema, check_metadata=True), kind
        assert a.equals(b), kind
        assert summary.features[kind] == a.num_rows
    for kind in ("parcels", "land_cover"):  # really written by blocks
        assert pq.ParquetFile(streamed / f"{kind}.parquet").num_row_groups == len(blocks), kind
    for kind in (*LOT_LAYERS, *WATER_LAYERS):  # one row group per block holding any
        assert pq.ParquetFile(streamed / f"{kind}.parquet").num_row_groups >= 3, kind
    for name in ("layers.toml", "expected.csv", "proposals.gpkg"):
        assert (whole / name).read_bytes() == (streamed / name).read_bytes(), name
    for name in RASTER_FILES.values():
        with rasterio.open(whole / name) as a, rasterio.open(streamed / name) as b:
            assert np.array_equal(a.read(1), b.read(1), equal_nan=True), name
            assert a.transform == b.transform
    assert summary.parcels == parcels
    assert not [p.name for p in streamed.iterdir() if p.name.startswith(".")]  # no spill left


def test_streamed_geo_metadata_covers_every_block(tmp_path: Path) -> None:
    town = build_town(parcels=4321, seed=SEED)
    stream_town(tmp_path, parcels=4321, seed=SEED, block_lots=1, proposals=False)
    for kind in LOT_LAYERS:
        geo = json.loads(pq.read_schema(tmp_path / f"{kind}.parquet").metadata[b"geo"])
        column = geo["columns"]["geometry"]
        expected = shapely.total_bounds(town.vectors[kind].geometry.values)
        assert column["bbox"] == pytest.approx(list(expected), abs=0.0), kind
        assert column["crs"]["id"] == {"authority": "EPSG", "code": 2260}
        assert column["encoding"] == "WKB"
    lots = town.layout.lots
    geo = json.loads(pq.read_schema(tmp_path / "parcels.parquet").metadata[b"geo"])
    assert geo["columns"]["geometry"]["bbox"] == [
        lots["x0"].min(), lots["y0"].min(), lots["x1"].max(), lots["y1"].max()
    ]  # fmt: skip
    assert geo["columns"]["geometry"]["geometry_types"] == ["Polygon"]


def test_block_draws_are_the_whole_towns_draws() -> None:
    total, seed = 1_000, 5
    rng = np.random.default_rng([seed, RNG_BUILDINGS])
    sequential = {name: rng.random(total) for name in HOUSE_DRAWS}
    for start, count in ((0, 1_000), (0, 1), (337, 401), (999, 1)):
        block = _house_draws(seed, total, start, count)
        for name in HOUSE_DRAWS:
            assert np.array_equal(block[name], sequential[name][start : start + count]), name


def test_blocks_are_whole_cycles_covering_every_band_once() -> None:
    plan = plan_layout(parcels=250_000)
    per_cycle = sum(band_parcel_count(spec, plan.columns) for spec in BAND_CYCLE)
    blocks = list(lot_blocks(plan, 100_000))
    bands = [b for block in blocks for b in block]
    assert bands == list(range(len(plan.bands)))
    assert all(len(block) % len(BAND_CYCLE) == 0 for block in blocks[:-1])
    lots = [int(plan.bands["lots"].iloc[block.start : block.stop].sum()) for block in blocks]
    assert sum(lots) == 250_000
    assert max(lots) <= 100_000
    assert min(lots[:-1]) > 100_000 - per_cycle


def test_existing_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "wells.parquet").write_bytes(b"mine")
    with pytest.raises(OutputError, match=r"wells\.parquet"):
        stream_town(tmp_path, parcels=400, seed=SEED)
    assert (tmp_path / "wells.parquet").read_bytes() == b"mine"
    assert [p.name for p in tmp_path.iterdir()] == ["wells.parquet"]


@pytest.mark.parametrize("fmt", ["gpkg", "parquet"])
def test_small_town_declares_its_empty_layers_none(tmp_path: Path, fmt: str) -> None:
    summary = generate_town(tmp_path, parcels=60, seed=SEED, fmt=fmt, command="test")
    manifest = (tmp_path / "layers.toml").read_text()
    assert summary.features["wells"] == 0
    assert summary.features["parcels"] == 60
    assert "[wells]\nnone = true\n" in manifest
    assert "[septic_fields]\nnone = true\n" in manifest
    assert "[parcels]\nnone" not in manifest


def test_cli_reports_the_streamed_town(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["sample", "--out", str(tmp_path), "--parcels", "500", "--format", "parquet"]
    )
    assert result.exit_code == 0, result.output
    assert "sample town: 500 parcels, seed 183" in result.output
    assert pq.read_metadata(tmp_path / "parcels.parquet").num_rows == 500
