"""``gis-sw batch --resume`` continues only the same run, and never trusts a damaged part.

An interrupted run is made from a finished one by taking back what a kill would not have
written yet (the outputs, the later parts, the publishing mark): the same files a SIGKILL
after a few chunks leaves (tests/test_crash_safety.py kills real runs).  The town is
synthetic (100 parcels, 5 chunks, --quick) and written in the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from importlib import resources
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
from click.testing import CliRunner, Result

from gis_sw.batch.resume import PartStore
from gis_sw.batch.run import rows_equal
from gis_sw.batch.synthetic import synthetic_frames
from gis_sw.cli import cli
from gis_sw.errors import OutputError
from gis_sw.ruleset import DEFAULT_RULESET

N_PARCELS, CHUNK = 100, 20
N_CHUNKS = -(-N_PARCELS // CHUNK)


def write_inputs(folder: Path, frames: dict[str, gpd.GeoDataFrame] | None = None) -> None:
    """``town.gpkg`` (every layer), ``layers.toml`` naming it, and ``rules.toml``."""
    folder.mkdir(parents=True, exist_ok=True)
    town = folder / "town.gpkg"
    if town.exists():
        town.unlink()
    for kind, layer in (frames or synthetic_frames(N_PARCELS, seed=4)).items():
        layer.to_file(town, layer=kind, driver="GPKG", engine="pyogrio")
    lines = []
    for kind in synthetic_frames(4, seed=0):
        lines += [f"[{kind}]", 'path = "town.gpkg"', f'layer = "{kind}"', ""]
    (folder / "layers.toml").write_text("\n".join(lines), encoding="utf-8")
    rules = folder / "rules.toml"
    if not rules.exists():
        text = resources.files("gis_sw.rulesets").joinpath(f"{DEFAULT_RULESET}.toml")
        rules.write_bytes(text.read_bytes())


def batch(folder: Path, out: Path, *extra: str) -> Result:
    args = ["batch", "--layers", str(folder / "layers.toml"), "--out", str(out)]
    args += ["--ruleset", str(folder / "rules.toml"), "--chunk-size", str(CHUNK)]
    args += ["--workers", "1", "--no-map", "--no-gpkg", "--quick", *extra]
    return CliRunner().invoke(cli, args)


def interrupt(out: Path, *, keep: int = 3) -> None:
    """Make ``out`` what a kill after ``keep`` chunks leaves."""
    for path in out.iterdir():
        if path.is_file():
            path.unlink()
    for chunk_id in range(keep, N_CHUNKS):
        (out / "parts" / f"chunk-{chunk_id:06d}.parquet").unlink()
    manifest_path = out / "parts" / "manifest.json"
    data = json.loads(manifest_path.read_text(encoding="utf-8"))
    data.pop("publishing", None)
    manifest_path.write_text(json.dumps(data), encoding="utf-8")
    journal = out / "parts" / "parts.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines()[:keep]
    journal.write_text("\n".join(lines) + '\n{"chunk": 3, "fi', encoding="utf-8")  # cut line


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Inputs and the outputs of one uninterrupted run."""
    folder = tmp_path_factory.mktemp("resume")
    write_inputs(folder / "in")
    out = folder / "whole"
    result = batch(folder / "in", out)
    assert result.exit_code == 0, result.output
    return folder / "in", out


@pytest.fixture
def killed(finished: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A fresh copy of the inputs and an interrupted run of them."""
    source, whole = finished
    folder = tmp_path / "in"
    shutil.copytree(source, folder)
    out = tmp_path / "out"
    shutil.copytree(whole, out)
    interrupt(out)
    return folder, out


def parcels(out: Path) -> pd.DataFrame:
    return pd.DataFrame(gpd.read_parquet(out / "parcels.parquet").drop(columns="geometry"))


def assert_refused(result: Result, line: str, out: Path) -> None:
    assert result.exit_code == 2, result.output
    assert line in result.output
    assert "run again without --resume" in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (out / "parcels.parquet").exists()


def test_resume_of_the_same_run_equals_the_uninterrupted_one(
    finished: tuple[Path, Path], killed: tuple[Path, Path]
) -> None:
    folder, out = killed
    result = batch(folder, out, "--resume")
    assert result.exit_code == 0, result.output
    assert f"({N_CHUNKS - 3} run now)" in result.output
    assert rows_equal(parcels(finished[1]), parcels(out))


def test_touched_layer_file_is_still_the_same_run(
    finished: tuple[Path, Path], killed: tuple[Path, Path]
) -> None:
    folder, out = killed
    town = folder / "town.gpkg"
    later = town.stat().st_mtime_ns + 5_000_000_000
    os.utime(town, ns=(later, later))
    result = batch(folder, out, "--resume")
    assert result.exit_code == 0, result.output
    assert rows_equal(parcels(finished[1]), parcels(out))


def test_edited_ruleset_threshold_is_refused(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    rules = folder / "rules.toml"
    text = rules.read_text(encoding="utf-8")
    assert "threshold_any_zone_sqft = 250" in text
    rules.write_text(
        text.replace("threshold_any_zone_sqft = 250", "threshold_any_zone_sqft = 5000")
    )
    result = batch(folder, out, "--resume")
    assert_refused(result, f"the ruleset {rules} changed since the interrupted run", out)


def test_changed_wetlands_are_refused(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    frames = synthetic_frames(N_PARCELS, seed=4)
    frames["wetlands"] = frames["wetlands"].set_geometry(frames["wetlands"].translate(3.0, 0.0))
    write_inputs(folder, frames)
    result = batch(folder, out, "--resume")
    assert_refused(result, "wetlands changed since the interrupted run", out)


def test_rekeyed_parcel_ids_are_refused(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    frames = synthetic_frames(N_PARCELS, seed=4)
    frames["parcels"]["parcel_id"] = [f"NEW-{i}" for i in range(len(frames["parcels"]))]
    write_inputs(folder, frames)
    result = batch(folder, out, "--resume")
    assert_refused(result, "parcels changed since the interrupted run", out)


def test_changed_layers_manifest_is_refused(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    manifest = folder / "layers.toml"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    result = batch(folder, out, "--resume")
    assert_refused(
        result, "the layers manifest (layers.toml) changed since the interrupted run", out
    )


def test_other_chunk_size_is_refused(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    args = ["batch", "--layers", str(folder / "layers.toml"), "--out", str(out), "--resume"]
    args += ["--ruleset", str(folder / "rules.toml"), "--chunk-size", "50", "--no-map", "--quick"]
    result = CliRunner().invoke(cli, [*args, "--no-gpkg"])
    assert_refused(result, "--chunk-size changed (20 then, 50 now) since the interrupted", out)


def test_other_gis_sw_version_is_refused(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    path = out / "parts" / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["gis_sw"] = "0.0.1"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = batch(folder, out, "--resume")
    assert_refused(result, "gis-sw changed (0.0.1 then,", out)


def test_refused_resume_then_overwrite_starts_again(
    finished: tuple[Path, Path], killed: tuple[Path, Path]
) -> None:
    folder, out = killed
    frames = synthetic_frames(N_PARCELS, seed=4)
    frames["parcels"]["parcel_id"] = [f"NEW-{i}" for i in range(len(frames["parcels"]))]
    write_inputs(folder, frames)
    result = batch(folder, out, "--overwrite")
    assert result.exit_code == 0, result.output
    assert f"({N_CHUNKS} run now)" in result.output
    got = parcels(out)
    assert got["parcel_id"].tolist() == [f"NEW-{i}" for i in range(N_PARCELS)]


def _swap(a: Path, b: Path) -> None:
    tmp = a.with_name("swap")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


@pytest.mark.parametrize(
    "damage", ["swapped", "truncated", "zero-bytes", "one-byte-edited", "not-recorded"]
)
def test_damaged_parts_are_recomputed(
    finished: tuple[Path, Path], killed: tuple[Path, Path], damage: str
) -> None:
    folder, out = killed
    first, second = (out / "parts" / f"chunk-{i:06d}.parquet" for i in (0, 1))
    if damage == "swapped":
        _swap(first, second)
        bad = {0, 1}
    elif damage == "truncated":
        first.write_bytes(first.read_bytes()[: first.stat().st_size // 2])
        bad = {0}
    elif damage == "zero-bytes":
        first.write_bytes(b"")
        bad = {0}
    elif damage == "one-byte-edited":
        data = bytearray(first.read_bytes())
        data[len(data) // 2] ^= 0x01
        first.write_bytes(bytes(data))
        bad = {0}
    else:  # killed between the part's rename and its line in parts.jsonl
        journal = out / "parts" / "parts.jsonl"
        lines = journal.read_text(encoding="utf-8").splitlines()
        journal.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
        bad = {0}
    result = batch(folder, out, "--resume")
    assert result.exit_code == 0, result.output
    assert f"({N_CHUNKS - 3 + len(bad)} run now)" in result.output
    for chunk_id in bad:
        assert f"part chunk-{chunk_id:06d}.parquet of the interrupted run" in result.output
    assert "recomputed" in result.output
    assert rows_equal(parcels(finished[1]), parcels(out))


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "not JSON"),
        (b'{"version": 2, "gis_sw": "0.1', "not JSON"),
        (b"\x00\xff garbage", "cannot be read"),
        (b"[1, 2, 3]", "is not one gis-sw wrote"),
        (b'{"version": 1, "chunks": []}', "was written by another gis-sw (manifest version 1"),
    ],
    ids=["zero-bytes", "truncated", "garbage", "not-an-object", "old-version"],
)
def test_damaged_manifest_found_by_the_store(tmp_path: Path, content: bytes, reason: str) -> None:
    store = PartStore(tmp_path / "parts")
    store.folder.mkdir()
    store.manifest_path.write_bytes(content)
    (store.folder / "chunk-000000.parquet").write_bytes(b"old part")
    (store.folder / "mine.txt").write_bytes(b"keep\n")
    for resume in (True, False):
        with pytest.raises(OutputError, match="--overwrite") as caught:
            store.start({"chunks": ["a"]}, resume=resume, overwrite=False)
        assert "resume manifest" in str(caught.value)
        assert reason in str(caught.value)
    found = store.start({"chunks": ["a"]}, resume=True, overwrite=True)
    assert found.done == frozenset()
    assert sorted(p.name for p in store.folder.iterdir()) == [
        "manifest.json",
        "mine.txt",
        "parts.jsonl",
    ]
    assert json.loads(store.manifest_path.read_text(encoding="utf-8"))["chunks"] == ["a"]


def test_damaged_manifest_is_a_clear_error_and_overwrite_works(
    finished: tuple[Path, Path], killed: tuple[Path, Path]
) -> None:
    folder, out = killed
    (out / "parts" / "manifest.json").write_bytes(b'{"version": 2, "gis_sw": "0.1')
    (out / "parts" / "mine.txt").write_bytes(b"keep\n")
    for flags in (["--resume"], []):
        result = batch(folder, out, *flags)
        assert result.exit_code == 2, result.output
        assert "resume manifest" in result.output
        assert "--overwrite" in result.output
        assert "Traceback" not in result.output
    # an output of the run is there too: --resume names the manifest first, not the output
    shutil.copy2(finished[1] / "parcels.parquet", out / "parcels.parquet")
    result = batch(folder, out, "--resume")
    assert result.exit_code == 2, result.output
    assert "resume manifest" in result.output
    assert "cannot be read (not JSON" in result.output
    result = batch(folder, out, "--overwrite")
    assert result.exit_code == 0, result.output
    assert rows_equal(parcels(finished[1]), parcels(out))
    assert (out / "parts" / "mine.txt").read_bytes() == b"keep\n"


def test_resume_after_the_outputs_were_being_published(
    finished: tuple[Path, Path], killed: tuple[Path, Path]
) -> None:
    """Killed while renaming the outputs: the resumed run may replace its own outputs."""
    folder, out = killed
    whole = finished[1]
    shutil.copytree(whole / "parts", out / "parts", dirs_exist_ok=True)
    shutil.copy2(whole / "parcels.parquet", out / "parcels.parquet")  # one already renamed
    result = batch(folder, out, "--resume")
    assert result.exit_code == 0, result.output
    assert "(0 run now)" in result.output
    assert rows_equal(parcels(whole), parcels(out))


def test_resume_does_not_replace_a_users_output(killed: tuple[Path, Path]) -> None:
    folder, out = killed
    (out / "summary.csv").write_bytes(b"mine\n")
    result = batch(folder, out, "--resume")
    assert result.exit_code == 2, result.output
    assert "summary.csv already exists" in result.output
    assert (out / "summary.csv").read_bytes() == b"mine\n"


def test_each_part_is_recorded_with_rows_id_range_and_hash(tmp_path: Path) -> None:
    store = PartStore(tmp_path / "parts")
    store.start({"chunks": ["a", "b"]}, resume=False, overwrite=False)
    rows = pd.DataFrame({"row": [4, 7, 9], "parcel_id": ["P-4", "P-7", "P-9"], "x": [1, 2, 3]})
    path = store.write(1, rows)
    (entry,) = [json.loads(line) for line in store.journal_path.read_text().splitlines()]
    assert entry == {
        "chunk": 1,
        "file": "chunk-000001.parquet",
        "rows": 3,
        "first_row": 4,
        "last_row": 9,
        "first_id": "P-4",
        "last_id": "P-9",
        "size": path.stat().st_size,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    found = store.start({"chunks": ["a", "b"]}, resume=True, overwrite=False)
    assert found.done == frozenset({1})
    assert dict(found.damaged) == {}
