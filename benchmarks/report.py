"""``make bench``: run every benchmark once, collect their rows, write the tables.

    .venv/bin/python benchmarks/report.py [--quick] [--no-state] [--no-write]
        [--only batch,check] [--merge] [--render FILE] [-- extra arguments for bench_batch.py]

First the run plan is printed (:func:`plan`: each script's command and, for full sizes,
its estimated minutes on an idle 2-core machine, towns made included; the total against
:data:`GOAL_MIN`).  Each benchmark script is then run as a child process from the
checkout's root (so its memory is its own), its output printed as it runs, and contributes
**rows**: every stdout line ``bench-row: {json}`` is one row, with these keys (all but
``table``, ``what`` and ``seconds`` optional)::

    {"bench": "batch", "table": "end to end", "what": "gis-sw batch", "size": "100,000 parcels",
     "seconds": 26.0, "peak_mb": 805, "against": "bare floor", "against_seconds": 2.6,
     "goal": "<= 5 s", "met": false, "goal_id": "county", "note": "read 1.4 s, ..."}

A script that prints no such line still runs, and the report lists it under the tables
(with any script that exited with an error) as having given no rows.  ``--quick`` runs
each script with the small sizes of its :data:`SCRIPTS` entry (a few minutes in all),
says so above the tables and in every row's note; ``--no-state`` leaves out the streamed
5,000,000-parcel run (the ``state`` script, last: the longest).  Above the tables,
:func:`summary` lists issue 16's rows (:data:`ISSUE_ROWS`), each with the row that measured
it, its goal and its verdict (not measured is never met).  The rows are printed as one
table per ``table``, with ``x`` = ``seconds / against_seconds``, and written between
``<!-- bench:start -->`` and ``<!-- bench:end -->`` in docs/batch.md and between
``<!-- performance:start -->`` and ``<!-- performance:end -->`` in README.md: those
sections are generated, never edited by hand.  After each script the rows so far are
saved in :data:`PARTIAL_FILE`; a finished run saves :data:`ROWS_FILE`.  To add a
benchmark, add it to :data:`SCRIPTS` (and :data:`ESTIMATE_MIN`) and print ``bench-row:``
lines from it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "bench-row: "

SCRIPTS: dict[str, tuple[str, list[str], list[str]]] = {
    # name: (script, arguments of a full run, arguments of a --quick run)
    "batch": (
        "bench_batch.py",
        # issue 16's batch rows: end to end at 100,000 (against the floor) and 1,000,000
        # parcels, dask against local at 100,000, the DuckDB and PostGIS peers at 100,000
        [
            "--sizes",
            "100000",
            "1000000",
            "--stream-sizes",
            "--dask-size",
            "100000",
            "--peer-size",
            "100000",
            "--peers",
            "ours,duckdb,postgis",
        ],
        [
            "--sizes",
            "2000",
            "--stream-sizes",
            "--dask-size",
            "2000",
            "--peer-size",
            "2000",
            "--peers",
            "ours,duckdb,postgis",
        ],
    ),
    "check": (
        "bench_check.py",
        ["--parcels", "100000", "--runs", "3", "--work", "out/bench/check"],
        ["--parcels", "5000", "--runs", "2", "--work", "out/bench/check"],
    ),
    "warm": (
        "bench_warm.py",
        ["--parcels", "100000", "--work", "out/bench/check"],
        ["--parcels", "5000", "--repeats", "5", "--work", "out/bench/check"],
    ),
    "siting": (
        "bench_siting.py",
        ["--sizes", "10000", "100000", "--irregular-sizes", "100000"],
        ["--sizes", "2000", "--irregular-sizes", "2000"],
    ),
    "bigprop": (
        "bench_big_proposals.py",
        ["--proposals", "20000", "--polygons", "100000"],
        ["--proposals", "500", "--polygons", "5000"],
    ),
    # last, the longest: 5,000,000 parcels streamed --quick --no-gpkg, peak memory
    # (--no-state leaves it out)
    "state": (
        "bench_batch.py",
        [
            "--sizes",
            "--stream-sizes",
            "5000000",
            "--stream-quick-from",
            "1000000",
            "--dask-size",
            "0",
            "--peer-size",
            "0",
        ],
        [
            "--sizes",
            "--stream-sizes",
            "5000",
            "--stream-quick-from",
            "5000",
            "--dask-size",
            "0",
            "--peer-size",
            "0",
        ],
    ),
}
"""Benchmarks ``make bench`` runs, in this order, when their script exists in benchmarks/.

Paths in the arguments are relative to the checkout (each script runs from there)."""

ESTIMATE_MIN: dict[str, float] = {
    # pieces timed once each, 2026-12-01 15:17-15:35 UTC under nice -n 10 at load 3 to 4
    # (CPU seconds, which load barely changes; idle wall from the lead's idle figures):
    # towns of 100,000 / 1,000,000 parquet 4 / 19 s CPU; end to end at 100,000 about 13 s
    # and its floor 4 s; at 1,000,000 about 10x (130-150 s) and its floor 40 s; dask at
    # 100,000 six runs of 13-20 s; peers at 100,000 (ours, DuckDB, PostGIS) see the docs
    "batch": 8.0,
    "check": 0.5,  # 21 s CPU, its 100,000-parcel GeoPackage town made included
    "warm": 0.1,  # 5 s
    "siting": 2.0,  # 66 s CPU at 10,000 and 100,000; the irregular 100,000 about 30 s more
    "bigprop": 1.5,  # 79 s CPU
    # its town 1:34, the run 10:27 wall at load 2 to 3 (2026-12-01 14:15-14:27 UTC)
    "state": 12.0,
}
"""Minutes each full-size script takes on an idle 2-core machine, towns made included."""

GOAL_MIN = 40.0
"""What one full ``make bench`` may take on an idle machine, towns made included."""

QUICK_NOTE = "quick sizes (`report.py --quick`)"
"""Appended to every row's note in a ``--quick`` run."""

ROWS_FILE = ROOT / "out" / "bench" / "bench-rows.json"
"""Where the last run's rows are kept (``--render`` writes the tables from them)."""

PARTIAL_FILE = ROOT / "out" / "bench" / "bench-rows.partial.json"
"""The rows of a run so far, written after each script (``--render`` it if a run stops)."""

COLUMNS = ("what", "size", "time", "peak MB", "against", "x", "goal", "note")


def script_args(name: str, quick: bool, extra: list[str]) -> list[str]:
    """The arguments ``make bench`` gives one benchmark script.

    ``extra`` (after ``--``) goes to the ``batch`` run of bench_batch.py only, after its own
    arguments (the last of an option wins).
    """
    _, full, small = SCRIPTS[name]
    return [*(small if quick else full), *(extra if name == "batch" else [])]


def plan(names: list[str], quick: bool, extra: list[str]) -> list[str]:
    """The run plan: one line per script, its command and estimated minutes, then the total.

    Estimates (:data:`ESTIMATE_MIN`) are for full sizes on an idle 2-core machine, towns
    made included; a ``--quick`` run and ``--`` arguments are not estimated.
    """
    lines, total = [], 0.0
    for name in names:
        minutes = ESTIMATE_MIN.get(name, 0.0)
        total += minutes
        cost = "" if quick else f" (about {minutes:.1f} min)"
        command = " ".join([SCRIPTS[name][0], *script_args(name, quick, extra)])
        lines.append(f"- {name}: `{command}`{cost}")
    if not quick and not extra:
        lines.append(
            f"estimated {total:.0f} min on an idle 2-core machine, towns made included "
            f"(goal: {GOAL_MIN:g} min)"
        )
    return lines


def run_script(
    name: str, quick: bool, extra: list[str], *, echo: bool = False
) -> tuple[list[dict], str, str]:
    """Run one benchmark; return its rows, a one-line status and its output (for the log).

    The script runs from the checkout's root; with ``echo`` its output is printed while it
    runs (a full run takes minutes).  The status ends in ``(failed)`` when the script
    exited with an error.
    """
    script = SCRIPTS[name][0]
    path = ROOT / "benchmarks" / script
    if not path.exists():
        return [], f"`{script}`: not in benchmarks/ (skipped)", ""
    args = script_args(name, quick, extra)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [sys.executable, str(path), *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if echo and not line.startswith(PREFIX):
                print("    " + line.rstrip(), flush=True)
        returncode = proc.wait()
        err.seek(0)
        stderr = err.read()
    stdout = "".join(lines)
    rows = []
    for line in stdout.splitlines():
        if line.startswith(PREFIX):
            row = json.loads(line[len(PREFIX) :])
            row.setdefault("bench", name)
            if "table" in row:
                if quick:
                    row["note"] = "; ".join(filter(None, [row.get("note"), QUICK_NOTE]))
                rows.append(row)
    status = f"`{' '.join([script, *args])}`: exit {returncode}, {len(rows)} row(s)"
    log = stdout
    if returncode:
        status += " (failed)"
        log = stderr[-2000:] + "\n" + log
    return rows, status, log


def _time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1:  # milliseconds count here (the warm re-check's goal is 50 ms)
        return f"{seconds:.3f} s"
    return f"{seconds:,.2f} s" if seconds < 10 else f"{seconds:,.1f} s"


def cells(row: dict) -> list[str]:
    """Return one row of the markdown table."""
    seconds, against = row.get("seconds"), row.get("against_seconds")
    ratio = f"{seconds / against:.2f}x" if seconds and against else "-"
    met = row.get("met")
    goal = row.get("goal", "") + ("" if met is None else (" (met)" if met else " (**not met**)"))
    peak = row.get("peak_mb")
    against_text = f"{row.get('against', '')} {_time(against)}" if against else "-"
    return [
        str(row.get("what", "")),
        str(row.get("size", "")),
        _time(seconds),
        f"{peak:,.0f}" if isinstance(peak, int | float) and peak == peak else "-",
        against_text,
        ratio,
        goal.strip() or "-",
        str(row.get("note", "")).replace("|", "/"),
    ]


def tables(rows: list[dict]) -> str:
    """Return every row as markdown, one table per ``bench``/``table``."""
    out: list[str] = []
    seen: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        seen.setdefault((row["bench"], row["table"]), []).append(row)
    for (bench, table), group in seen.items():
        out += [f"**{bench}: {table}**", "", "| " + " | ".join(COLUMNS) + " |"]
        out.append(
            "|"
            + "|".join("---:" if c in ("time", "peak MB", "x") else "---" for c in COLUMNS)
            + "|"
        )
        out += ["| " + " | ".join(cells(r)) + " |" for r in group]
        out.append("")
    return "\n".join(out)


class IssueRow(NamedTuple):
    """One row of issue 16's table (or of its goals), and the benchmark row that measures it.

    Parameters
    ----------
    label
        The issue's words.
    goal
        The issue's goal, shown when no row measured it.
    picks
        Alternatives, the first that finds a row wins: each maps row fields to the value
        they must have (``what``: how it starts).  Of several rows found, the last (the
        largest size of a script that runs sizes in order).
    """

    label: str
    goal: str
    picks: tuple[dict[str, str], ...]


ISSUE_ROWS: tuple[IssueRow, ...] = (
    IssueRow(
        "`gis-sw batch`, 100,000 parcels end to end",
        "<= 5 s and <= 2x the bare floor",
        ({"goal_id": "county"},),
    ),
    IssueRow(
        "`gis-sw check`, one 10 x 12 ft addition, 100,000-parcel town, `--map none`",
        "<= 1 s and <= 1.5x the sample's",
        ({"bench": "check", "table": "cold check", "against": "the sample"},),
    ),
    IssueRow(
        "the same on the 323-parcel sample",
        "<= 2x a bare `import geopandas, shapely, pyogrio`",
        ({"bench": "check", "table": "cold check", "size": "323-parcel sample"},),
    ),
    IssueRow(
        "one re-check of that addition, layers loaded once, 100,000-parcel town",
        "<= 50 ms",
        (
            {"bench": "warm", "table": "warm re-check", "what": "Town.screen"},
            {"bench": "check", "table": "warm re-check"},
        ),
    ),
    IssueRow("1,000,000 parcels end to end", "<= 60 s", ({"goal_id": "million"},)),
    IssueRow(
        "5,000,000 parcels streamed (`--stream`), peak memory", "<= 8 GB", ({"goal_id": "state"},)
    ),
    IssueRow(
        "the 100,000-parcel batch on `dask.distributed` (`--engine dask`: a LocalCluster of "
        "2 worker processes)",
        "within 1.1x of local, identical outputs",
        ({"goal_id": "dask"},),
    ),
    IssueRow(
        "DuckDB spatial, the same screening", "figures equal to ours", ({"goal_id": "peer-duckdb"},)
    ),
    IssueRow(
        "PostGIS, the same screening", "figures equal to ours", ({"goal_id": "peer-postgis"},)
    ),
    IssueRow(
        "the batch's full screen, siting included, against the bare floor",
        "<= 2x the bare floor",
        (
            {
                "bench": "siting",
                "table": "batch screen vs the bare floor",
                "what": "gis-sw batch",
                "size": "100,000 parcels",
            },
        ),
    ),
    IssueRow(
        "the same on irregular lots (`benchmarks/irregular_town.py`: real parcels are not "
        "the generated town's axis-aligned rectangles)",
        "<= 2x the bare floor",
        (
            {
                "bench": "siting",
                "table": "batch screen vs the bare floor",
                "what": "gis-sw batch",
                "size": "100,000 parcels, irregular lots",
            },
        ),
    ),
)
"""What the summary above the tables shows, in the issue's order."""


def _matches(row: dict, pick: dict[str, str]) -> bool:
    for key, value in pick.items():
        got = str(row.get(key, ""))
        if not (got.startswith(value) if key == "what" else got == value):
            return False
    return True


def find_row(rows: list[dict], issue: IssueRow) -> dict | None:
    """The row that measures one of the issue's rows (None when this run has none)."""
    for pick in issue.picks:
        found = [row for row in rows if _matches(row, pick)]
        if found:
            return found[-1]
    return None


def summary(rows: list[dict], *, state_skipped: bool = False, quick: bool = False) -> str:
    """Issue 16's table as measured: each row's figure, goal and verdict (markdown).

    The verdict is **met** only where the benchmark row says so; a row that gave no verdict
    is "no verdict", one this run did not measure is **not measured** (never met).
    """
    out = [
        "**issue 16: every goal in one run**",
        "",
        "| issue 16 row | size | measured | goal | verdict |",
        "|---|---|---|---|---|",
    ]
    for issue in ISSUE_ROWS:
        row = find_row(rows, issue)
        if row is None:
            why = "`--quick`: at full size only" if quick else ""
            if state_skipped and issue.picks[0].get("goal_id") == "state":
                why = "`--no-state`"
            verdict = f"**not measured** in this run{f' ({why})' if why else ''}"
            out.append(f"| {issue.label} | - | - | {issue.goal} | {verdict} |")
            continue
        c = dict(zip(COLUMNS, cells(row), strict=True))
        measured = ", ".join(
            t
            for t in (
                c["time"] if c["time"] != "-" else "",
                f"{c['peak MB']} MB" if c["peak MB"] != "-" else "",
                f"{c['x']} {row.get('against', '')}".strip() if c["x"] != "-" else "",
            )
            if t
        )
        met = row.get("met")
        verdict = "no verdict" if met is None else ("met" if met else "**not met**")
        if "earlier run" in str(row.get("note", "")):
            verdict += " (earlier run)"
        goal = str(row.get("goal") or issue.goal).replace("|", "/")
        out.append(f"| {issue.label} | {c['size']} | {measured or '-'} | {goal} | {verdict} |")
    return "\n".join(out) + "\n"


def machine() -> str:
    """Return the machine line printed above the tables."""
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    when = dt.datetime.now(tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Generated by `make bench` (`benchmarks/report.py`) on {when}: {os.cpu_count()} CPUs, "
        f"{memory_gb:.1f} GB, Python {sys.version.split()[0]}, load average {load} at the "
        "end (the machine is shared; compare ratios measured in the same run, not absolute "
        "times)."
    )


def replace_between(path: Path, start: str, end: str, body: str) -> bool:
    """Replace the text between two marker lines of a file; False if a marker is missing."""
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        return False
    path.write_text(pattern.sub(lambda _: f"{start}\n{body}\n{end}", text), encoding="utf-8")
    return True


def body(saved: dict, link: str) -> str:
    """Return the generated section: machine line, quick warning, tables, silent scripts.

    ``saved`` is what :data:`ROWS_FILE` holds (``machine``, ``rows`` and, from runs of this
    version on, ``quick`` and ``no_rows``); ``link`` says where each row is explained.
    """
    head = saved["machine"] + f"  What each row measures: {link}."
    minutes = saved.get("minutes") or {}
    if minutes:
        parts = ", ".join(f"{name} {m:.1f}" for name, m in minutes.items())
        head += (
            f"  This run took {sum(minutes.values()):.1f} min, towns made included "
            f"(goal: {GOAL_MIN:g} min for a full run): {parts}."
        )
    if saved.get("quick"):
        head += (
            "\n\n**A `--quick` run**: every benchmark at small sizes, to check the pipeline; "
            "the goals are set for the full sizes of `make bench`, and a verdict here holds "
            "for the small size only."
        )
    out = [
        head,
        "",
        summary(
            saved["rows"],
            state_skipped=bool(saved.get("no_state")),
            quick=bool(saved.get("quick")),
        ),
        "",
    ]
    out.append(tables(saved["rows"]))
    silent = saved.get("no_rows", [])
    if silent:
        out += ["Gave no rows or failed (their output is in the `make bench` log):", ""]
        out += [f"- {line}" for line in silent]
    return "\n".join(out).rstrip()


def merged(saved: dict, ran: list[str]) -> dict:
    """Return ``saved`` with the rows of :data:`ROWS_FILE` of benchmarks not in ``ran``.

    Each kept row's note ends with when that row was measured ("earlier run, <time>"), so a
    table mixing runs says which row came from which.
    """
    if not ROWS_FILE.exists():
        return saved
    old = json.loads(ROWS_FILE.read_text(encoding="utf-8"))
    found = re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", old.get("machine", ""))
    note = f"earlier run, {found[0] if found else 'time unknown'}"
    kept = [
        row
        if "earlier run" in str(row.get("note", ""))
        else {**row, "note": "; ".join(filter(None, [row.get("note"), note]))}
        for row in old["rows"]
        if row.get("bench") not in ran
    ]
    return {**saved, "rows": kept + saved["rows"]}


def main() -> None:
    """Run the benchmarks, print the tables, write them into the docs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (while developing)")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--only", default=",".join(SCRIPTS))
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the saved rows of the benchmarks not run now (each says when it ran)",
    )
    parser.add_argument(
        "--render",
        type=Path,
        help="write the tables from a saved rows file (no benchmark is run)",
    )
    parser.add_argument(
        "--no-state",
        action="store_true",
        help="leave out the streamed 5,000,000-parcel run (about "
        f"{ESTIMATE_MIN['state']:.0f} min of the full run)",
    )
    parser.add_argument("extra", nargs="*", help="arguments for bench_batch.py (after --)")
    args = parser.parse_args()
    if args.render:
        saved = json.loads(args.render.read_text(encoding="utf-8"))
    else:
        names = [n for n in args.only.split(",") if n and not (args.no_state and n == "state")]
        unknown = [n for n in names if n not in SCRIPTS]
        if unknown:
            parser.error(f"--only: no benchmark {', '.join(unknown)} (known: {', '.join(SCRIPTS)})")
        print("make bench will run, one after the other:", flush=True)
        print("\n".join(plan(names, args.quick, args.extra)), flush=True)
        saved = {
            "rows": [],
            "no_rows": [],
            "quick": args.quick,
            "no_state": args.no_state,
            "minutes": {},
        }
        for name in names:
            started = time.perf_counter()
            print(f"\n=== {name} ===", flush=True)
            found, status, log = run_script(name, args.quick, args.extra, echo=True)
            minutes = (time.perf_counter() - started) / 60
            saved["minutes"][name] = round(minutes, 4)
            print(f"{status}; {minutes:.1f} min", flush=True)
            if status.endswith("(failed)"):
                print(log[:2000], flush=True)
            saved["rows"] += found
            if not found or status.endswith("(failed)"):
                saved["no_rows"].append(status)
            # what ran so far, if the run is stopped: report.py --render PARTIAL_FILE
            PARTIAL_FILE.parent.mkdir(parents=True, exist_ok=True)
            PARTIAL_FILE.write_text(json.dumps({**saved, "machine": machine()}, indent=1), "utf-8")
        saved["machine"] = machine()
        if args.merge:
            saved = merged(saved, names)
        ROWS_FILE.parent.mkdir(parents=True, exist_ok=True)
        ROWS_FILE.write_text(json.dumps(saved, indent=1), "utf-8")
    print(body(saved, "the Performance section of docs/batch.md"))
    if args.no_write:
        return
    for path, start, end, link in (
        (
            ROOT / "docs" / "batch.md",
            "<!-- bench:start -->",
            "<!-- bench:end -->",
            "the text above",
        ),
        (
            ROOT / "README.md",
            "<!-- performance:start -->",
            "<!-- performance:end -->",
            "[docs/batch.md](docs/batch.md#performance)",
        ),
    ):
        if replace_between(path, start, end, body(saved, link)):
            print(f"wrote {path.relative_to(ROOT)}")
        else:
            print(f"{path.relative_to(ROOT)}: markers {start} ... {end} not found; not written")


if __name__ == "__main__":
    main()
