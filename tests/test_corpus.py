"""The bad-input corpus (:mod:`corpus`) through validate, check, siting and batch.

Each (case, command) ends either in the correct result the case names, or in exit 2 with a
message naming the file, layer, column or feature and a fix.  Never a traceback, never a
silent pass, never a half-written output: a run that fails leaves the output folder exactly
as it was (an earlier output byte-identical, no temporary files).
"""

from __future__ import annotations

import csv
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import geopandas as gpd
import pytest
from click.testing import CliRunner, Result
from corpus import CASES, COMMANDS, Case, Fails, Inputs, Works, write_town

from gis_sw.cli import cli

FIRST_OUTPUT = {
    "check": "summary.csv",
    "siting": "siting.gpkg",
    "batch": "summary.csv",
}
"""An output each command writes, planted before a failing run to see it survive."""

Findings = dict[tuple[str, str], tuple[str, str]]


def command_args(command: str, inputs: Inputs, out: Path) -> list[str]:
    layers, proposals = str(inputs.layers), str(inputs.proposals)
    if command == "validate":
        strict = ["--strict"] if inputs.strict else []
        return ["validate", "--layers", layers, "--proposals", proposals, *strict]
    if command == "check":
        return [
            *("check", proposals, "--layers", layers, "--out", str(out)),
            *("--fail-on", "never", "--map", "none"),  # maps have their own tests; slow here
        ]
    if command == "siting":
        return ["siting", "--layers", layers, "--parcel", inputs.parcel, "--out", str(out)]
    return [
        "batch",
        "--layers",
        layers,
        "--proposals",
        proposals,
        "--out",
        str(out),
        "--workers",
        "1",
        "--no-map",
        "--no-gpkg",
    ]


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under a folder (relative name to bytes)."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def read_findings(path: Path) -> Findings:
    with path.open(encoding="utf-8-sig") as handle:
        return {
            (row["rule_id"], row["subject_id"]): (row["outcome"], row["measured"])
            for row in csv.DictReader(handle)
        }


def assert_no_traceback(result: Result) -> None:
    crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
    assert not crashed, f"unhandled {result.exception!r}\n{result.output}"
    assert "Traceback" not in result.output


def assert_clear_error(result: Result, command: str, names: tuple[str, ...]) -> None:
    """Exit 2; the names and a fix in the message; one error line (validate: a report)."""
    assert result.exit_code == 2, result.output
    text = result.output if command == "validate" else result.stderr
    for name in names:
        assert name in text, f"{name!r} not in:\n{text}"
    errors = [
        line for line in result.stderr.splitlines() if line.startswith(("gis-sw: error:", "Error:"))
    ]
    assert len(errors) == 1, result.stderr
    usage = errors[0].startswith("Error: Invalid value")  # click checked a path
    assert usage or "fix:" in text.lower(), text


def assert_findings(got: Findings, expect: Works, base: Findings) -> None:
    for key, outcome in expect.findings.items():
        assert got[key][0] == outcome, (key, got.get(key))
    if expect.same_as_base:
        assert got.keys() == base.keys()
        for key, (outcome, measured) in base.items():
            assert got[key][0] == outcome, (key, got[key], outcome)
            if measured:
                assert float(got[key][1]) == pytest.approx(float(measured), abs=0.01), key


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Findings:
    """Findings of the untouched town."""
    folder = tmp_path_factory.mktemp("base")
    inputs = write_town(folder)
    result = invoke(command_args("check", inputs, folder / "out"))
    assert result.exit_code == 0, result.output
    findings = read_findings(folder / "out" / "summary.csv")
    assert findings["SW101", "P-1"] == ("required", "134.0")
    assert findings["SW101", "P-2"] == ("pass", "200.0")
    return findings


def pairs() -> Iterator[object]:
    for item in CASES:
        for command in COMMANDS:
            if command in item.expect:
                bug = item.expect[command].bug
                marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
                yield pytest.param(item, command, id=f"{item.id}-{command}", marks=marks)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Case], Inputs]:
    """Each case's inputs, written once and shared by its commands (none writes to them)."""
    cache: dict[str, Inputs] = {}

    def build(item: Case) -> Inputs:
        if item.id not in cache:
            cache[item.id] = item.build(tmp_path_factory.mktemp(item.id))
        return cache[item.id]

    return build


@pytest.mark.parametrize(("item", "command"), list(pairs()))
def test_corpus(
    item: Case, command: str, tmp_path: Path, base: Findings, built: Callable[[Case], Inputs]
) -> None:
    inputs = built(item)
    out = tmp_path / "out"
    expect = item.expect[command]
    args = command_args(command, inputs, out)
    if isinstance(expect, Fails):
        if command in FIRST_OUTPUT:
            out.mkdir()
            (out / FIRST_OUTPUT[command]).write_bytes(b"an earlier complete output\n")
            args.append("--overwrite")
        before = snapshot(out)
        result = invoke(args)
        assert_no_traceback(result)
        assert_clear_error(result, command, expect.names)
        assert snapshot(out) == before, "a failed run changed the output folder"
        return
    assert isinstance(expect, Works)
    result = invoke(args)
    assert_no_traceback(result)
    assert result.exit_code == 0, result.output
    for text in expect.output:
        assert text in result.output, f"{text!r} not in:\n{result.output}"
    if command == "check":
        assert not [p.name for p in out.iterdir() if p.name.startswith(".")]
        assert_findings(read_findings(out / "summary.csv"), expect, base)
    elif command == "siting":
        sited = gpd.read_file(out / "siting.gpkg", engine="pyogrio")
        pairs = zip(sited["outcome"], sited["area_sqft"], strict=True)
        got = dict(zip(sited["parcel_id"], pairs, strict=True))
        for parcel, (outcome, area) in expect.siting.items():
            assert got[parcel][0] == outcome, (parcel, got[parcel])
            if area is not None:
                assert got[parcel][1] == pytest.approx(area, abs=1.0), (parcel, got[parcel])
    elif command == "batch":
        parcels = gpd.read_parquet(out / "parcels.parquet")
        assert parcels["parcel_id"].is_unique
        findings = gpd.read_parquet(out / "findings.parquet")
        got = {
            (r, s): (o, "" if m != m else str(m))
            for r, s, o, m in zip(
                findings["rule_id"],
                findings["subject_id"],
                findings["outcome"],
                findings["measured"],
                strict=True,
            )
        }
        assert_findings(got, expect, base)


def test_every_case_has_a_unique_id() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 40


def _root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _mount_tmpfs(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def test_unexpected_exception_is_exit_3_without_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from gis_sw.cli import COMMANDS

    monkeypatch.setitem(COMMANDS, "boom", ("corpus.boom", "Fails with a bug."))
    result = invoke(["boom"])
    assert result.exit_code == 3
    expected = (
        "gis-sw: internal error (ZeroDivisionError: division by zero). This is a bug in gis-sw, "
        "not in your data or setup. Fix: please report it with the command line and the output "
        "of the same command run with `gis-sw -v`."
    )
    assert result.stderr.splitlines() == [expected]
    assert "Traceback" not in result.output
    verbose = invoke(["-v", "boom"])
    assert verbose.exit_code == 3  # -v shows the traceback; the exit code stays
    assert "Traceback" in verbose.stderr
    assert "ZeroDivisionError: division by zero" in verbose.stderr
    assert verbose.stderr.splitlines()[-1] == expected


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: too small for a findings GeoPackage."""
    if not _root():
        pytest.skip("mounting a 64 KiB tmpfs needs root")
    target = tmp_path / "disk"
    if not _mount_tmpfs(target, "size=64k"):
        pytest.skip("mount -t tmpfs -o size=64k failed here (no CAP_SYS_ADMIN?)")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=False, capture_output=True)


@pytest.fixture
def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder no output can be written to (read-only tmpfs as root, mode 555 otherwise)."""
    target = tmp_path / "locked"
    if _root():
        if not _mount_tmpfs(target, "ro,size=64k"):
            pytest.skip("mount -t tmpfs -o ro failed here, and root ignores mode 555")
        try:
            yield target
        finally:
            subprocess.run(["umount", str(target)], check=False, capture_output=True)
    else:
        target.mkdir()
        target.chmod(0o555)
        try:
            yield target
        finally:
            target.chmod(0o755)


def test_full_disk_check_exit_2_earlier_output_kept(
    tiny_disk: Path, built: Callable[[Case], Inputs]
) -> None:
    inputs = built(next(c for c in CASES if c.id == "crs-utm-metres-zoning"))
    earlier = b"an earlier complete summary\n"
    (tiny_disk / "summary.csv").write_bytes(earlier)
    args = command_args("check", inputs, tiny_disk)
    result = invoke([*args, "--overwrite"])
    assert_no_traceback(result)
    assert_clear_error(result, "check", ("No space left on device", "free disk space"))
    assert (tiny_disk / "summary.csv").read_bytes() == earlier
    assert not [p.name for p in tiny_disk.iterdir() if p.name.startswith(".")]


def test_full_disk_check_leaves_every_earlier_output(
    tiny_disk: Path, built: Callable[[Case], Inputs]
) -> None:
    inputs = built(next(c for c in CASES if c.id == "crs-utm-metres-zoning"))
    names = ("findings.geojson", "findings_lines.geojson", "findings_points.geojson")
    for name in (*names, "summary.csv"):
        (tiny_disk / name).write_bytes(b"earlier\n")
    before = snapshot(tiny_disk)
    result = invoke([*command_args("check", inputs, tiny_disk), "--overwrite"])
    assert result.exit_code == 2
    assert snapshot(tiny_disk) == before


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("siting"),
        pytest.param("batch"),
    ],
)
def test_full_disk_siting_and_batch_exit_2(
    command: str, tiny_disk: Path, built: Callable[[Case], Inputs]
) -> None:
    inputs = built(next(c for c in CASES if c.id == "crs-utm-metres-zoning"))
    out = tiny_disk / command
    result = invoke(command_args(command, inputs, out))
    assert_no_traceback(result)
    assert_clear_error(result, command, ("No space left on device", "Fix:"))
    leftovers = [p.name for p in out.iterdir() if p.is_file()]
    assert not leftovers, leftovers


@pytest.mark.parametrize("command", ["check", "siting", "batch"])
def test_unwritable_output_folder_exit_2(
    command: str, read_only_folder: Path, built: Callable[[Case], Inputs]
) -> None:
    inputs = built(next(c for c in CASES if c.id == "crs-utm-metres-zoning"))
    result = invoke(command_args(command, inputs, read_only_folder / "out"))
    assert_no_traceback(result)
    assert_clear_error(result, command, (str(read_only_folder), "Fix:"))


@pytest.mark.parametrize("command", ["check", "siting", "batch"])
def test_output_folder_is_a_file_exit_2(
    command: str, tmp_path: Path, built: Callable[[Case], Inputs]
) -> None:
    inputs = built(next(c for c in CASES if c.id == "crs-utm-metres-zoning"))
    blocker = tmp_path / "report.pdf"
    blocker.write_bytes(b"%PDF-1.4\n")
    result = invoke(command_args(command, inputs, blocker / "out"))
    assert_no_traceback(result)
    assert_clear_error(result, command, ("report.pdf",))
    assert blocker.read_bytes() == b"%PDF-1.4\n"
