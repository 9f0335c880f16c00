"""Issue 16, the Dask row of bench_batch: wall and CPU ratios against --engine local."""

from __future__ import annotations

from support import load_bench

batch = load_bench("bench_batch")


def test_the_dask_row_gives_the_cpu_ratio_of_the_least_cpu_of_each() -> None:
    row = batch.dask_row(
        "dask",
        100_000,
        [13.2, 12.8],
        [11.9, 12.0],
        "identical parcels.parquet",
        [21.4, 20.1],
        [19.1, 19.3],
    )
    # wall: the best of each, 12.8 / 11.9 = 1.0756 (met); CPU: 20.1 / 19.1 = 1.0524
    assert (row["seconds"], row["against_seconds"], row["met"]) == (12.8, 11.9, True)
    assert row["note"] == (
        "identical parcels.parquet; 1.08x; best of 2 runs each, taking turns; "
        "CPU 20.1 s against 19.1 s, 1.05x"
    )


def test_the_dask_row_without_cpu_figures_has_no_cpu_note() -> None:
    row = batch.dask_row("dask", 100_000, [13.1], [11.9], "identical parcels.parquet")
    # 13.1 / 11.9 = 1.1008: 0.01 s past 1.1x, not met
    assert row["met"] is False
    assert row["note"] == "identical parcels.parquet; 1.10x; best of 1 runs each, taking turns"
