"""Forked worker processes screen chunks: the same rows as threads, errors surface, no hang."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from gis_sw.batch.children import fork_ready
from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.forked import run_forked
from gis_sw.batch.parcels import screen_chunk
from gis_sw.batch.run import (
    Parallel,
    RunOptions,
    memory_source,
    plan_for,
    rows_equal,
    screen_layers,
    uses_processes,
)
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")


@pytest.fixture(scope="module")
def town() -> LayerSet:
    return synthetic_town(900, seed=5)


@pytest.fixture(scope="module")
def one_thread(town: LayerSet, ruleset: Ruleset) -> pd.DataFrame:
    options = RunOptions(chunk_size=150, workers=1)
    return screen_layers(town, ruleset, options=options).rows


@pytest.fixture(scope="module")
def source(town: LayerSet, ruleset: Ruleset) -> ChunkSource:
    prepared, plan = plan_for(town, ruleset, chunk_size=150)
    return memory_source(town, prepared, plan, RunOptions(chunk_size=150))


def test_forked_chunks_run_in_two_other_processes_and_equal_one_thread(
    source: ChunkSource, ruleset: Ruleset, one_thread: pd.DataFrame
) -> None:
    def task(chunk_id: int) -> tuple[int, pd.DataFrame]:
        return os.getpid(), screen_chunk(source.chunk(chunk_id), ruleset)

    got: dict[int, tuple[int, pd.DataFrame]] = {}
    run_forked(task, list(range(source.plan.n_chunks)), got.__setitem__, workers=2)
    assert sorted(got) == list(range(6))  # 900 parcels in chunks of 150, each once
    pids = {pid for pid, _ in got.values()}
    assert len(pids) == 2
    assert os.getpid() not in pids
    rows = pd.concat([got[i][1] for i in sorted(got)], ignore_index=True)
    rows = rows.sort_values("row", kind="stable").reset_index(drop=True)
    assert rows["row"].tolist() == list(range(900))
    assert rows_equal(one_thread, rows)
    # the town exercises the figures, so equality means something
    assert (one_thread["wetland_sqft"] > 0).sum() > 20
    assert (one_thread["roof_siting_sqft"] > 0).sum() > 500
    assert one_thread["zones"].str.contains(";").sum() > 10


def test_screen_layers_processes_threads_and_one_thread_agree(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame
) -> None:
    for parallel in (Parallel.PROCESSES, Parallel.THREADS):
        options = RunOptions(chunk_size=150, workers=2, parallel=parallel)
        result = screen_layers(town, ruleset, options=options)
        assert result.chunks_run == 6
        assert rows_equal(one_thread, result.rows), parallel


def test_streamed_chunks_in_forked_workers_equal_one_thread(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame, tmp_path: Path
) -> None:
    """Workers read their chunks from the spilled GeoParquet files after the fork."""
    options = RunOptions(chunk_size=150, workers=2, stream=True, spill_dir=tmp_path)
    assert uses_processes(options, 6) == fork_ready()
    streamed = screen_layers(town, ruleset, options=options).rows
    assert rows_equal(one_thread, streamed)


def test_progress_counts_every_chunk_once(town: LayerSet, ruleset: Ruleset) -> None:
    calls: list[int] = []
    options = RunOptions(chunk_size=150, workers=2)
    screen_layers(town, ruleset, options=options, done=[0, 4], progress=calls.append)
    assert calls[0] == 2  # the chunks already done, reported first
    assert calls[1:] == [1, 1, 1, 1]


def test_a_layer_error_in_a_worker_is_the_same_error_in_the_parent() -> None:
    problem = Problem("parcels", "parcel P-17 has an area of 0 sq ft", "redraw parcel P-17")

    def task(chunk_id: int) -> int:
        if chunk_id == 3:
            raise LayerError([problem])
        return chunk_id * 10

    finished: dict[int, int] = {}
    with pytest.raises(LayerError) as caught:
        run_forked(task, list(range(8)), finished.__setitem__, workers=2)
    assert (
        str(caught.value) == "parcels: parcel P-17 has an area of 0 sq ft Fix: redraw parcel P-17"
    )
    assert caught.value.problems == (problem,)
    assert "in task" in str(caught.value.__cause__)  # the worker's traceback
    assert all(value == key * 10 for key, value in finished.items())
    assert 3 not in finished


def test_a_worker_killed_mid_chunk_is_a_clear_error_not_a_hang() -> None:
    def task(chunk_id: int) -> int:
        if chunk_id == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return chunk_id

    with pytest.raises(GisSwError, match=r"killed by signal 9 while screening chunk 2 .*--resume"):
        run_forked(task, list(range(5)), lambda *_: None, workers=2)


def test_a_running_thread_makes_the_local_engine_use_threads(
    town: LayerSet, ruleset: Ruleset, one_thread: pd.DataFrame
) -> None:
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        assert not fork_ready()
        options = RunOptions(chunk_size=150, workers=2)
        assert not uses_processes(options, 6)
        rows = screen_layers(town, ruleset, options=options).rows
    finally:
        release.set()
        other.join()
    assert rows_equal(one_thread, rows)


def test_one_worker_or_threads_never_fork() -> None:
    assert not uses_processes(RunOptions(workers=1), 6)
    assert not uses_processes(RunOptions(workers=2, parallel=Parallel.THREADS), 6)
    assert not uses_processes(RunOptions(workers=2), 1)


def _fork_ready_in_a_pool_worker() -> bool:
    return fork_ready()


def test_a_daemonic_pool_worker_does_not_fork() -> None:
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(_fork_ready_in_a_pool_worker) is False


def test_a_worker_that_dies_between_chunks_is_a_clear_error() -> None:
    """The worker answers chunk 0, then dies (exit code 3) while on chunk 1."""

    def task(chunk_id: int) -> int:
        if chunk_id == 0:
            threading.Timer(0.05, os._exit, args=(3,)).start()
        else:
            threading.Event().wait(2.0)
        return chunk_id

    finished: dict[int, int] = {}
    with pytest.raises(GisSwError, match=r"ended with exit code 3 while screening chunk 1 "):
        run_forked(task, [0, 1, 2, 3], finished.__setitem__, workers=1)
    assert finished == {0: 0}
