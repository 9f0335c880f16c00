"""The screen's tail: once a worker has no chunk left, the parent imports the map module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gis_sw.batch.synthetic import write_synthetic_town
from gis_sw.batch.tail import TailWork


class _Plan:
    def __init__(self, n_chunks: int) -> None:
        self.n_chunks = n_chunks


def _tail(workers: int, log: list) -> TailWork:
    return TailWork(
        lambda: log.append("work"),
        workers=workers,
        progress=log.append,
        on_plan=lambda plan: log.append(("plan", plan.n_chunks)),
    )


def test_work_runs_once_when_the_first_worker_has_no_chunk_left() -> None:
    log: list = []
    tail = _tail(2, log)
    tail.on_plan(_Plan(5))  # type: ignore[arg-type]
    for _ in range(5):
        tail.progress(1)
    # 5 chunks on 2 workers: after the 3rd finishes the last one is handed out, and the
    # 4th to finish leaves its worker idle
    assert log == [("plan", 5), 1, 1, 1, 1, "work", 1]


def test_resumed_chunks_count_towards_the_tail() -> None:
    log: list = []
    tail = _tail(2, log)
    tail.on_plan(_Plan(6))  # type: ignore[arg-type]
    tail.progress(3)  # found done by a resume
    tail.progress(1)
    tail.progress(1)
    assert log == [("plan", 6), 3, 1, 1, "work"]


@pytest.mark.parametrize(("workers", "chunks"), [(1, 5), (2, 2)])
def test_no_work_without_an_idle_core_to_come(workers: int, chunks: int) -> None:
    log: list = []
    tail = _tail(workers, log)
    tail.on_plan(_Plan(chunks))  # type: ignore[arg-type]
    for _ in range(chunks):
        tail.progress(1)
    assert "work" not in log
    assert log.count(1) == chunks


def test_failing_work_changes_nothing_else() -> None:
    seen: list[int] = []

    def broken() -> None:
        raise ImportError("no matplotlib here")

    tail = TailWork(broken, workers=2, progress=seen.append, on_plan=None)
    tail.on_plan(_Plan(3))  # type: ignore[arg-type]
    for _ in range(3):
        tail.progress(1)
    assert seen == [1, 1, 1]


SCRIPT = """
import sys
from gis_sw.batch.api import screen_town
seen = []
run = screen_town(sys.argv[1], out=sys.argv[2], workers=2, chunk_size=100,
                  progress=lambda k: seen.append("gis_sw.outputs.maps.overview" in sys.modules))
print(len(seen), seen.index(True) if True in seen else -1, sorted(run.written))
"""


def test_a_batch_imports_the_map_module_during_its_last_chunks(tmp_path: Path) -> None:
    manifest = write_synthetic_town(tmp_path / "town", 600, seed=16)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(manifest), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    calls, first, written = done.stdout.split(" ", 2)
    n = int(calls)
    assert n >= 3  # one progress call per chunk
    # not imported before the tail; imported by the time the last chunk is reported
    # (the call that finds the first idle worker reports first, then imports)
    assert int(first) == n - 1
    assert "overview.png" in written
