"""`gis-sw check --out` never writes over one of its inputs, even with --overwrite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from gis_sw.cli import cli

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


@pytest.mark.parametrize(
    ("name", "what"),
    [
        pytest.param("findings.gpkg", "the proposals file", id="proposals-named-like-an-output"),
        pytest.param("summary.csv", "the waivers file", id="waivers-named-like-an-output"),
    ],
)
def test_check_refuses_an_output_that_is_an_input(tmp_path: Path, name: str, what: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    proposals = SAMPLE / "proposals.gpkg"
    args = ["check", str(proposals), "--layers", str(SAMPLE / "layers.toml")]
    if what == "the proposals file":
        proposals = out / name
        shutil.copy(SAMPLE / "proposals.gpkg", proposals)
        args[1] = str(proposals)
    else:
        waivers = out / name
        waivers.write_text("rule_id,subject_id,reason\n", encoding="utf-8")
        args += ["--waivers", str(waivers)]
    before = (out / name).read_bytes()
    result = CliRunner().invoke(
        cli, [*args, "--out", str(out), "--overwrite", "--map", "none", "--fail-on", "never"]
    )
    assert result.exit_code == 2, result.output
    assert f"output {out / name} is {what}" in result.output
    assert "never writes over its inputs" in result.output
    assert (out / name).read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_map_refuses_a_web_map_that_links_to_an_input(tmp_path: Path) -> None:
    town = tmp_path / "sample"
    shutil.copytree(SAMPLE, town)
    out = tmp_path / "out"
    out.mkdir()
    (out / "webmap.html").symlink_to(town / "layers.toml")  # an output name, an input file
    before = (town / "layers.toml").read_bytes()
    result = CliRunner().invoke(
        cli,
        [
            *("map", str(town / "proposals.gpkg"), "--layers", str(town / "layers.toml")),
            *("--out", str(out), "--overwrite", "--id", "P01-addition-r10"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"output {out / 'webmap.html'} is the layers manifest" in result.output
    assert (town / "layers.toml").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["webmap.html"]
