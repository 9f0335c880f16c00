"""The chunk source is built while the layers are hashed: same rows, same errors.

:func:`gis_sw.batch.run_store.run_chunks_to_store` builds the in-memory chunk source on a
thread while it fingerprints the layers and opens the part store.  The rows must equal a
plain :func:`screen_layers` run, and a part store in the way must still stop the run with
its ``--overwrite`` error (the source build is waited for, never left running).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gis_sw.batch.run import (
    Engine,
    RunOptions,
    rows_equal,
    screen_layers,
    streams,
)
from gis_sw.batch.run_store import run_chunks_to_store
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.errors import OutputError
from gis_sw.ruleset import Ruleset


def test_store_run_equals_plain_run(ruleset: Ruleset, tmp_path: Path) -> None:
    layers = synthetic_town(500, seed=13)
    options = RunOptions(chunk_size=120, workers=2, quick=True)
    plain = screen_layers(
        layers, ruleset, options=RunOptions(chunk_size=500, workers=1, quick=True)
    )
    stored = run_chunks_to_store(
        layers, ruleset, tmp_path / "out", options=options, resume=False, overwrite=False
    )
    assert stored.plan.n_chunks == 5
    assert stored.chunks_run == 5
    assert len(stored.rows) == 500
    assert rows_equal(stored.rows, plain.rows)


def test_parts_in_the_way_still_stop_the_run(ruleset: Ruleset, tmp_path: Path) -> None:
    layers = synthetic_town(200, seed=13)
    options = RunOptions(chunk_size=100, workers=2, quick=True)
    out = tmp_path / "out"
    run_chunks_to_store(layers, ruleset, out, options=options, resume=False, overwrite=False)
    with pytest.raises(OutputError, match="--overwrite"):
        run_chunks_to_store(layers, ruleset, out, options=options, resume=False, overwrite=False)


def test_streamed_runs_build_no_memory_source() -> None:
    assert streams(RunOptions(stream=True))
    assert streams(RunOptions(engine=Engine.DASK, scheduler="tcp://127.0.0.1:8786"))
    assert not streams(RunOptions(engine=Engine.DASK))
    assert not streams(RunOptions())
