"""Issue 16: a Dask run leaves no thread behind, so the next local run still forks."""

from __future__ import annotations

import sys
import threading

import pandas as pd
import pytest
from dask.distributed import Client, LocalCluster

from gis_sw.batch import dask_engine
from gis_sw.batch.children import fork_ready
from gis_sw.batch.run import Engine, RunOptions, rows_equal, screen_layers, uses_processes
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")
pytestmark = pytest.mark.dask_in_process  # run last (tests/conftest.py)


@pytest.fixture(scope="module")
def town() -> LayerSet:
    return synthetic_town(300, seed=7)


def _others() -> list[str]:
    return [t.name for t in threading.enumerate() if t is not threading.main_thread()]


@linux
def test_after_a_dask_run_the_process_has_one_thread_and_the_local_engine_forks(
    town: LayerSet, ruleset: Ruleset
) -> None:
    on_dask = screen_layers(
        town, ruleset, options=RunOptions(engine=Engine.DASK, workers=2, chunk_size=100)
    ).rows
    assert _others() == []
    assert fork_ready()
    local = RunOptions(workers=2, chunk_size=100)
    assert uses_processes(local, 3)
    forked = screen_layers(town, ruleset, options=local).rows
    assert len(forked) == 300
    assert rows_equal(on_dask, forked)


@pytest.mark.parametrize("workers", [0, 1])
def test_a_client_of_the_users_keeps_the_thread_and_still_works(
    town: LayerSet, ruleset: Ruleset, workers: int
) -> None:
    # with no worker the user's client and scheduler alone must keep it
    cluster = LocalCluster(n_workers=workers, processes=False, dashboard_address=None)
    client = Client(cluster)
    try:
        screen_layers(town, ruleset, options=RunOptions(engine=Engine.DASK, workers=1))
        assert any(name.startswith("Dask-Offload") for name in _others())
        assert dask_engine.release_offload_thread() is False
        if workers:
            assert client.submit(pd.Series([2.5, 4.0]).sum).result() == 6.5
    finally:
        client.close()
        cluster.close()
    assert dask_engine.release_offload_thread() is True
    assert not any(name.startswith("Dask-Offload") for name in _others())
