"""``make bench``: run every benchmark once, collect their rows, write the tables.

    .venv/bin/python benchmarks/report.py [--quick] [--no-write] [--only batch,check]
        [-- extra arguments for bench_batch.py]

Each benchmark script is run as a child process (so its memory is its own) and
contributes **rows**: every stdout line ``bench-row: {json}`` is one row, with these keys
(all but ``table``, ``what`` and ``seconds`` optional)::

    {"bench": "batch", "table": "end to end", "what": "gis-sw batch", "size": "100,000 parcels",
     "seconds": 26.0, "peak_mb": 805, "against": "bare floor", "against_seconds": 2.6,
     "goal": "<= 5 s", "met": false, "note": "read 1.4 s, screen 20.2 s, ..."}

A script that prints no such line still runs, and the report lists it under the tables
(with any script that exited with an error) as having given no rows.  ``--quick`` runs
each script with the small sizes of its :data:`SCRIPTS` entry (well under a minute each),
says so above the tables and in every row's note.  The
rows are printed as one table per ``table``, with ``x`` = ``seconds / against_seconds``,
and written between ``<!-- bench:start -->`` and ``<!-- bench:end -->`` in docs/batch.md
and between ``<!-- performance:start -->`` and ``<!-- performance:end -->`` in README.md:
those sections are generated, never edited by hand.  To add a benchmark, add it to
:data:`SCRIPTS` and print ``bench-row:`` lines from it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "bench-row: "

SCRIPTS: dict[str, tuple[str, list[str], list[str]]] = {
    # name: (script, arguments of a full run, arguments of a --quick run)
    "batch": (
        "bench_batch.py",
        # the published rows: whole layers at 10,000 and 100,000 parcels; streamed at
        # 100,000 with every figure and at 1,000,000 --quick --no-gpkg (memory, in minutes)
        ["--sizes", "10000", "100000", "--stream-quick-from", "1000000"],
        [
            "--sizes",
            "2000",
            "--stream-sizes",
            "2000",
            "--dask-size",
            "2000",
            "--peer-size",
            "2000",
            "--peers",
            "ours,duckdb",
        ],
    ),
    "check": (
        "bench_check.py",
        ["--parcels", "100000", "--runs", "3"],
        ["--parcels", "5000", "--runs", "2"],
    ),
    "warm": ("bench_warm.py", ["--parcels", "100000"], ["--parcels", "5000", "--repeats", "5"]),
    "siting": ("bench_siting.py", ["--sizes", "10000", "100000"], ["--sizes", "2000"]),
    "bigprop": (
        "bench_big_proposals.py",
        ["--proposals", "20000", "--polygons", "100000"],
        ["--proposals", "500", "--polygons", "5000"],
    ),
}
"""Benchmarks ``make bench`` runs, when their script exists in benchmarks/."""

QUICK_NOTE = "quick sizes (`report.py --quick`)"
"""Appended to every row's note in a ``--quick`` run."""

ROWS_FILE = ROOT / "out" / "bench" / "bench-rows.json"
"""Where the last run's rows are kept (``--render`` writes the tables from them)."""

COLUMNS = ("what", "size", "time", "peak MB", "against", "x", "goal", "note")


def run_script(name: str, quick: bool, extra: list[str]) -> tuple[list[dict], str, str]:
    """Run one benchmark; return its rows, a one-line status and its output (for the log).

    The status ends in ``(failed)`` when the script exited with an error.
    """
    script, full, small = SCRIPTS[name]
    path = ROOT / "benchmarks" / script
    if not path.exists():
        return [], f"`{script}`: not in benchmarks/ (skipped)", ""
    args = [*(small if quick else full), *(extra if name == "batch" else [])]
    done = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, check=False
    )
    rows = []
    for line in done.stdout.splitlines():
        if line.startswith(PREFIX):
            row = json.loads(line[len(PREFIX) :])
            row.setdefault("bench", name)
            if "table" in row:
                if quick:
                    row["note"] = "; ".join(filter(None, [row.get("note"), QUICK_NOTE]))
                rows.append(row)
    status = f"`{' '.join([script, *args])}`: exit {done.returncode}, {len(rows)} row(s)"
    log = done.stdout
    if done.returncode:
        status += " (failed)"
        log = done.stderr[-2000:] + "\n" + log
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
    if saved.get("quick"):
        head += (
            "\n\n**A `--quick` run**: every benchmark at small sizes, to check the pipeline; "
            "the goals are set for the full sizes of `make bench`, and a verdict here holds "
            "for the small size only."
        )
    out = [head, "", tables(saved["rows"])]
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
    parser.add_argument("extra", nargs="*", help="arguments for bench_batch.py (after --)")
    args = parser.parse_args()
    if args.render:
        saved = json.loads(args.render.read_text(encoding="utf-8"))
    else:
        saved = {"rows": [], "no_rows": [], "quick": args.quick}
        for name in args.only.split(","):
            found, status, log = run_script(name, args.quick, args.extra)
            print(status + "\n" + log, flush=True)
            saved["rows"] += found
            if not found or status.endswith("(failed)"):
                saved["no_rows"].append(status)
        saved["machine"] = machine()
        if args.merge:
            saved = merged(saved, args.only.split(","))
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
