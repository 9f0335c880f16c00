"""``make bench``'s batch rows (issue 16): goals at each threshold and 0.01 either side.

The benchmark scripts are not a package: they are loaded from ``benchmarks/`` by path (with
``benchmarks/`` on ``sys.path``, as when they run).  No benchmark is run here: rows are
built from given times and outputs shaped like ``gis-sw batch --profile``'s, the
``parcels.parquet`` comparison reads two small files written by the test, and
:func:`bench_batch.measure` runs a few-line child that allocates a known amount.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest
from support import load_bench

batch = load_bench("bench_batch")
peers = load_bench("bench_peers")

PROFILE = (
    "screened 100000 parcels in 20 chunks (20 run now) in 12.6 s "
    "(7,937 parcels/s; read 1.4 s, screen 8.5 s, write 2.7 s)\n"
    "gis-sw: profile: import 0.55 s, plan 0.06 s, read 1.44 s, screen 8.45 s, "
    "write 2.70 s, total 13.20 s\n"
)


def _ran(seconds: float, peak_mb: float = 900.0, output: str = PROFILE) -> object:
    return batch.Measured(seconds, 18.9, peak_mb, output, 0)


@pytest.mark.parametrize(
    ("seconds", "floor", "met"),
    [
        (5.0, 2.5, True),  # exactly 5 s and exactly 2x the floor
        (5.01, 2.6, False),  # 0.01 s past 5 s, within 2x
        (4.99, 2.49, False),  # under 5 s, 0.01 s past 2x (2.004x)
        (4.98, 2.49, True),  # exactly 2x of a 2.49 s floor
        (4.0, float("nan"), False),  # no floor measured: never met
    ],
)
def test_county_goal_is_five_seconds_and_twice_the_floor(seconds, floor, met):
    row = batch.end_to_end_row(
        100_000, _ran(seconds), stream=False, quick=False, floor=floor, floor_stages="read 1 s"
    )
    assert (row["goal_id"], row["met"]) == ("county", met)
    assert row["goal"] == "<= 5 s and <= 2x the bare floor"
    assert row["table"] == "end to end"
    assert row["size"] == "100,000 parcels"
    assert row["seconds"] == seconds
    if math.isfinite(floor):
        assert (row["against"], row["against_seconds"]) == ("bare floor", floor)
    else:
        assert "against_seconds" not in row


def test_county_row_carries_the_stage_times_cpu_and_floor():
    row = batch.end_to_end_row(
        100_000,
        _ran(13.2),
        stream=False,
        quick=False,
        floor=3.15,
        floor_stages="read 0.41 s, index 0.45 s, screen 2.17 s, write 0.12 s",
    )
    assert row["note"] == (
        "import 0.55 s, plan 0.06 s, read 1.44 s, screen 8.45 s, write 2.70 s, total 13.20 s; "
        "CPU 18.9 s; floor: read 0.41 s, index 0.45 s, screen 2.17 s, write 0.12 s"
    )
    assert row["peak_mb"] == 900.0
    assert row["met"] is False
    best = batch.end_to_end_row(100_000, _ran(4.9), stream=False, quick=False, floor=2.5, runs=2)
    assert best["note"].endswith("CPU 18.9 s; best of 2; no floor measured")
    assert best["met"] is True  # 4.9 s, under 2x the 2.5 s floor (its stages not given)


def test_stage_text_falls_back_to_the_summary_line():
    line = PROFILE.splitlines()[0]
    assert batch.stage_text(line) == "read 1.4 s, screen 8.5 s, write 2.7 s"
    assert batch.stage_text("nothing useful") == ""


@pytest.mark.parametrize(("seconds", "met"), [(60.0, True), (60.01, False), (59.99, True)])
def test_million_goal_is_a_minute(seconds, met):
    row = batch.end_to_end_row(1_000_000, _ran(seconds, 3786.0), stream=False, quick=False)
    assert (row["goal_id"], row["goal"], row["met"]) == ("million", "<= 60 s", met)
    assert row["peak_mb"] == 3786.0


@pytest.mark.parametrize(
    ("peak_mb", "met"), [(8192.0, True), (8192.01, False), (8191.99, True), (float("nan"), False)]
)
def test_state_goal_is_eight_gigabytes_of_peak(peak_mb, met):
    row = batch.end_to_end_row(5_000_000, _ran(627.0, peak_mb), stream=True, quick=True)
    assert (row["goal_id"], row["met"]) == ("state", met)
    assert row["goal"] == "peak <= 8,192 MB (8 GB)"
    assert row["what"] == "gis-sw batch --stream --quick --no-gpkg"
    assert row["table"] == "streamed"
    assert row["note"].endswith(
        "; --quick --no-gpkg: no siting, no parcels.gpkg; "
        "run by every full make bench, last (report.py --no-state leaves it out)"
    )


def test_sizes_without_a_goal_give_no_verdict():
    row = batch.end_to_end_row(10_000, _ran(1.0), stream=False, quick=False, floor=0.7)
    assert "met" not in row
    assert "goal" not in row
    assert batch.goal_of(1_000_000, stream=True) is None
    assert batch.goal_of(5_000_000, stream=False) is None


def test_a_failed_run_is_a_row_that_is_not_met():
    failed = batch.Measured(3.0, 2.0, 500.0, "Traceback\nMemoryError: out of memory\n", 1)
    row = batch.end_to_end_row(5_000_000, failed, stream=True, quick=True)
    assert row["met"] is False
    assert row["note"].startswith("failed: exit 1: Traceback / MemoryError: out of memory")
    no_goal = batch.end_to_end_row(2_000, failed, stream=False, quick=False)
    assert "met" not in no_goal
    assert no_goal["note"].startswith("failed: exit 1")


def test_measure_reads_the_childs_peak_memory_and_exit(tmp_path):
    script = tmp_path / "eat.py"
    script.write_text(
        "import sys\nblock = bytearray(60 * 2**20)\nblock[::4096] = b'x' * len(block[::4096])\n"
        "print('ate', len(block))\nsys.exit(int(sys.argv[1]))\n",
        encoding="utf-8",
    )
    got = batch.measure([sys.executable, str(script), "0"])
    assert got.returncode == 0
    assert got.failed == ""
    assert got.peak_mb >= 60.0
    assert f"ate {60 * 2**20}" in got.output
    assert got.seconds > 0
    bad = batch.measure([sys.executable, str(script), "3"])
    assert bad.returncode == 3
    assert bad.failed == f"exit 3: ate {60 * 2**20}"
    with pytest.raises(RuntimeError, match="failed"):
        batch.run_measured([sys.executable, str(script), "3"])


def test_measure_counts_forked_workers_memory(tmp_path):
    script = tmp_path / "workers.py"
    script.write_text(
        "import os, time\n"
        "pids = []\n"
        "for _ in range(2):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        block = bytearray(80 * 2**20)\n"
        "        block[::4096] = b'x' * len(block[::4096])\n"
        "        time.sleep(1.5)\n"
        "        os._exit(0)\n"
        "    pids.append(pid)\n"
        "for pid in pids:\n"
        "    os.waitpid(pid, 0)\n",
        encoding="utf-8",
    )
    got = batch.measure([sys.executable, str(script)], interval=0.1)
    assert got.returncode == 0
    assert got.processes == 3
    assert got.peak_mb >= 160.0  # two workers of 80 MB each: more than either alone
    row = batch.end_to_end_row(2_000, got, stream=False, quick=False)
    assert "peak: summed PSS of up to 3 processes" in row["note"]


@pytest.mark.parametrize(
    ("dask_s", "same", "met"),
    [
        (11.0, "identical parcels.parquet", True),  # exactly 1.1x
        (11.01, "identical parcels.parquet", False),  # 0.01 s past 1.1x
        (9.0, "parcels.parquet DIFFER in zones", False),  # faster but wrong: not met
    ],
)
def test_dask_goal_is_within_a_tenth_and_identical(dask_s, same, met):
    row = batch.dask_row("dask", 100_000, [dask_s + 1.0, dask_s], [10.0, 10.5], same)
    assert (row["seconds"], row["against_seconds"], row["met"]) == (dask_s, 10.0, met)
    assert row["goal"] == "within 1.1x of local, identical parcels.parquet"
    assert row["note"].startswith(f"{same}; {dask_s / 10.0:.2f}x; best of 2 runs each")


def test_dask_without_runs_is_failed():
    row = batch.dask_row("dask", 100_000, [], [10.0], "exit 1: no distributed")
    assert row["met"] is False
    assert row["note"] == "failed: exit 1: no distributed"
    assert "seconds" not in row


def test_compare_parquet_names_the_columns_that_differ(tmp_path):
    frame = pd.DataFrame(
        {
            "parcel_id": ["P1", "P2", "P3"],
            "zones": ["R-10", "R-20;R-10", "CB"],
            "area_sqft": np.array([5000.0, 12000.25, 800.5]),
        }
    )
    a, b, c = (tmp_path / f"{k}.parquet" for k in "abc")
    frame.to_parquet(a)
    frame.to_parquet(b)
    frame.assign(area_sqft=[5000.0, 12000.26, 800.5]).to_parquet(c)
    assert batch.compare_parquet(a, b) == "identical parcels.parquet"
    assert batch.compare_parquet(a, c) == "parcels.parquet DIFFER in area_sqft"
    frame.iloc[:2].to_parquet(c)
    assert batch.compare_parquet(a, c) == "parcels.parquet DIFFER (3 x 3 against 2 x 3)"
    assert batch.compare_parquet(a, tmp_path / "gone.parquet").startswith("no parcels.parquet")


def _figures(**changes: object) -> pd.DataFrame:
    base = {
        "zones": ["R-10", "R-10;R-20", None],
        "low_zone_area_sqft": [5000.0, 2500.5, 0.0],
        "wetland_sqft": [0.0, 120.25, 0.0],
        "water_body_sqft": [0.0, 0.0, 40.0],
        "floodplain_sqft": [10.0, 0.0, 0.0],
        "wells_near": [0, 1, 2],
        "septic_fields_near": [1, 0, 0],
    }
    return pd.DataFrame({**base, **changes}, index=pd.Index([0, 1, 2], name="row"))


@pytest.mark.parametrize(
    ("wetland", "same"),
    [
        ([0.0, 120.26, 0.0], "identical"),  # 0.01 sq ft apart: within the tolerance
        ([0.0, 120.27, 0.0], "DIFFER wetland_sqft: 1"),  # 0.02 sq ft apart
    ],
)
def test_peer_figures_are_compared_to_a_hundredth_of_a_square_foot(wetland, same):
    assert peers.compare(_figures(), _figures(wetland_sqft=wetland)) == same


def test_peer_counts_and_zones_must_match_exactly():
    got = peers.compare(_figures(), _figures(wells_near=[0, 1, 3], zones=["R-10", "R-20", None]))
    assert got == "DIFFER zones: 1, wells_near: 1"


def test_peer_figure_missing_on_one_side_or_a_missing_row_differs():
    got = peers.compare(_figures(), _figures(floodplain_sqft=[10.0, float("nan"), 0.0]))
    assert got == "DIFFER floodplain_sqft: 1"
    both = [float("nan"), 0.0, 0.0]
    assert peers.compare(_figures(floodplain_sqft=both), _figures(floodplain_sqft=both)) == (
        "identical"
    )
    short = _figures().iloc[:2]
    assert peers.compare(_figures(), short) == "DIFFER rows missing: 1"
    assert peers.compare(_figures(), short, sampled=True) == "identical"  # the loop's sample
    assert peers.compare(short, _figures()) == "DIFFER rows not in ours: 1"


def test_peer_row_meets_its_goal_only_with_identical_figures():
    info = {"seconds": 20.0, "parcels": 100_000, "peak_mb": 1500.0}
    row = peers.peer_row("duckdb", 100_000, info, "identical", ours_rate=25_000.0)
    assert (row["goal_id"], row["met"], row["what"]) == ("peer-duckdb", True, "DuckDB spatial")
    assert (row["seconds"], row["against_seconds"]) == (20.0, 4.0)
    assert row["goal"] == "figures identical to ours"
    wrong = peers.peer_row("postgis", 100_000, info, "DIFFER zones: 3", ours_rate=25_000.0)
    assert (wrong["met"], wrong["note"]) == (False, "figures vs ours: DIFFER zones: 3")
    failed = peers.peer_row("postgis", 100_000, None, "exit 1: no initdb", ours_rate=0.0)
    assert (failed["met"], failed["note"], failed["size"]) == (
        False,
        "failed: exit 1: no initdb",
        "100,000 parcels",
    )
    assert "seconds" not in failed
