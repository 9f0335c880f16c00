"""`--profile`: the stage times of check, map, siting and batch, printed on stderr."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus import Inputs, write_town

from gis_sw.cli import cli
from gis_sw.cli.profile import Profile, process_started

LINE = re.compile(r"^gis-sw: profile: (.*)$", re.MULTILINE)


def stages(stderr: str) -> dict[str, float]:
    """The stages of the one profile line, in order, with ``total`` last."""
    lines = LINE.findall(stderr)
    assert len(lines) == 1, stderr
    parsed = {}
    for part in lines[0].split(", "):
        name, secs, unit = part.rsplit(" ", 2)
        assert unit == "s", part
        parsed[name] = float(secs)
    return parsed


def assert_adds_up(found: dict[str, float]) -> None:
    parts = [v for k, v in found.items() if k != "total"]
    assert all(v >= 0 for v in parts)
    # each figure is rounded to 0.01 s: the sum may drift by half of that per stage
    assert sum(parts) == pytest.approx(found["total"], abs=0.005 * len(found) + 1e-9)


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    return write_town(tmp_path_factory.mktemp("profile"))


def invoke(*args: str) -> object:
    return CliRunner().invoke(cli, list(args))


def test_profile_marks_add_up_and_a_stage_marked_twice_sums() -> None:
    profile = Profile(enabled=True, started=time.perf_counter() - 1.0)
    first = profile.mark("import")
    assert first >= 1.0
    time.sleep(0.02)
    second = profile.mark("read")
    profile.mark("read")
    assert second >= 0.02
    assert list(profile.stages) == ["import", "read"]
    assert profile.stages["read"] >= second
    found = stages(profile.line())
    assert list(found) == ["import", "read", "total"]
    assert found["import"] == pytest.approx(first, abs=0.005)
    assert_adds_up(found)


def test_process_start_is_before_now() -> None:
    started = process_started()
    if started is None:  # not Linux: the dispatch start is used instead
        pytest.skip("no /proc/self/stat")
    assert started <= time.perf_counter()


def test_check_profile_without_drawing(town: Inputs, tmp_path: Path) -> None:
    args = ["check", str(town.proposals), "--layers", str(town.layers), "--out", str(tmp_path)]
    result = invoke(*args, "--map", "none", "--fail-on", "never", "--profile")
    assert result.exit_code == 0, result.output
    found = stages(result.stderr)
    assert list(found) == ["import", "read", "screen", "write", "total"]
    assert_adds_up(found)
    assert (tmp_path / "summary.csv").exists()
    quiet = invoke(*args, "--map", "none", "--fail-on", "never", "--overwrite")
    assert quiet.exit_code == 0
    assert not LINE.search(quiet.stderr)


def test_check_profile_is_printed_when_findings_trip_fail_on(town: Inputs) -> None:
    args = ["check", str(town.proposals), "--layers", str(town.layers), "--select", "SW101"]
    result = invoke(*args, "--fail-on", "required", "--profile")
    assert result.exit_code == 1, result.output
    assert list(stages(result.stderr)) == ["import", "read", "screen", "total"]


def test_map_profile_has_a_draw_stage(town: Inputs, tmp_path: Path) -> None:
    args = ["map", str(town.proposals), "--layers", str(town.layers), "--out", str(tmp_path)]
    result = invoke(*args, "--format", "png", "--no-webmap", "--no-siting", "--profile")
    assert result.exit_code == 0, result.output
    found = stages(result.stderr)
    assert list(found) == ["import", "read", "screen", "draw", "total"]
    assert_adds_up(found)
    assert list(tmp_path.rglob("*.png"))


def test_siting_profile_writes_then_draws(town: Inputs, tmp_path: Path) -> None:
    args = ["siting", "--layers", str(town.layers), "--parcel", town.parcel, "--out", str(tmp_path)]
    result = invoke(*args, "--sheets", "png", "--profile")
    assert result.exit_code == 0, result.output
    found = stages(result.stderr)
    assert list(found) == ["import", "read", "screen", "write", "draw", "total"]
    assert_adds_up(found)
    nothing = invoke(*args, "--sheets", "none", "--profile", "--overwrite")
    assert list(stages(nothing.stderr)) == ["import", "read", "screen", "write", "total"]


def test_batch_profile(town: Inputs, tmp_path: Path) -> None:
    result = invoke(
        *("batch", "--layers", str(town.layers), "--proposals", str(town.proposals)),
        *("--out", str(tmp_path), "--workers", "1", "--no-map", "--no-gpkg", "--profile"),
    )
    assert result.exit_code == 0, result.output
    found = stages(result.stderr)
    assert list(found) == ["import", "plan", "read", "screen", "rules", "write", "total"]
    assert_adds_up(found)
    summary = next(line for line in result.stderr.splitlines() if line.startswith("screened "))
    assert "; read " in summary
    assert "import" not in summary  # the run's own line keeps its stages


def test_a_real_run_counts_import_from_the_process_start(tmp_path: Path) -> None:
    program = Path(sys.executable).with_name("gis-sw")
    missing = tmp_path / "none.gpkg"
    out = subprocess.run(
        [str(program), "check", str(missing), "--layers", str(tmp_path), "--profile"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2, out.stderr
    assert "no such proposals file" in out.stderr
    found = stages(out.stderr)  # printed although the run stopped on bad input
    assert list(found) == ["import", "total"]
    assert found["import"] > 0.0
