"""The screen stage around the chunks: work order, parts read back, the early fingerprint.

Issue 16 (overhead): the costliest chunks go first (the workers end together), each part is
read back as soon as it is written (not all at the end), and the layers are hashed beside
the chunk plan.  None of it may change a figure or what ``--resume`` refuses.  The town is
synthetic (900 parcels, chunks of 150), made in the test.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.fingerprint import layer_hash, layer_hashes_of, run_fingerprint
from gis_sw.batch.resume import PartStore, part_name
from gis_sw.batch.run import (
    Parallel,
    RunOptions,
    ScreenResult,
    context_index,
    costliest_first,
    memory_source,
    plan_for,
    rows_equal,
    screen_layers,
)
from gis_sw.batch.run_store import run_chunks_to_store
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.errors import OutputError
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

CHUNK = 150
N_PARCELS = 900
N_CHUNKS = N_PARCELS // CHUNK


@pytest.fixture(scope="module")
def town() -> LayerSet:
    return synthetic_town(N_PARCELS, seed=5)


@pytest.fixture(scope="module")
def one_thread(town: LayerSet, ruleset: Ruleset) -> pd.DataFrame:
    return screen_layers(town, ruleset, options=RunOptions(chunk_size=CHUNK, workers=1)).rows


def _dense_town(town: LayerSet, ruleset: Ruleset, chunk_id: int) -> LayerSet:
    """The town with one more wetland of 8,001 coordinates on a parcel of chunk ``chunk_id``."""
    prepared, plan = plan_for(town, ruleset, chunk_size=CHUNK)
    row = int(plan.rows(chunk_id)[len(plan.rows(chunk_id)) // 2])
    centre = shapely.centroid(prepared.parcels.geometry.iloc[row])
    blob = shapely.buffer(centre, 30.0, quad_segs=2000)  # 8,001 coordinates
    wetlands = town.vectors["wetlands"]
    extra = gpd.GeoDataFrame(
        {c: [wetlands[c].iloc[0]] for c in wetlands.columns if c != wetlands.geometry.name},
        geometry=[blob],
        crs=wetlands.crs,
    )
    grown = pd.concat([wetlands, extra], ignore_index=True)
    return dataclasses.replace(town, vectors={**town.vectors, "wetlands": grown})


def _source(layers: LayerSet, ruleset: Ruleset) -> ChunkSource:
    prepared, plan = plan_for(layers, ruleset, chunk_size=CHUNK)
    return memory_source(layers, prepared, plan, RunOptions(chunk_size=CHUNK))


def test_chunk_costs_count_the_coordinates_of_parcels_and_halo_features(
    town: LayerSet, ruleset: Ruleset
) -> None:
    source = _source(town, ruleset)
    plan = source.plan
    expected = np.zeros(plan.n_chunks)
    parcels = np.asarray(source.parcels.geometry.to_numpy(), dtype=object)
    for i in range(plan.n_chunks):
        expected[i] = shapely.get_num_coordinates(parcels[plan.rows(i)]).sum()
        box = shapely.box(*plan.bounds[i])
        for frame in source._layers.values():
            geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)
            meets = shapely.intersects(shapely.envelope(geoms), box)
            expected[i] += shapely.get_num_coordinates(geoms[meets]).sum()
    assert source.costs().tolist() == expected.tolist()
    assert (expected > 5 * CHUNK).all()  # every chunk has parcels and halo features


def test_the_chunks_a_8000_vertex_wetland_reaches_are_screened_first(
    town: LayerSet, ruleset: Ruleset
) -> None:
    before = _source(town, ruleset)
    plain = before.costs()
    dense = _dense_town(town, ruleset, 4)
    source = _source(dense, ruleset)
    costs = source.costs()
    # the new wetland's pieces (big polygons are cut, SUBDIVIDE_MAX_VERTICES) come last
    pieces = np.asarray(source._layers["wetlands"].geometry.to_numpy(), dtype=object)
    pieces = pieces[len(before._layers["wetlands"]) :]
    assert shapely.get_num_coordinates(pieces).sum() > 8001
    added = np.array(
        [
            shapely.get_num_coordinates(
                pieces[shapely.intersects(shapely.envelope(pieces), shapely.box(*box))]
            ).sum()
            for box in source.plan.bounds
        ]
    )
    assert (costs - plain).tolist() == added.tolist()
    reached = np.flatnonzero(added > 0).tolist()
    assert 4 in reached
    assert len(reached) < N_CHUNKS
    assert added[reached].min() > plain.max() - plain.min()  # more than chunks differed
    order = costliest_first(source, list(range(N_CHUNKS)))
    assert sorted(order[: len(reached)]) == reached
    assert sorted(order) == list(range(N_CHUNKS))
    ranked = costs[order]
    assert (ranked[:-1] >= ranked[1:]).all()
    # only the chunks still to do are ordered, ties in plan order
    assert costliest_first(source, [5, 1]) == sorted([5, 1], key=lambda i: (-costs[i], i))
    assert costliest_first(source, [2, 2 + 1]) == sorted([2, 3], key=lambda i: (-costs[i], i))


def test_order_of_the_work_changes_no_figure(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame
) -> None:
    for parallel in (Parallel.PROCESSES, Parallel.THREADS):
        options = RunOptions(chunk_size=CHUNK, workers=2, parallel=parallel)
        rows = screen_layers(town, ruleset, options=options).rows
        assert rows_equal(one_thread, rows), parallel
    # the figures are not trivial, so equality means something
    assert (one_thread["wetland_sqft"] > 0).sum() > 20
    assert (one_thread["roof_siting_sqft"] > 0).sum() > 500


def _run(layers: LayerSet, ruleset: Ruleset, out: Path, *, resume: bool = False) -> ScreenResult:
    return run_chunks_to_store(
        layers,
        ruleset,
        out,
        options=RunOptions(chunk_size=CHUNK, workers=2),
        resume=resume,
        overwrite=False,
    )


def test_parts_read_back_during_the_run_equal_every_part_read_at_the_end(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = _run(town, ruleset, out)
    assert result.chunks_run == N_CHUNKS
    store = PartStore.in_output(out)
    from_disk = store.read_all(N_CHUNKS, result.plan.rows)  # every part read now
    pd.testing.assert_frame_equal(result.rows, from_disk, check_exact=True)
    assert rows_equal(one_thread, result.rows)
    assert result.rows["row"].tolist() == list(range(N_PARCELS))

    # a killed run: parts 2 to 5 never written; the resume reads 0 and 1 at the end
    for chunk_id in range(2, N_CHUNKS):
        (store.folder / part_name(chunk_id)).unlink()
    journal = store.journal_path.read_text(encoding="utf-8").splitlines()
    kept = [line for line in journal if json.loads(line)["chunk"] < 2]
    store.journal_path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    resumed = _run(town, ruleset, out, resume=True)
    assert resumed.chunks_run == N_CHUNKS - 2
    pd.testing.assert_frame_equal(resumed.rows, from_disk, check_exact=True)


def test_a_part_changed_after_it_was_read_back_is_refused_at_the_end(
    town: LayerSet, ruleset: Ruleset, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = _run(town, ruleset, out)
    store = PartStore.in_output(out)
    path = store.folder / part_name(1)
    own = store.read_part(1, result.plan.rows)
    swapped = pd.read_parquet(store.folder / part_name(0))
    swapped.to_parquet(path, index=False)  # chunk 0's rows in chunk 1's part
    with pytest.raises(OutputError, match=r"chunk-000001\.parquet changed while the run"):
        store.read_part(1, result.plan.rows)
    (store.folder / part_name(2)).unlink()
    with pytest.raises(OutputError, match=r"chunk-000002\.parquet is missing"):
        store.read_all(N_CHUNKS, result.plan.rows, read={1: own})  # 0 read, 1 given


def test_the_manifest_is_the_fingerprint_of_the_layers_as_read(
    town: LayerSet, ruleset: Ruleset, tmp_path: Path
) -> None:
    result = _run(town, ruleset, tmp_path / "out")
    written = json.loads((tmp_path / "out" / "parts" / "manifest.json").read_text())
    plan = result.plan
    fresh = run_fingerprint(
        town,
        ruleset,
        files={},
        proposals=None,
        chunk_size=plan.chunk_size,
        quick=False,
        halo_ft=plan.halo_ft,
        chunks=plan.fingerprints,
    )
    assert {k: v for k, v in written.items() if k != "version"} == json.loads(json.dumps(fresh))
    assert layer_hashes_of(town) == {k: layer_hash(f) for k, f in town.vectors.items()}
    assert sorted(written["layers"]) == sorted(town.vectors)


@pytest.mark.parametrize("what", ["wetland vertex", "parcel id"])
def test_resume_refuses_a_layer_changed_since_the_run(
    town: LayerSet, ruleset: Ruleset, tmp_path: Path, what: str
) -> None:
    out = tmp_path / "out"
    _run(town, ruleset, out)
    if what == "wetland vertex":
        kind = "wetlands"
        frame = town.vectors[kind].copy()
        geoms = np.asarray(frame.geometry.to_numpy(), dtype=object).copy()
        geoms[0] = shapely.transform(
            geoms[0], lambda xy: xy + np.array([0.01, 0.0])
        )  # 0.01 ft east
        frame = frame.set_geometry(gpd.GeoSeries(geoms, index=frame.index, crs=frame.crs))
    else:
        kind = "parcels"
        frame = town.vectors[kind].copy()
        ids = frame["parcel_id"].astype(object).to_numpy().copy()
        ids[[3, 4]] = ids[[4, 3]]
        frame["parcel_id"] = ids
    changed = dataclasses.replace(town, vectors={**town.vectors, kind: frame})
    with pytest.raises(OutputError, match=rf"^{kind} changed since the interrupted run"):
        _run(changed, ruleset, out, resume=True)
    assert _run(town, ruleset, out, resume=True).chunks_run == 0  # the same run resumes


def test_a_source_from_the_early_context_index_gives_the_same_chunks(
    town: LayerSet, ruleset: Ruleset
) -> None:
    prepared, plan = plan_for(town, ruleset, chunk_size=CHUNK)
    options = RunOptions(chunk_size=CHUNK, workers=2)
    early = memory_source(town, prepared, plan, options, context_index(town, options))
    plain = memory_source(town, prepared, plan, options)
    assert early.present == plain.present
    assert "wetlands" in early.present
    assert early.costs().tolist() == plain.costs().tolist()
    for chunk_id in range(plan.n_chunks):
        a, b = early.chunk(chunk_id), plain.chunk(chunk_id)
        assert a.rows.tolist() == b.rows.tolist()
        for kind in sorted(plain.present):
            left, right = a.context[kind], b.context[kind]
            assert left.index.tolist() == right.index.tolist(), kind
            wkb = [
                shapely.to_wkb(np.asarray(f.geometry.to_numpy(), dtype=object))
                for f in (left, right)
            ]
            assert wkb[0].tolist() == wkb[1].tolist(), kind
