"""Shared fixtures: the default ruleset and small builders of layers and proposals."""

from __future__ import annotations

import pytest

from gis_sw.ruleset import Ruleset, load_ruleset


@pytest.fixture(scope="session")
def ruleset() -> Ruleset:
    return load_ruleset()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the tests that start dask.distributed in this process last.

    A client leaves threads behind for good (its ``Dask-Offload`` executor), and the batch
    forks worker processes only in a process with one thread: tests of the forked paths
    that came after would see threads and the fallback, not the fork.
    """
    late = [item for item in items if item.get_closest_marker("dask_in_process")]
    if late:
        kept = [item for item in items if not item.get_closest_marker("dask_in_process")]
        items[:] = kept + late
