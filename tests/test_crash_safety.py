"""SIGKILL ``gis-sw check`` and ``gis-sw batch`` at several points; outputs stay whole.

* A complete earlier output is never left corrupt or partial: after a kill, every output
  file reads back and equals the earlier run's (or a whole new run's, which is the same);
  leftovers are only hidden temporary files (``.name.*.tmp.suffix``), never a file with an
  output's name.
* ``gis-sw batch --resume`` after kills at several points gives results identical to an
  uninterrupted run.

Kill points are drawn from a seeded random generator: some at a random fraction of a full
run's time, some just after a temporary output file appears (mid-write).
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pypdf
import pytest
from corpus import write_town

from gis_sw.batch.run import rows_equal
from gis_sw.batch.synthetic import synthetic_frames

EXE = Path(sys.executable).with_name("gis-sw")
CHECK_FILES = (
    "findings.geojson",
    "findings_lines.geojson",
    "findings_points.geojson",
    "findings.gpkg",
    "summary.csv",
)
pytestmark = pytest.mark.skipif(not EXE.exists(), reason="gis-sw console script not installed")


def command(*args: str) -> list[str]:
    return [str(EXE), *args]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), capture_output=True, text=True, check=False, timeout=300)


def kill_when(
    args: list[str], ready: Callable[[], bool], *, delay_s: float, deadline_s: float = 120
) -> int | None:
    """Start a run, wait until ``ready()`` then ``delay_s``, SIGKILL it; its exit code if it
    finished first (None when killed)."""
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + deadline_s
    while time.monotonic() < end and proc.poll() is None and not ready():
        time.sleep(0.002)
    time.sleep(delay_s)
    if proc.poll() is not None:
        return proc.returncode
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return None


def temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(".*") if ".tmp" in p.name]


def read_output(path: Path) -> object:
    """What an output says, independent of timestamps inside a GeoPackage."""
    if path.suffix == ".gpkg":
        layers = []
        for name, _ in pyogrio.list_layers(path):
            frame = pyogrio.read_dataframe(path, layer=name)
            if isinstance(frame, gpd.GeoDataFrame):
                geoms = list(frame.geometry.to_wkb())
                frame = pd.DataFrame(frame.drop(columns=frame.geometry.name))
            else:
                geoms = []
            layers.append((name, frame.to_json(), geoms))
        return layers
    if path.suffix == ".xlsx":  # zip entries carry the second they were written
        from openpyxl import load_workbook

        book = load_workbook(path)
        return [
            [list(row) for row in book[name].iter_rows(values_only=True)]
            for name in book.sheetnames
        ]
    if path.name == "report.pdf":  # merged by pypdf, whose trailer /ID changes run to run
        return [page.extract_text() for page in pypdf.PdfReader(path).pages]
    if path.suffix == ".pdf":  # the same sheet, whatever second it was drawn in
        return re.sub(rb"/CreationDate \(D:\d+Z?\)", b"", path.read_bytes())
    return path.read_bytes()


def output_names(out: Path) -> list[str]:
    """Every output of a run, an application's folder as ``<folder>/<file>``."""
    names = []
    for path in out.iterdir():
        if path.name.startswith("."):
            continue
        if path.is_dir():
            names += [f"{path.name}/{p.name}" for p in path.iterdir() if not p.name.startswith(".")]
        else:
            names.append(path.name)
    return sorted(names)


def assert_outputs_whole(out: Path, expected: dict[str, object]) -> None:
    names = output_names(out)
    assert names == sorted(expected), names
    for name, content in expected.items():
        assert read_output(out / name) == content, name
    for tmp in temporaries(out):
        assert tmp.name.startswith("."), tmp


def test_check_killed_keeps_earlier_output(tmp_path: Path) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    args = ["check", str(inputs.proposals), "--layers", str(inputs.layers), "--out", str(out)]
    started = time.monotonic()
    first = run(*args)
    full_s = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    names = set(output_names(out))
    assert set(CHECK_FILES) <= names, names  # and the maps, web map and calculation sheet
    assert {"P-1/P-1.pdf", "P-1/report.pdf", "webmap.html", "calcsheet.csv"} <= names, names
    expected = {name: read_output(out / name) for name in sorted(names)}
    rng = random.Random(9)
    again = command(*args, "--overwrite")
    killed = 0
    # at random fractions of a run, then twice just after a temporary output appears
    for fraction in sorted(rng.uniform(0.1, 0.5) for _ in range(3)):
        if kill_when(again, lambda: True, delay_s=fraction * full_s) is None:
            killed += 1
        assert_outputs_whole(out, expected)
    for _ in range(2):
        code = kill_when(again, lambda: bool(temporaries(out)), delay_s=rng.uniform(0, 0.01))
        killed += code is None
        assert_outputs_whole(out, expected)
    assert killed >= 3
    final = run(*args, "--overwrite")
    assert final.returncode == 0, final.stderr
    assert_outputs_whole(out, expected)


@pytest.fixture(scope="module")
def town_gpkg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crash_town") / "town.gpkg"
    for kind, layer in synthetic_frames(400, seed=11).items():
        layer.to_file(path, layer=kind, driver="GPKG", engine="pyogrio")
    return path


def batch_args(town: Path, out: Path, *extra: str) -> list[str]:
    return [
        "batch",
        "--layers",
        str(town),
        "--out",
        str(out),
        "--chunk-size",
        "40",
        "--workers",
        "1",
        "--no-map",
        *extra,
    ]


def batch_result(out: Path) -> tuple[pd.DataFrame, gpd.GeoSeries, pd.DataFrame]:
    parcels = gpd.read_parquet(out / "parcels.parquet")
    summary = pd.read_csv(out / "summary.csv")
    return parcels.drop(columns="geometry"), parcels.geometry, summary


def assert_same_batch(left: Path, right: Path) -> None:
    rows_a, geoms_a, summary_a = batch_result(left)
    rows_b, geoms_b, summary_b = batch_result(right)
    assert len(rows_b) == 400
    assert rows_b["row"].is_unique
    assert rows_equal(rows_a, rows_b)
    assert geoms_a.geom_equals_exact(geoms_b, tolerance=0).all()
    pd.testing.assert_frame_equal(summary_a, summary_b)
    gpkg_a = pyogrio.read_dataframe(left / "parcels.gpkg").drop(columns="geometry")
    gpkg_b = pyogrio.read_dataframe(right / "parcels.gpkg").drop(columns="geometry")
    pd.testing.assert_frame_equal(gpkg_a, gpkg_b)


def test_batch_resume_after_kills_equals_uninterrupted(town_gpkg: Path, tmp_path: Path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    done = run(*batch_args(town_gpkg, whole))
    assert done.returncode == 0, done.stderr
    parts = killed / "parts"

    def parts_done(n: int) -> Callable[[], bool]:
        return lambda: len(list(parts.glob("chunk-*.parquet"))) >= n

    rng = random.Random(5)
    first = kill_when(
        command(*batch_args(town_gpkg, killed)), parts_done(rng.randint(1, 4)), delay_s=0
    )
    assert first is None, "the run finished before it could be killed"
    counts = [len(list(parts.glob("chunk-*.parquet")))]
    assert not (killed / "parcels.parquet").exists()
    # killed again while resuming, at a later chunk, then while writing the outputs
    resume = command(*batch_args(town_gpkg, killed, "--resume"))
    kill_when(resume, parts_done(counts[0] + rng.randint(1, 3)), delay_s=rng.uniform(0, 0.05))
    counts.append(len(list(parts.glob("chunk-*.parquet"))))
    kill_when(resume, lambda: bool(temporaries(killed)), delay_s=rng.uniform(0, 0.02))
    for tmp in temporaries(killed):
        assert tmp.name.startswith(".")
    assert counts[0] < 10
    final = run(*batch_args(town_gpkg, killed, "--resume"))
    assert final.returncode == 0, final.stderr
    assert not temporaries(parts)
    assert_same_batch(whole, killed)


def test_batch_killed_keeps_earlier_output(town_gpkg: Path, tmp_path: Path) -> None:
    whole, out = tmp_path / "whole", tmp_path / "out"
    for folder in (whole, out):
        done = run(*batch_args(town_gpkg, folder))
        assert done.returncode == 0, done.stderr
    again = command(*batch_args(town_gpkg, out, "--overwrite"))
    rng = random.Random(3)
    for ready in (
        (out / "parts" / "chunk-000003.parquet").exists,
        lambda: bool([p for p in temporaries(out) if p.parent == out]),
    ):
        kill_when(again, ready, delay_s=rng.uniform(0, 0.02))
        assert_same_batch(whole, out)


def test_output_group_renames_all_or_none(tmp_path: Path) -> None:
    from gis_sw.outputs.atomic import output_group, write_text_atomic

    old = {"a.csv": "old a\n", "b.csv": "old b\n"}
    for name, text in old.items():
        (tmp_path / name).write_text(text, encoding="utf-8")

    def fail_after_two() -> None:
        with output_group():
            write_text_atomic(tmp_path / "a.csv", "new a\n")
            assert (tmp_path / "a.csv").read_text(encoding="utf-8") == "old a\n"  # not yet
            write_text_atomic(tmp_path / "b.csv", "new b\n")
            print(1 / len(""))

    with pytest.raises(ZeroDivisionError):
        fail_after_two()
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == old
    with output_group():
        write_text_atomic(tmp_path / "a.csv", "new a\n")
        write_text_atomic(tmp_path / "b.csv", "new b\n")
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == {
        "a.csv": "new a\n",
        "b.csv": "new b\n",
    }
