"""Issue 16, the local Dask cluster: scheduler first, forked workers later, no memory limit."""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from dask.distributed import LocalCluster, default_client
from support import live_children

from gis_sw.batch import dask_engine
from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.run import Engine, RunOptions, memory_source, plan_for, rows_equal, screen_layers
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")
pytestmark = pytest.mark.dask_in_process  # run last (tests/conftest.py)


@pytest.fixture(scope="module")
def town() -> LayerSet:
    return synthetic_town(400, seed=16)


@pytest.fixture(scope="module")
def source(town: LayerSet, ruleset: Ruleset) -> ChunkSource:
    prepared, plan = plan_for(town, ruleset, chunk_size=100)
    return memory_source(town, prepared, plan, RunOptions())


@pytest.fixture(scope="module")
def one_thread(town: LayerSet, ruleset: Ruleset) -> pd.DataFrame:
    return screen_layers(town, ruleset, options=RunOptions(chunk_size=100, workers=1)).rows


def _gone(before: set[int]) -> bool:
    deadline = time.monotonic() + 10
    while live_children() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    return live_children() - before == set()


def _view(token: str) -> tuple[int, int, float]:
    """What a worker sees of a registered source: its pid, parcels and their area."""
    parcels = dask_engine._IN_PROCESS[token].parcels
    return os.getpid(), len(parcels), float(parcels.geometry.area.sum())


def _stealing(dask_scheduler: object) -> bool:
    return "stealing" in dask_scheduler.extensions  # type: ignore[attr-defined]


def _scheduler_up() -> int:
    """Return the workers of the default client's scheduler (ValueError: no client yet)."""
    return len(default_client().scheduler_info(n_workers=-1)["workers"])


@linux
def test_the_scheduler_starts_before_the_source_and_forked_workers_inherit_it(
    source: ChunkSource,
) -> None:
    before = live_children()
    options = RunOptions(engine=Engine.DASK, workers=2)
    building: Future[ChunkSource] = Future()
    with ThreadPoolExecutor(max_workers=1) as pool:
        starting = pool.submit(dask_engine.start_local, building, options)
        deadline = time.monotonic() + 30
        workers_before = None
        while workers_before is None and time.monotonic() < deadline:
            try:
                workers_before = _scheduler_up()
            except ValueError:  # no client yet
                time.sleep(0.02)
        # the scheduler and its client are up, with no worker, before the source exists
        assert workers_before == 0
        assert not starting.done()
        assert live_children() - before == set()
        building.set_result(source)
        cluster = starting.result(timeout=60)
    try:
        client = cluster.client
        info = client.scheduler_info(n_workers=-1)["workers"]
        assert len(info) == 2
        assert all(w["nthreads"] == 1 for w in info.values())
        # no memory limit: a forked worker's size counts the pages it shares with us
        assert all(w["memory_limit"] == 0 for w in info.values())
        assert client.run_on_scheduler(_stealing) is False
        seen = client.run(_view, cluster.token)
        # forked by this process (no process in between, like the local engine's)
        assert {pid for pid, _, _ in seen.values()} <= live_children()
    finally:
        cluster.close()
    pids = {pid for pid, _, _ in seen.values()}
    assert len(pids) == 2
    assert os.getpid() not in pids
    area = float(source.parcels.geometry.area.sum())
    assert {(n, a) for _, n, a in seen.values()} == {(400, area)}
    assert dask_engine._IN_PROCESS == {}
    assert _gone(before)


@linux
def test_a_source_that_fails_to_build_closes_the_scheduler_and_starts_no_worker() -> None:
    before = live_children()
    building: Future[ChunkSource] = Future()
    error = LayerError(Problem("wetlands", "feature W-7 has no geometry", "redraw W-7"))
    with ThreadPoolExecutor(max_workers=1) as pool:
        starting = pool.submit(
            dask_engine.start_local, building, RunOptions(engine=Engine.DASK, workers=2)
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                _scheduler_up()
                break
            except ValueError:
                time.sleep(0.02)
        building.set_exception(error)
        with pytest.raises(LayerError) as raised:
            starting.result(timeout=60)
    assert raised.value is error
    assert str(raised.value) == "wetlands: feature W-7 has no geometry Fix: redraw W-7"
    assert dask_engine._IN_PROCESS == {}
    with pytest.raises(ValueError, match="No clients found"):
        default_client()
    assert _gone(before)


@linux
def test_the_local_cluster_screens_the_one_thread_rows(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame
) -> None:
    got = screen_layers(
        town, ruleset, options=RunOptions(chunk_size=100, workers=2, engine=Engine.DASK)
    )
    assert got.chunks_run == 4
    assert rows_equal(one_thread, got.rows)
    assert (one_thread["roof_siting_sqft"] > 0).sum() > 150
    assert dask_engine._IN_PROCESS == {}


def test_a_running_scheduler_keeps_its_own_settings_and_gets_the_one_thread_rows(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame, tmp_path: Path
) -> None:
    # a cluster started apart, as a real one runs: our local cluster's settings are not
    # applied to it (work stealing on, memory limits kept)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        options = RunOptions(
            chunk_size=100,
            workers=2,
            engine=Engine.DASK,
            scheduler=cluster.scheduler_address,
            spill_dir=tmp_path,
        )
        got = screen_layers(town, ruleset, options=options)
        assert _stealing(cluster.scheduler) is True
        assert all(w.memory_manager.memory_limit for w in cluster.workers.values())
    assert rows_equal(one_thread, got.rows)


@linux
def test_two_runs_at_once_print_no_port_warning(source: ChunkSource) -> None:
    import socket
    import warnings

    held = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        held.bind(("127.0.0.1", 8787))  # as an earlier run (or a real dashboard) would
        held.listen()
    except OSError:  # taken already: the same situation
        pass
    building: Future[ChunkSource] = Future()
    building.set_result(source)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cluster = dask_engine.start_local(building, RunOptions(engine=Engine.DASK, workers=1))
        try:
            http = cluster.local.scheduler.services["dashboard"]
            assert http.address == "127.0.0.1"
            assert http.port not in {0, 8787}
            assert len(cluster.client.scheduler_info(n_workers=-1)["workers"]) == 1
        finally:
            cluster.close()
    finally:
        held.close()
    assert [str(w.message) for w in caught if "already in use" in str(w.message)] == []
