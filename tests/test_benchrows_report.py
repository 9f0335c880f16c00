"""``make bench``'s rows: the check and siting benchmarks' goals, and report.py's tables.

The benchmark scripts are not a package: they are loaded from ``benchmarks/`` by path.  No
benchmark is run here; the rows are built from given times, at each goal exactly and just
past it, and report.py runs a small script of a few lines written by the test.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}_under_test", BENCH / name)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load("bench_check.py")
siting = _load("bench_siting.py")
report = _load("report.py")


def _by_size(rows: list[dict], table: str, size: str) -> dict:
    (row,) = [r for r in rows if r["table"] == table and r["size"] == size]
    return row


@pytest.mark.parametrize(("sample", "met"), [(1.0, True), (1.01, False)])
def test_sample_check_goal_is_twice_the_bare_import(sample, met):
    rows = check.rows(100_000, 0.5, sample, 0.75, 0.04, runs=3)
    row = _by_size(rows, "cold check", "323-parcel sample")
    assert (row["seconds"], row["against_seconds"], row["met"]) == (sample, 0.5, met)
    assert row["goal"] == "<= 2x bare import"
    assert row["note"] == "best of 3 cold run(s)"


@pytest.mark.parametrize(
    ("sample", "town", "met", "in_time"),
    [
        (0.5, 0.75, True, True),  # exactly 1.5x the sample, under 1 s
        (0.5, 0.76, False, True),  # 0.01 s past 1.5x the sample
        (0.9, 1.0, True, True),  # exactly 1 s, 1.11x the sample
        (0.9, 1.01, False, False),  # 0.01 s past 1 s, within 1.5x
    ],
)
def test_big_town_check_needs_one_second_and_one_and_a_half_the_sample(sample, town, met, in_time):
    row = _by_size(
        check.rows(100_000, 0.5, sample, town, 0.04), "cold check", "100,000-parcel town"
    )
    assert (row["seconds"], row["against"], row["against_seconds"]) == (town, "the sample", sample)
    assert row["met"] is met
    assert row["note"].startswith(f"1 s goal {'met' if in_time else 'not met'} ({town:.2f}x)")
    assert f"{town / sample:.2f}x the sample against 1.5x" in row["note"]


@pytest.mark.parametrize(("warm", "met"), [(0.05, True), (0.051, False)])
def test_warm_recheck_goal_is_50_ms(warm, met):
    row = _by_size(check.rows(2_000, 0.5, 1.0, 1.2, warm), "warm re-check", "2,000-parcel town")
    assert (row["seconds"], row["against_seconds"], row["met"]) == (warm, 1.2, met)
    assert row["goal"] == "<= 50 ms"
    assert row["note"].startswith(f"{warm / 0.05:.2f}x the goal")


FLOOR = {"read": 0.5, "index": 0.25, "screen": 1.0, "write": 0.25}  # 2.0 s in all
SPLIT = {
    "screen_1_thread": 8.0,
    "quick_1_thread": 2.0,
    "siting_1_thread": 5.0,
    "band_1_thread": 1.5,
}


@pytest.mark.parametrize(("screen", "met"), [(2.0, True), (2.01, False)])
def test_batch_goal_is_twice_the_bare_floor(screen, met):
    ours = {"wall": 6.0, "read": 1.0, "screen": screen, "write": 1.0}  # 0.01 s past 2x at 2.01
    batch, parts = siting.rows(10_000, FLOOR, ours, SPLIT)
    assert (batch["seconds"], batch["against_seconds"], batch["met"]) == (2.0 + screen, 2.0, met)
    assert batch["goal"] == "<= 2x the bare floor"
    assert batch["size"] == "10,000 parcels"
    assert "floor: read 0.50 s, index 0.25 s, screen 1.00 s, write 0.25 s" in batch["note"]
    assert (parts["seconds"], parts["against_seconds"]) == (8.0, 2.0)
    assert parts["note"] == (
        "siting alone 5.00 s = 62% of the screen, wetland adjacent area alone 1.50 s = 19%"
    )
    assert "met" not in parts


def test_batch_without_stage_line_has_no_verdict():
    batch, _ = siting.rows(10_000, FLOOR, {"wall": 3.5}, SPLIT)
    assert (batch["seconds"], batch["met"]) == (3.5, None)
    assert batch["note"].startswith("no stage line found")
    assert "(met)" not in report.cells(batch)[6]
    assert "not met" not in report.cells(batch)[6]


def test_table_shows_ratio_and_verdict():
    rows = [{"bench": "check", **row} for row in check.rows(100_000, 0.5, 1.25, 0.75, 0.04, runs=1)]
    text = report.tables(rows)
    lines = text.splitlines()
    sample = next(line for line in lines if "323-parcel sample" in line)
    assert "| 1.25 s |" in sample
    assert "| bare import 0.500 s | 2.50x |" in sample
    assert "<= 2x bare import (**not met**)" in sample
    town = next(line for line in lines if "100,000-parcel town" in line and "check --map" in line)
    assert "| the sample 1.25 s | 0.60x |" in town
    assert "<= 1 s and <= 1.5x the sample (met)" in town
    warm = next(line for line in lines if "Town.screen" in line)
    assert "| 0.040 s |" in warm
    assert "<= 50 ms (met)" in warm
    assert text.count("**check: cold check**") == 1
    assert "**check: warm re-check**" in text


def _script(folder: Path, name: str, body: str) -> None:
    (folder / "benchmarks").mkdir(exist_ok=True)
    (folder / "benchmarks" / name).write_text(body, encoding="utf-8")


def test_run_script_collects_rows_and_reports_silent_and_failed(tmp_path, monkeypatch):
    row = {"table": "t", "what": "w", "seconds": 1.5, "note": "n"}
    _script(tmp_path, "rows.py", f"print('hello')\nprint('bench-row: ' + {json.dumps(row)!r})\n")
    _script(tmp_path, "quiet.py", "print('no rows here')\n")
    _script(tmp_path, "broken.py", "import sys\nsys.exit('it broke')\n")
    monkeypatch.setattr(report, "ROOT", tmp_path)
    scripts = {
        "rows": ("rows.py", ["--full"], ["--small"]),
        "quiet": ("quiet.py", [], []),
        "broken": ("broken.py", [], []),
        "gone": ("gone.py", [], []),
    }
    monkeypatch.setattr(report, "SCRIPTS", scripts)
    found, status, log = report.run_script("rows", quick=True, extra=[])
    assert found == [{**row, "bench": "rows", "note": "n; " + report.QUICK_NOTE}]
    assert status == "`rows.py --small`: exit 0, 1 row(s)"
    assert "hello" in log
    assert report.run_script("quiet", quick=False, extra=[])[:2] == (
        [],
        "`quiet.py`: exit 0, 0 row(s)",
    )
    found, status, log = report.run_script("broken", quick=False, extra=[])
    assert (found, status) == ([], "`broken.py`: exit 1, 0 row(s) (failed)")
    assert "it broke" in log
    assert report.run_script("gone", quick=False, extra=[]) == (
        [],
        "`gone.py`: not in benchmarks/ (skipped)",
        "",
    )


def test_body_says_quick_and_lists_silent_scripts():
    saved = {
        "machine": "Generated on a machine.",
        "rows": [{"bench": "b", "table": "t", "what": "w", "seconds": 2.0}],
        "quick": True,
        "no_rows": ["`bench_big_proposals.py`: exit 0, 0 row(s)"],
    }
    text = report.body(saved, "[docs](docs.md)")
    assert text.startswith("Generated on a machine.  What each row measures: [docs](docs.md).")
    assert "**A `--quick` run**" in text
    assert text.endswith("- `bench_big_proposals.py`: exit 0, 0 row(s)")
    old = {"machine": "M.", "rows": saved["rows"]}  # a rows file from before this version
    assert "--quick" not in report.body(old, "x")
    assert "Gave no rows" not in report.body(old, "x")


def test_replace_between_keeps_the_rest(tmp_path):
    path = tmp_path / "doc.md"
    path.write_text("a\n<!-- s -->\nold\n<!-- e -->\nb\n", encoding="utf-8")
    assert report.replace_between(path, "<!-- s -->", "<!-- e -->", "new")
    assert path.read_text(encoding="utf-8") == "a\n<!-- s -->\nnew\n<!-- e -->\nb\n"
    assert not report.replace_between(path, "<!-- x -->", "<!-- e -->", "new")


def test_merge_keeps_rows_of_benchmarks_not_run_and_says_when(tmp_path, monkeypatch):
    rows_file = tmp_path / "bench-rows.json"
    old_machine = (
        "Generated by `make bench` (`benchmarks/report.py`) on 2026-12-01 10:57 UTC: 2 CPUs"
    )
    rows_file.write_text(
        json.dumps(
            {
                "machine": old_machine,
                "rows": [
                    {
                        "bench": "batch",
                        "table": "end to end",
                        "what": "gis-sw batch",
                        "seconds": 9.0,
                    },
                    {"bench": "check", "table": "cold check", "what": "old check", "seconds": 2.0},
                ],
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(report, "ROWS_FILE", rows_file)
    new = {"machine": "now", "rows": [{"bench": "check", "table": "cold check", "what": "new"}]}
    out = report.merged(new, ["check"])
    assert [r["what"] for r in out["rows"]] == ["gis-sw batch", "new"]
    assert out["rows"][0]["note"] == "earlier run, 2026-12-01 10:57 UTC"
    assert out["machine"] == "now"
    rows_file.write_text(json.dumps(out), encoding="utf-8")  # merged again: no second note
    again = report.merged({"machine": "later", "rows": []}, ["warm"])
    assert [r.get("note") for r in again["rows"]] == [
        "earlier run, 2026-12-01 10:57 UTC",
        "earlier run, time unknown",
    ]


def test_one_thread_row_names_the_geos_share_and_its_two_core_bound():
    _, parts = siting.rows(10_000, FLOOR, {"wall": 3.5}, {**SPLIT, "geos_1_thread": 5.5})
    assert parts["note"] == (
        "siting alone 5.00 s = 62% of the screen, wetland adjacent area alone 1.50 s = 19%; "
        "GEOS calls alone (overlays, buffers, predicates, tree queries; cProfile, a lower "
        "bound) 5.50 s, 2.75 s if split perfectly over 2 cores"
    )


def test_geos_seconds_counts_shapely_overlays_not_python():
    import time

    import shapely

    circles = shapely.buffer(shapely.points(range(3000), 0), 2.0, quad_segs=64)

    def overlays() -> None:
        shapely.union_all(circles)

    def python() -> None:
        sum(i * i for i in range(2_000_000))

    for work, geos_share in ((overlays, True), (python, False)):
        started = time.process_time()
        geos = siting._geos_seconds(work)
        spent = time.process_time() - started
        if geos_share:
            assert geos >= 0.5 * spent  # nearly all of it is GEOS's union
        else:
            assert geos == 0.0  # a generator's arithmetic is no GEOS call
