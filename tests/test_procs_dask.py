"""``--engine dask`` on one machine: forked worker processes that inherit the chunk source."""

from __future__ import annotations

import os
import pickle
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from support import live_children

from gis_sw.batch import dask_engine
from gis_sw.batch.run import Engine, RunOptions, memory_source, plan_for, rows_equal, screen_layers
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")
pytestmark = pytest.mark.dask_in_process  # run last (tests/conftest.py)


@pytest.fixture(scope="module")
def town() -> LayerSet:
    return synthetic_town(700, seed=9)


@pytest.fixture(scope="module")
def one_thread(town: LayerSet, ruleset: Ruleset) -> pd.DataFrame:
    return screen_layers(town, ruleset, options=RunOptions(chunk_size=175, workers=1)).rows


def _worker_view(token: str) -> tuple[int, int, float]:
    """What a worker sees of a registered source: its pid, parcels and their area."""
    source = dask_engine._IN_PROCESS[token]
    parcels = source.parcels
    return os.getpid(), len(parcels), float(parcels.geometry.area.sum())


def _raise_layer_error() -> None:
    raise LayerError(Problem("wetlands", "feature W-3 has no geometry", "drop or redraw W-3"))


@linux
def test_local_cluster_workers_are_forked_processes_inheriting_the_source(
    town: LayerSet, ruleset: Ruleset
) -> None:
    prepared, plan = plan_for(town, ruleset, chunk_size=175)
    source = memory_source(town, prepared, plan, RunOptions())
    dask_engine._IN_PROCESS["test-token"] = source
    try:
        client, cluster = dask_engine._client(RunOptions(engine=Engine.DASK, workers=2))
        try:
            workers = client.scheduler_info()["workers"]
            assert len(workers) == 2
            assert all(info["nthreads"] == 1 for info in workers.values())
            seen = client.run(_worker_view, "test-token")
            error = client.submit(_raise_layer_error, pure=False).exception()
        finally:
            client.close()
            cluster.close()
    finally:
        dask_engine._IN_PROCESS.pop("test-token")
    pids = {pid for pid, _, _ in seen.values()}
    assert len(pids) == 2
    assert os.getpid() not in pids
    area = float(source.parcels.geometry.area.sum())
    assert {(n, a) for _, n, a in seen.values()} == {(700, area)}
    # a worker's LayerError arrives with its message and problems unchanged
    assert isinstance(error, LayerError)
    assert str(error) == "wetlands: feature W-3 has no geometry Fix: drop or redraw W-3"


def test_layer_error_pickles_with_the_same_message_and_problems() -> None:
    problems = [Problem("parcels", "P-1 is empty", "redraw P-1"), Problem("zoning", "no CRS")]
    error = LayerError(problems)
    again = pickle.loads(pickle.dumps(error))  # our own bytes
    assert type(again) is LayerError
    assert again.problems == tuple(problems)
    assert str(again) == "parcels: P-1 is empty Fix: redraw P-1; zoning: no CRS"


def test_dask_whole_and_streamed_equal_one_thread(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame, tmp_path: Path
) -> None:
    whole = screen_layers(
        town, ruleset, options=RunOptions(chunk_size=175, workers=2, engine=Engine.DASK)
    )
    assert whole.chunks_run == 4
    assert rows_equal(one_thread, whole.rows)
    streamed = screen_layers(
        town,
        ruleset,
        options=RunOptions(
            chunk_size=175, workers=2, engine=Engine.DASK, stream=True, spill_dir=tmp_path
        ),
    )
    assert rows_equal(one_thread, streamed.rows)
    assert (one_thread["roof_siting_sqft"] > 0).sum() > 300
    assert (one_thread["wetland_sqft"] > 0).sum() > 10


@pytest.fixture(scope="module")
def town_gpkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gis_sw.batch.synthetic import synthetic_frames

    path = tmp_path_factory.mktemp("town") / "town.gpkg"
    for kind, layer in synthetic_frames(800, seed=4).items():
        layer.to_file(path, layer=kind, driver="GPKG", engine="pyogrio")
    return path


@linux
def test_screen_town_on_dask_writes_the_local_bytes_and_a_refused_run_leaves_no_cluster(
    town_gpkg: Path, tmp_path: Path
) -> None:
    from gis_sw.batch.api import screen_town
    from gis_sw.errors import OutputError

    def run_on(out: Path, engine: str, *, chunk_size: int = 200, resume: bool = False) -> int:
        done = screen_town(
            town_gpkg,
            out,
            engine=engine,
            chunk_size=chunk_size,
            workers=2,
            resume=resume,
            gpkg=False,
            overview=False,
        )
        return done.chunks_run

    run_on(tmp_path / "local", "local")
    assert run_on(tmp_path / "dask", "dask") == 4
    for name in ("parcels.parquet", "summary.csv", "problems.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    before = live_children()
    # a resume of a different run is refused after the cluster was started meanwhile
    with pytest.raises(OutputError, match="different run"):
        run_on(tmp_path / "dask", "dask", chunk_size=300, resume=True)
    assert dask_engine._IN_PROCESS == {}
    deadline = time.monotonic() + 10
    while live_children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_children() - before == set()
