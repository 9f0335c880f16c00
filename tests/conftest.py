"""Shared fixtures: the default ruleset and small builders of layers and proposals."""

from __future__ import annotations

import threading
import time

import pytest

from gis_sw.ruleset import Ruleset, load_ruleset


@pytest.fixture(scope="session")
def ruleset() -> Ruleset:
    return load_ruleset()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests that start dask.distributed in this process last.

    A client of the test's own (and its in-process cluster) can leave threads behind
    (``Dask-Offload``, ``IO loop``; the batch ends the first after its own runs,
    ``dask_engine.release_offload_thread``), and the batch forks worker processes only in
    a process with one thread: tests of the forked paths that came after would see
    threads and the fallback, not the fork.
    """
    late = [item for item in items if item.get_closest_marker("dask_in_process")]
    if late:
        kept = [item for item in items if not item.get_closest_marker("dask_in_process")]
        items[:] = kept + late


@pytest.fixture
def single_threaded() -> None:
    """Wait for the threads earlier tests left (a daemon id check finishing) to end.

    The batch forks worker processes only in a process with one thread: a test of a
    forked path must start with one.  A thread still running after 10 s fails the test,
    named, instead of sending the run down the thread fallback unseen.
    """
    deadline = time.monotonic() + 10.0
    while threading.active_count() > 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if others:
        pytest.fail(f"threads left running by earlier tests: {others} (forking needs one)")
