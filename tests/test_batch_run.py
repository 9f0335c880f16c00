"""Batch runs on a town: chunked equals one piece, Dask equals local, resume after SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
from click.testing import CliRunner

from gis_sw.batch.parcels import RESULT_COLUMNS
from gis_sw.batch.run import Engine, RunOptions, rows_equal, screen_layers
from gis_sw.batch.synthetic import synthetic_frames, synthetic_town
from gis_sw.cli import cli
from gis_sw.ruleset import Ruleset

GIS_SW = Path(sys.executable).with_name("gis-sw")


@pytest.fixture(scope="module")
def town_rows(ruleset: Ruleset) -> pd.DataFrame:
    layers = synthetic_town(1500, seed=7)
    return screen_layers(layers, ruleset, options=RunOptions(chunk_size=10_000, workers=1)).rows


def test_chunked_equals_one_piece(ruleset: Ruleset, town_rows: pd.DataFrame) -> None:
    layers = synthetic_town(1500, seed=7)
    chunked = screen_layers(layers, ruleset, options=RunOptions(chunk_size=97, workers=2))
    assert chunked.plan.n_chunks == 16
    assert len(chunked.rows) == 1500
    assert chunked.rows["row"].tolist() == list(range(1500))
    assert rows_equal(town_rows, chunked.rows)
    # the town exercises every figure, so the comparison means something
    assert (town_rows["wetland_sqft"] > 0).sum() > 50
    assert (town_rows["zones"].str.contains(";")).sum() > 20
    assert (town_rows["wells_near"] > 0).sum() > 100
    assert set(town_rows["screen"]) >= {"clear", "constraints", "mostly_constrained"}


@pytest.mark.dask_in_process  # run last (tests/conftest.py)
def test_dask_equals_local(ruleset: Ruleset, town_rows: pd.DataFrame) -> None:
    layers = synthetic_town(1500, seed=7)
    options = RunOptions(chunk_size=400, workers=2, engine=Engine.DASK)
    on_dask = screen_layers(layers, ruleset, options=options)
    assert on_dask.plan.n_chunks == 4
    assert rows_equal(town_rows, on_dask.rows)


@pytest.mark.dask_in_process  # run last (tests/conftest.py)
def test_dask_scheduler_with_process_workers_equals_local(ruleset: Ruleset) -> None:
    """Chunks and the ruleset cross a process boundary (pickled) and give the same rows."""
    from dask.distributed import LocalCluster

    layers = synthetic_town(300, seed=11)
    local = screen_layers(layers, ruleset, options=RunOptions(chunk_size=100, workers=1))
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        options = RunOptions(
            chunk_size=100, workers=1, engine=Engine.DASK, scheduler=cluster.scheduler_address
        )
        remote = screen_layers(layers, ruleset, options=options)
    assert remote.plan.n_chunks == 3
    assert rows_equal(local.rows, remote.rows)


SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def test_sample_town_chunked_equals_one_piece(ruleset: Ruleset) -> None:
    from gis_sw.layers.read import read_layers

    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    whole = screen_layers(layers, ruleset, options=RunOptions(chunk_size=100_000, workers=1))
    chunked = screen_layers(layers, ruleset, options=RunOptions(chunk_size=25, workers=2))
    assert chunked.plan.n_chunks == -(-len(whole.rows) // 25)
    assert rows_equal(whole.rows, chunked.rows)
    assert (whole.rows["wetland_sqft"] > 0).sum() > 0
    assert (whole.rows["low_zone_area_sqft"] > 0).sum() > 0


def test_cli_with_proposals_on_the_sample_town(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            "batch",
            "--layers",
            str(SAMPLE / "layers.toml"),
            "--proposals",
            str(SAMPLE / "proposals.gpkg"),
            "--out",
            str(out),
            "--no-map",
            "--no-gpkg",
        ],
    )
    assert result.exit_code == 0, result.output
    findings = gpd.read_parquet(out / "findings.parquet")
    named = set(pd.read_csv(SAMPLE / "expected.csv")["proposal_id"])
    assert set(findings["proposal_id"]) == named  # every sample proposal
    assert len(named) == 21
    for name in ("findings.gpkg", "findings.geojson"):
        assert (out / name).exists()
    summary = pd.read_csv(out / "summary.csv")
    by_table = summary.groupby("table")["count"].sum()
    assert by_table["findings"] == len(findings)
    assert by_table["parcels"] == len(gpd.read_parquet(out / "parcels.parquet"))


@pytest.fixture(scope="module")
def town_gpkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("town") / "town.gpkg"
    for kind, layer in synthetic_frames(2000, seed=3).items():
        layer.to_file(path, layer=kind, driver="GPKG", engine="pyogrio")
    return path


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GIS_SW), "batch", *args], capture_output=True, text=True, check=False, timeout=300
    )


def test_cli_writes_every_output(town_gpkg: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        ["batch", "--layers", str(town_gpkg), "--out", str(out), "--chunk-size", "500"],
    )
    assert result.exit_code == 0, result.output
    parcels = gpd.read_parquet(out / "parcels.parquet")
    assert len(parcels) == 2000
    assert list(parcels.columns) == [*RESULT_COLUMNS, "geometry"]
    assert parcels.crs.to_epsg() == 2260
    gpkg = gpd.read_file(out / "parcels.gpkg", engine="pyogrio")
    assert gpkg["parcel_id"].tolist() == parcels["parcel_id"].tolist()
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns) == ["table", "zone", "outcome", "screen", "count"]
    assert summary["count"].sum() == 2000
    manifest = json.loads((out / "parts" / "manifest.json").read_text())
    assert len(manifest["chunks"]) == 4
    again = CliRunner().invoke(cli, ["batch", "--layers", str(town_gpkg), "--out", str(out)])
    assert again.exit_code == 2
    assert "--overwrite" in again.output
    other = CliRunner().invoke(
        cli,
        ["batch", "--layers", str(town_gpkg), "--out", str(out), "--chunk-size", "700", "--resume"],
    )
    assert other.exit_code == 2
    assert "different run" in other.output


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def test_resume_after_sigkill(town_gpkg: Path, tmp_path: Path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    args = ["--layers", str(town_gpkg), "--chunk-size", "100", "--workers", "1", "--no-map"]
    done = run_cli(*args, "--out", str(whole))
    assert done.returncode == 0, done.stderr
    proc = subprocess.Popen(
        [str(GIS_SW), "batch", *args, "--out", str(killed)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    parts = killed / "parts"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(parts.glob("chunk-*.parquet"))) < 3:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(list(parts.glob("chunk-*.parquet")))
    assert 3 <= finished < 20, finished
    # a part whose file was written but whose record the kill cut off is recomputed
    log = parts / "parts.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    recorded = sum(1 for line in lines if _is_json(line))
    assert finished - 1 <= recorded <= finished, (recorded, finished)
    assert not (killed / "parcels.parquet").exists()
    resumed = run_cli(*args, "--out", str(killed), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"({20 - recorded} run now)" in resumed.stderr
    assert resumed.stderr.count(": recomputed") == finished - recorded
    expected = gpd.read_parquet(whole / "parcels.parquet")
    got = gpd.read_parquet(killed / "parcels.parquet")
    assert len(got) == 2000
    assert got["row"].is_unique
    assert rows_equal(expected.drop(columns="geometry"), got.drop(columns="geometry"))
    assert expected.geometry.geom_equals_exact(got.geometry, tolerance=0).all()


def test_cli_reports_duplicate_ids_and_repairs_invalid_geometry(tmp_path: Path) -> None:
    from shapely.geometry import Polygon

    frames = synthetic_frames(200, seed=1)
    parcels = frames["parcels"]
    x0, y0 = parcels.geometry[5].bounds[:2]
    bowtie = Polygon([(x0, y0), (x0 + 50, y0 + 50), (x0 + 50, y0), (x0, y0 + 50)])
    parcels.loc[5, "geometry"] = bowtie
    source = tmp_path / "town.gpkg"
    for kind, layer in frames.items():
        layer.to_file(source, layer=kind, driver="GPKG", engine="pyogrio")
    # invalid geometry alone: repaired and screened
    ok = CliRunner().invoke(
        cli, ["batch", "--layers", str(source), "--out", str(tmp_path / "ok"), "--no-map"]
    )
    assert ok.exit_code == 0, ok.output
    rows = gpd.read_parquet(tmp_path / "ok" / "parcels.parquet").set_index("parcel_id")
    assert rows.loc["P0000005", "area_sqft"] == 1250.00  # two triangles of the bow-tie
    # a duplicate id as well: one readable line naming it, exit 2, nothing half written
    parcels.loc[3, "parcel_id"] = parcels.loc[4, "parcel_id"]
    source.unlink()
    for kind, layer in frames.items():
        layer.to_file(source, layer=kind, driver="GPKG", engine="pyogrio")
    bad = CliRunner().invoke(
        cli, ["batch", "--layers", str(source), "--out", str(tmp_path / "bad")]
    )
    assert bad.exit_code == 2
    assert "duplicate parcel_id: 'P0000004'" in bad.output
    assert "Traceback" not in bad.output
    assert not (tmp_path / "bad" / "parcels.parquet").exists()


def test_reading_only_the_batch_layers_gives_the_same_rows(ruleset: Ruleset) -> None:
    from gis_sw.batch.inputs import BATCH_KINDS, read_town

    every = read_town(SAMPLE / "layers.toml", ruleset=ruleset, everything=True)
    some = read_town(SAMPLE / "layers.toml", ruleset=ruleset, everything=False)
    assert set(some.vectors) == set(BATCH_KINDS)
    assert set(every.vectors) > set(some.vectors)
    assert every.rasters
    assert not some.rasters
    rows_every = screen_layers(every, ruleset).rows
    rows_some = screen_layers(some, ruleset).rows
    assert rows_equal(rows_every, rows_some)
