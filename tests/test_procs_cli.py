"""``gis-sw batch --parallel``: processes and threads write the same bytes; kill and resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gis_sw.batch import run as batch_run
from gis_sw.batch.synthetic import synthetic_frames
from gis_sw.cli import batch, cli

GIS_SW = Path(sys.executable).with_name("gis-sw")
OUTPUTS = ("parcels.parquet", "summary.csv", "problems.csv")


def test_parallel_choices_are_the_engine_values() -> None:
    assert tuple(p.value for p in batch_run.Parallel) == batch.PARALLEL
    assert batch_run.RunOptions().parallel == batch_run.Parallel.PROCESSES
    shown = CliRunner().invoke(cli, ["batch", "--help"])
    assert shown.exit_code == 0
    text = " ".join(shown.output.split())
    assert "--parallel [processes|threads]" in text
    assert "forked with the layers inherited" in text


@pytest.fixture(scope="module")
def town_gpkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("town") / "town.gpkg"
    for kind, layer in synthetic_frames(2000, seed=3).items():
        layer.to_file(path, layer=kind, driver="GPKG", engine="pyogrio")
    return path


def _batch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GIS_SW), "batch", *args], capture_output=True, text=True, check=False, timeout=300
    )


def _workers_of(out: Path) -> list[int]:
    """Pids of live processes whose command line writes into ``out``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(out).encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork: Linux only")
def test_killed_process_run_leaves_no_workers_and_resumes_to_the_same_bytes(
    town_gpkg: Path, tmp_path: Path
) -> None:
    args = ["--layers", str(town_gpkg), "--chunk-size", "100", "--workers", "2", "--no-map"]
    threads, killed = tmp_path / "threads", tmp_path / "killed"
    done = _batch(*args, "--parallel", "threads", "--no-gpkg", "--out", str(threads))
    assert done.returncode == 0, done.stderr
    proc = subprocess.Popen(
        [str(GIS_SW), "batch", *args, "--no-gpkg", "--out", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    parts = killed / "parts"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(parts.glob("chunk-*.parquet"))) < 3:
        time.sleep(0.01)
    assert len(_workers_of(killed)) == 3  # the run and its two forked workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _workers_of(killed):
        time.sleep(0.05)
    assert _workers_of(killed) == []  # the workers died with their parent
    finished = len(list(parts.glob("chunk-*.parquet")))
    assert 3 <= finished < 20, finished
    resumed = _batch(*args, "--no-gpkg", "--out", str(killed), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "screened 2000 parcels in 20 chunks" in resumed.stderr
    for name in OUTPUTS:
        assert (killed / name).read_bytes() == (threads / name).read_bytes(), name


def test_processes_and_threads_write_identical_outputs(town_gpkg: Path, tmp_path: Path) -> None:
    import geopandas as gpd

    outs = {}
    for parallel in ("processes", "threads"):
        out = tmp_path / parallel
        outs[parallel] = out
        result = CliRunner().invoke(
            cli,
            [
                "batch",
                "--layers",
                str(town_gpkg),
                "--out",
                str(out),
                "--chunk-size",
                "400",
                "--parallel",
                parallel,
                "--no-map",
            ],
        )
        assert result.exit_code == 0, result.output
    for name in OUTPUTS:
        assert (outs["processes"] / name).read_bytes() == (outs["threads"] / name).read_bytes()
    gpkg = [gpd.read_file(outs[p] / "parcels.gpkg", engine="pyogrio") for p in outs]
    assert len(gpkg[0]) == 2000
    assert gpkg[0].drop(columns="geometry").equals(gpkg[1].drop(columns="geometry"))
    assert gpkg[0].geometry.geom_equals_exact(gpkg[1].geometry, tolerance=0).all()
