"""Forked workers: one with no chunk left leaves at once, while the others finish.

Issue 16 (overhead): the run's tail.  A worker that gets no next chunk is told to stop
when its last rows come back, so its exit (unmapping the copy of the town it touched)
overlaps the other workers' last chunks instead of following them.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from gis_sw.batch.forked import run_forked

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only"),
    pytest.mark.usefixtures("single_threaded"),  # forks need one thread
]

WAIT_SECONDS = 20.0


def _state(pid: int) -> str:
    """The Linux process state letter of ``pid`` ('Z' exited, not yet reaped; '' gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text.rsplit(")", 1)[1].split()[0]


def _siblings() -> list[int]:
    """The other children of this worker's parent (the other workers)."""
    parent = os.getppid()
    found: list[int] = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return [pid for pid in found if pid != os.getpid()]


def test_a_worker_without_a_next_chunk_leaves_before_the_others_finish() -> None:
    if not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").exists():
        pytest.skip("this kernel does not list a process's children in /proc")

    def task(chunk_id: int) -> tuple[int, str]:
        if chunk_id != 0:
            return chunk_id, "fast"
        # chunk 0 waits until the other worker, which screened chunk 1 and got nothing
        # more, has exited
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            others = _siblings()
            if others and all(_state(pid) in ("Z", "X", "") for pid in others):
                return chunk_id, "other worker gone"
            time.sleep(0.02)
        return chunk_id, f"other worker still running: {[_state(p) for p in _siblings()]}"

    got: dict[int, tuple[int, str]] = {}
    run_forked(task, [0, 1], got.__setitem__, workers=2)
    assert got == {0: (0, "other worker gone"), 1: (1, "fast")}


def test_every_chunk_still_comes_back_once_when_workers_leave_early() -> None:
    def task(chunk_id: int) -> int:
        if chunk_id % 3 == 0:
            time.sleep(0.05)
        return chunk_id * chunk_id

    got: dict[int, int] = {}
    order: list[int] = []

    def finish(chunk_id: int, value: int) -> None:
        order.append(chunk_id)
        got[chunk_id] = value

    run_forked(task, list(range(9)), finish, workers=3)
    assert got == {i: i * i for i in range(9)}
    assert sorted(order) == list(range(9))
