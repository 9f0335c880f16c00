"""``gis-sw batch`` never loses a file: inputs, earlier outputs and a user's files stay.

Every case writes a small town in the test (the corpus town, or a synthetic one of a few
hundred parcels) and runs the real command through click.
"""

from __future__ import annotations

import os
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
from click.testing import CliRunner, Result
from corpus import manifest, town_frames, write_gpkg, write_town

from gis_sw.cli import cli
from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import clean_stale_temps, output_group, write_text_atomic


def batch(*args: str) -> Result:
    return CliRunner().invoke(cli, ["batch", *args, "--no-map"])


def files_in(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name to bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def layers_folder(tmp_path: Path) -> Path:
    """A town folder as users keep one: a manifest beside one file per layer."""
    folder = tmp_path / "town"
    folder.mkdir()
    tables = {}
    for kind, frame in town_frames().items():
        write_gpkg(folder / f"{kind}.gpkg", {kind: frame})
        tables[kind] = {"path": f"{kind}.gpkg"}
    manifest(folder, tables)
    return folder


@pytest.mark.parametrize("overwrite", [False, True], ids=["plain", "with-overwrite"])
def test_out_at_the_layers_folder_never_replaces_parcels_gpkg(
    layers_folder: Path, overwrite: bool
) -> None:
    before = files_in(layers_folder)
    flags = ["--overwrite"] if overwrite else []
    result = batch(
        "--layers", str(layers_folder / "layers.toml"), "--out", str(layers_folder), *flags
    )
    assert result.exit_code == 2, result.output
    assert "parcels.gpkg" in result.output
    assert "an input of this run" in result.output
    assert "the parcels layer (parcels.gpkg)" in result.output
    assert "Traceback" not in result.output
    assert files_in(layers_folder) == before  # nothing replaced, nothing added


def _link(kind: str, source: Path, target: Path) -> None:
    if kind == "hardlink":
        os.link(source, target)
    else:
        target.symlink_to(source)


@pytest.mark.parametrize("link", ["hardlink", "symlink"])
@pytest.mark.parametrize(
    ("output", "input_name", "described"),
    [
        ("parcels.gpkg", "town.gpkg", "the parcels, zoning, wetlands, water_bodies, floodplain"),
        ("summary.csv", "layers.toml", "the layers manifest (layers.toml)"),
        ("problems.csv", "rules.toml", "the ruleset file (rules.toml)"),
        ("findings.gpkg", "proposals.gpkg", "the proposals file (proposals.gpkg)"),
    ],
    ids=["town-gpkg", "layers-manifest", "ruleset-file", "proposals-file"],
)
def test_an_output_that_is_an_input_by_file_identity_is_refused(
    tmp_path: Path, link: str, output: str, input_name: str, described: str
) -> None:
    from gis_sw.ruleset import DEFAULT_RULESET

    inputs = write_town(tmp_path)
    layers = manifest(tmp_path, {k: {"path": "town.gpkg", "layer": k} for k in town_frames()})
    from importlib import resources

    rules = tmp_path / "rules.toml"
    rules.write_bytes(
        resources.files("gis_sw.rulesets").joinpath(f"{DEFAULT_RULESET}.toml").read_bytes()
    )
    out = tmp_path / "out"
    out.mkdir()
    _link(link, tmp_path / input_name, out / output)
    before = files_in(tmp_path)
    result = batch(
        "--layers",
        str(layers),
        "--proposals",
        str(inputs.proposals),
        "--ruleset",
        str(rules),
        "--out",
        str(out),
        "--overwrite",
    )
    assert result.exit_code == 2, result.output
    assert f"output {out / output} is {described}" in result.output
    assert "never writes over its inputs" in result.output
    assert files_in(tmp_path) == before


@pytest.mark.parametrize("name", ["findings.gpkg", "problems.csv", "summary.csv"])
def test_existing_outputs_are_refused_without_overwrite(tmp_path: Path, name: str) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_bytes(b"the user's own file\n")
    args = ["--layers", str(inputs.layers), "--out", str(out)]
    if name.startswith("findings"):
        args += ["--proposals", str(inputs.proposals)]
    result = batch(*args)
    assert result.exit_code == 2, result.output
    assert f"output {out / name} already exists" in result.output
    assert "--overwrite" in result.output
    assert files_in(out) == {name: b"the user's own file\n"}  # nothing else written either
    again = batch(*args, "--overwrite")
    assert again.exit_code == 0, again.output
    assert (out / name).read_bytes() != b"the user's own file\n"
    assert {p.name for p in out.iterdir()} >= {"parcels.parquet", "parcels.gpkg", "parts", name}
    if name.startswith("findings"):
        findings = gpd.read_parquet(out / "findings.parquet")
        assert set(findings["proposal_id"]) == {"P-1", "P-2"}


def test_user_files_in_parts_survive_overwrite(tmp_path: Path) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    args = ["--layers", str(inputs.layers), "--out", str(out)]
    assert batch(*args).exit_code == 0
    mine = {
        "notes.txt": b"field notes\n",
        "chunk-old.parquet": b"not a part of gis-sw\n",
        ".hidden.tmp.txt": b"mine too\n",
    }
    for name, data in mine.items():
        (out / "parts" / name).write_bytes(data)
    again = batch(*args, "--overwrite")
    assert again.exit_code == 0, again.output
    for name, data in mine.items():
        assert (out / "parts" / name).read_bytes() == data
    assert (out / "parts" / "chunk-000000.parquet").is_file()


def test_parts_folder_with_only_user_files_is_left_alone(tmp_path: Path) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    (out / "parts").mkdir(parents=True)
    (out / "parts" / "readme.txt").write_bytes(b"keep me\n")
    result = batch("--layers", str(inputs.layers), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert (out / "parts" / "readme.txt").read_bytes() == b"keep me\n"


def test_a_dangling_symlink_named_like_an_output_is_refused(tmp_path: Path) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.csv").symlink_to(tmp_path / "gone.csv")
    args = ["--layers", str(inputs.layers), "--out", str(out)]
    result = batch(*args)
    assert result.exit_code == 2, result.output
    assert "summary.csv already exists (a symlink to" in result.output
    assert "which is missing" in result.output
    assert [p.name for p in out.iterdir()] == ["summary.csv"]
    assert not (tmp_path / "gone.csv").exists()
    again = batch(*args, "--overwrite")
    assert again.exit_code == 0, again.output
    assert not (out / "summary.csv").is_symlink()
    summary = pd.read_csv(out / "summary.csv")
    assert summary.loc[summary["table"] == "parcels", "count"].sum() == 2
    assert not (tmp_path / "gone.csv").exists()  # the link was replaced, not followed


@pytest.mark.parametrize("overwrite", [False, True], ids=["plain", "with-overwrite"])
def test_an_output_name_that_is_a_folder_is_refused_up_front(
    tmp_path: Path, overwrite: bool
) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    args = ["--layers", str(inputs.layers), "--out", str(out)]
    assert batch(*args).exit_code == 0
    before = files_in(out)
    (out / "summary.csv").unlink()
    (out / "summary.csv").mkdir()
    (out / "summary.csv" / "inside.txt").write_bytes(b"a user's folder\n")
    result = batch(*args, *(["--overwrite"] if overwrite else []))
    assert result.exit_code == 2, result.output
    assert "summary.csv is a folder" in result.output
    assert "even with --overwrite" in result.output
    after = files_in(out)
    assert after.pop("summary.csv/inside.txt") == b"a user's folder\n"
    before.pop("summary.csv")
    assert after == before  # no half set: every other output as it was
    assert not [p for p in out.rglob(".*") if ".tmp" in p.name]


def test_output_group_refuses_a_target_that_became_a_folder(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("old a\n", encoding="utf-8")

    def write_two() -> None:
        with output_group():
            write_text_atomic(tmp_path / "a.csv", "new a\n")
            write_text_atomic(tmp_path / "b.csv", "new b\n")
            (tmp_path / "b.csv").mkdir()

    with pytest.raises(OutputError, match="became a folder"):
        write_two()
    assert (tmp_path / "a.csv").read_text(encoding="utf-8") == "old a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_stale_temporaries_of_a_killed_run_are_removed_and_only_those(tmp_path: Path) -> None:
    inputs = write_town(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    stale = [
        ".parcels.k3x_9qaz.tmp.parquet",
        ".summary.abcdefgh.tmp.csv",
        ".parcels.0a1b2c3d.tmp.gpkg-journal",
    ]
    kept = [
        ".parcels.mine.tmp.parquet",  # not our random part
        ".other.abcdefgh.tmp.csv",  # not one of our outputs
        ".summary.abcdefgh.tmp.csv.bak",
        "summary.abcdefgh.tmp.csv",  # not hidden
    ]
    for name in stale + kept:
        (out / name).write_bytes(b"x")
    result = batch("--layers", str(inputs.layers), "--out", str(out))
    assert result.exit_code == 0, result.output
    for name in stale:
        assert not (out / name).exists(), name
    for name in kept:
        assert (out / name).read_bytes() == b"x", name


def test_clean_stale_temps_of_check_outputs(tmp_path: Path) -> None:
    (tmp_path / ".findings.a1b2c3d4.tmp.gpkg").write_bytes(b"x")
    (tmp_path / ".findings.a1b2c3d4.tmp.gpkg-wal").write_bytes(b"x")
    (tmp_path / ".findings.a1b2c3d4.tmp.geojson").write_bytes(b"x")
    removed = clean_stale_temps(tmp_path, ["findings.gpkg"])
    assert sorted(p.name for p in removed) == [
        ".findings.a1b2c3d4.tmp.gpkg",
        ".findings.a1b2c3d4.tmp.gpkg-wal",
    ]
    assert [p.name for p in tmp_path.iterdir()] == [".findings.a1b2c3d4.tmp.geojson"]
