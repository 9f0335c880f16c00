"""Layers spilled by chunk: each chunk reads one row group a layer, equal to the memory chunk."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import shapely

import gis_sw
from gis_sw.batch.chunks import CONTEXT_KINDS, Chunk, ChunkSource
from gis_sw.batch.run import plan_for
from gis_sw.batch.stream import Spiller, chunk_members, spill_by_chunk
from gis_sw.batch.stream_run import spill_layerset
from gis_sw.batch.synthetic import CRS, synthetic_frames, synthetic_town
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset


def _assert_same_chunk(a: Chunk, b: Chunk) -> None:
    """The memory chunk ``a`` and the disk chunk ``b``: same rows, columns, dtypes, WKB."""
    assert np.array_equal(a.rows, b.rows)
    assert a.present == b.present
    assert sorted(a.context) == sorted(b.context)
    pairs = [("parcels", a.parcels, b.parcels)]
    pairs += [(kind, a.context[kind], b.context[kind]) for kind in a.context]
    for kind, left, right in pairs:
        assert left.index.tolist() == right.index.tolist(), (a.chunk_id, kind)
        assert list(left.columns) == list(right.columns), kind
        assert left.dtypes.to_dict() == right.dtypes.to_dict(), kind
        assert left.crs == right.crs, kind
        pd.testing.assert_frame_equal(
            pd.DataFrame(left.drop(columns=left.geometry.name)).reset_index(drop=True),
            pd.DataFrame(right.drop(columns=right.geometry.name)).reset_index(drop=True),
        )
        assert list(shapely.to_wkb(left.geometry)) == list(shapely.to_wkb(right.geometry)), kind


def _town_with_odd_rows(n: int, seed: int) -> dict[str, gpd.GeoDataFrame]:
    """A generated town plus what real exports hold: null and empty geometries, a big polygon."""
    frames = synthetic_frames(n, seed=seed)
    wells = frames["wells"]
    odd = gpd.GeoDataFrame(
        {"well_id": ["WL-null", "WL-empty"]}, geometry=[None, shapely.Point()], crs=CRS
    )
    frames["wells"] = pd.concat([wells.iloc[:5], odd, wells.iloc[5:]], ignore_index=True)
    # a wetland of 2,000 vertices across the town: cut into pieces, each in several chunks
    x0, y0, x1, y1 = frames["parcels"].total_bounds
    ring = shapely.buffer(shapely.Point((x0 + x1) / 2, (y0 + y1) / 2), (x1 - x0) / 3, quad_segs=500)
    big = gpd.GeoDataFrame({"wetland_id": ["W-big"]}, geometry=[ring], crs=CRS)
    frames["wetlands"] = pd.concat([frames["wetlands"], big], ignore_index=True)
    return frames


def test_every_disk_chunk_equals_the_memory_chunk(ruleset: Ruleset, tmp_path: Path) -> None:
    layers = make_layerset(CRS, _town_with_odd_rows(600, seed=11), source="<test>")
    prepared, plan = plan_for(layers, ruleset, chunk_size=70)
    context = {kind: layers.get(kind) for kind in CONTEXT_KINDS}
    memory = ChunkSource(prepared.parcels, context, plan)
    disk = spill_layerset(layers, prepared, plan, tmp_path)
    assert plan.n_chunks == 9
    assert all(layer.by_chunk for layer in disk.layers.values())
    pieces = 0
    for i in range(plan.n_chunks):
        a, b = memory.chunk(i), disk.chunk(i)
        _assert_same_chunk(a, b)
        pieces += int((b.context["wetlands"]["wetland_id"] == "W-big").sum())
    assert pieces > plan.n_chunks  # the big wetland's pieces reach several chunks each
    # each row group holds exactly the chunk's features: nothing is read to be dropped
    for kind, layer in disk.layers.items():
        meta = pq.ParquetFile(layer.path).metadata
        assert meta.num_row_groups == plan.n_chunks
        sizes = [meta.row_group(i).num_rows for i in range(plan.n_chunks)]
        assert sizes == [len(memory.chunk(i).context[kind]) for i in range(plan.n_chunks)], kind


def test_a_layer_read_before_the_parcels_is_laid_out_by_chunk(
    ruleset: Ruleset, tmp_path: Path
) -> None:
    layers = synthetic_town(300, seed=4)
    prepared, plan = plan_for(layers, ruleset, chunk_size=60)
    spiller = Spiller(tmp_path, 60, plan.halo_ft, hash_layer=lambda _: "")
    spiller("wells", layers.vectors["wells"])  # a manifest listing wells first
    assert not spiller.spilled["wells"].by_chunk
    spiller("parcels", layers.vectors["parcels"])
    spiller("buildings", layers.vectors["buildings"])
    assert spiller.spilled["wells"].by_chunk
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "buildings.parquet",
        "parcels.parquet",
        "wells.parquet",
    ]
    disk = spiller.source(CONTEXT_KINDS, {})
    memory = ChunkSource(prepared.parcels, {k: layers.get(k) for k in ("wells", "buildings")}, plan)
    assert plan.n_chunks == 5
    for i in range(plan.n_chunks):
        _assert_same_chunk(memory.chunk(i), disk.chunk(i))


@pytest.mark.parametrize(
    ("offset_ft", "inside"),
    [(-0.01, True), (0.0, True), (0.01, False)],
    ids=["0.01-ft-inside-the-halo", "on-the-halo-edge", "0.01-ft-beyond-the-halo"],
)
def test_a_feature_at_the_halo_edge(
    ruleset: Ruleset, tmp_path: Path, offset_ft: float, inside: bool
) -> None:
    """A well whose point lies on the chunk's haloed envelope belongs to the chunk."""
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["A", "B"]},
        geometry=[shapely.box(0, 0, 100, 150), shapely.box(100, 0, 200, 150)],
        crs=CRS,
    )
    layers = make_layerset(CRS, {"parcels": parcels}, source="<test>")
    prepared, plan = plan_for(layers, ruleset, chunk_size=10)
    halo = plan.halo_ft
    assert plan.bounds[0].tolist() == [-halo, -halo, 200 + halo, 150 + halo]
    x = 200 + halo + offset_ft
    wells = gpd.GeoDataFrame(
        {"well_id": ["edge", "far"]},
        geometry=[shapely.Point(x, 75.0), shapely.Point(x + 500, 75.0)],
        crs=CRS,
    )
    members = chunk_members(np.asarray(wells.geometry.array), plan.bounds)
    assert members[0].tolist() == ([0] if inside else [])
    layer = spill_by_chunk(wells, tmp_path / "wells.parquet", plan)
    spiller = Spiller(tmp_path, 10, halo, hash_layer=lambda _: "")
    spiller.take_parcels(prepared, plan)
    spiller.spilled["wells"] = layer
    chunk = spiller.source(("wells",), {}).chunk(0)
    assert chunk.context["wells"]["well_id"].tolist() == (["edge"] if inside else [])
    memory = ChunkSource(prepared.parcels, {"wells": wells}, plan).chunk(0)
    assert memory.context["wells"]["well_id"].tolist() == (["edge"] if inside else [])


def test_chunks_of_parcels_without_geometry_read_no_context(
    ruleset: Ruleset, tmp_path: Path
) -> None:
    """Parcels with no geometry sort last; their chunk has no envelope and no neighbours."""
    frames = synthetic_frames(40, seed=2)
    parcels = frames["parcels"]
    nothing = gpd.GeoDataFrame(
        {"parcel_id": ["X1", "X2", "X3"]}, geometry=[None, None, shapely.Polygon()], crs=CRS
    )
    frames["parcels"] = pd.concat([parcels, nothing], ignore_index=True)
    layers = make_layerset(CRS, frames, source="<test>")
    prepared, plan = plan_for(layers, ruleset, chunk_size=20)
    assert plan.n_chunks == 3
    assert not np.isfinite(plan.bounds[2]).any()
    disk = spill_layerset(layers, prepared, plan, tmp_path)
    last = disk.chunk(2)
    assert last.parcels["parcel_id"].tolist() == ["X1", "X2", "X3"]
    assert all(len(frame) == 0 for frame in last.context.values())
    memory = ChunkSource(prepared.parcels, {k: layers.get(k) for k in CONTEXT_KINDS}, plan)
    for i in range(plan.n_chunks):
        _assert_same_chunk(memory.chunk(i), disk.chunk(i))


def _write_town(folder: Path, frames: dict[str, gpd.GeoDataFrame], order: list[str]) -> Path:
    """GeoParquet layers and a manifest listing them in ``order``, as `gis-sw sample` does."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[manifest]", 'name = "generated"', f'crs = "{CRS}"', ""]
    for kind in order:
        frames[kind].to_parquet(folder / f"{kind}.parquet")
        lines += [f"[{kind}]", f'path = "{kind}.parquet"', ""]
    (folder / "layers.toml").write_text("\n".join(lines), encoding="utf-8")
    return folder / "layers.toml"


def test_streamed_run_with_parcels_listed_last_equals_the_whole_run(tmp_path: Path) -> None:
    frames = synthetic_frames(350, seed=9)
    order = [k for k in frames if k != "parcels"] + ["parcels"]
    manifest = _write_town(tmp_path / "town", frames, order)
    whole = gis_sw.screen_town(manifest, tmp_path / "whole", chunk_size=10_000, workers=1)
    streamed = gis_sw.screen_town(
        manifest, tmp_path / "streamed", chunk_size=80, workers=1, stream=True, gpkg=False
    )
    assert whole.chunks == 1
    assert streamed.chunks == 5
    a = gpd.read_parquet(tmp_path / "whole" / "parcels.parquet")
    b = gpd.read_parquet(tmp_path / "streamed" / "parcels.parquet")
    b = b.sort_values("row").reset_index(drop=True)
    pd.testing.assert_frame_equal(
        pd.DataFrame(a).drop(columns="geometry"), pd.DataFrame(b).drop(columns="geometry")
    )
    assert list(shapely.to_wkb(a.geometry)) == list(shapely.to_wkb(b.geometry))
    assert (a["wetland_sqft"] > 0).sum() > 10
    assert (a["vehicle_siting_sqft"] > 0).sum() > 100
    for name in ("summary.csv", "problems.csv"):
        assert (tmp_path / "whole" / name).read_bytes() == (
            tmp_path / "streamed" / name
        ).read_bytes()


def test_threaded_spill_writes_the_same_files_and_hashes(tmp_path: Path) -> None:
    """Hashing beside the spill and cutting on two threads changes no byte."""
    from gis_sw.batch.fingerprint import layer_hash

    frames = _town_with_odd_rows(300, seed=6)
    spilled = {}
    for workers in (1, 2):
        folder = tmp_path / f"w{workers}"
        folder.mkdir()
        spiller = Spiller(folder, 50, 120.0, hash_layer=layer_hash, workers=workers)
        for kind in ("wetlands", "parcels", "wells", "buildings", "zoning"):
            spiller(kind, frames[kind])
        assert spiller.hashes == {k: layer_hash(frames[k]) for k in spiller.hashes}
        spilled[workers] = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(spilled[1]) == sorted(spilled[2])
    assert len(spilled[1]) == 5
    for name, data in spilled[1].items():
        assert data == spilled[2][name], name
