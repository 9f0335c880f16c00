"""Time one live re-check of `gis-sw serve` against a cold `gis-sw check` of the same proposal.

    .venv/bin/python benchmarks/bench_serve.py [--parcels 100000] [--work DIR]
        [--proposal P09-lot-line-devices] [--moves 40]

1. ``gis-sw sample --parcels N --format parquet`` makes a town in ``--work`` (kept for the
   next run; GeoParquet reads fastest).
2. One proposal of the town's named sample cases is written alone to a GeoPackage.
3. Cold: ``gis-sw check ONE.gpkg --layers TOWN --map none`` in a child process, wall time
   (reading the town, the proposal, every rule, the table).
4. Live: ``gis-sw serve --layers TOWN --port 0 --proposals ONE.gpkg`` in a child process
   (its start-up is the town read once), then ``--moves`` POSTs of the proposal to
   ``/api/check``, each with the first device moved by a few tenths of a foot, as the page
   sends while a device is dragged.  Server time is the app's ``Server-Timing`` header
   (parse, screen on the proposal's neighbourhood, encode); round trip is measured by this
   client over HTTP on 127.0.0.1.
5. The same in headless Chromium (Debian's /usr/bin/chromium, when there): the page opens
   the proposal, the device marker is moved and its ``dragend`` fired, and the page's own
   fetch round trip and the time until the findings are shown are read.

Medians and 90th percentiles are printed against the cold check.
The goal (issue 17): median under 100 ms server time.  Run it on a quiet machine: on a
shared one the figures mostly measure the neighbours.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
GIS_SW = str(BIN / "gis-sw")


def make_town(work: Path, parcels: int) -> Path:
    town = work / f"town-{parcels}"
    manifest = town / "layers.toml"
    if manifest.exists():
        print(f"town of {parcels:,} parcels: reusing {town}")
        return town
    started = time.perf_counter()
    subprocess.run(
        [GIS_SW, "sample", "--out", str(town), "--parcels", str(parcels), "--format", "parquet"],
        check=True,
    )
    print(f"town of {parcels:,} parcels generated in {time.perf_counter() - started:.1f} s")
    return town


def one_proposal(town: Path, proposal_id: str, work: Path) -> tuple[Path, dict]:
    from gis_sw.api import read_proposals
    from gis_sw.ruleset import load_ruleset
    from gis_sw.serve.codec import export_gpkg, to_documents

    ruleset = load_ruleset()
    proposals = read_proposals(town / "proposals.gpkg", ruleset=ruleset)
    one = proposals.subset([proposal_id])
    path = work / f"{proposal_id}.gpkg"
    path.write_bytes(export_gpkg(one))
    return path, to_documents(one)[0]


def cold_check(town: Path, proposal: Path, out: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [GIS_SW, "check", str(proposal), "--layers", str(town / "layers.toml"), "--out",
         str(out), "--overwrite", "--map", "none", "--fail-on", "never"],
        check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def start_server(town: Path, proposal: Path) -> tuple[subprocess.Popen[str], str, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            GIS_SW,
            "serve",
            "--layers",
            str(town / "layers.toml"),
            "--port",
            "0",
            "--proposals",
            str(proposal),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if found:
            return proc, found.group(1), time.perf_counter() - started
    raise RuntimeError("gis-sw serve did not start")


def moved(doc: dict, step: int) -> dict:
    out = json.loads(json.dumps(doc))
    for feature in out["features"]:
        if feature["properties"]["layer"] == "devices" and feature["geometry"]["type"] == "Point":
            lon, lat = feature["geometry"]["coordinates"]
            # about 0.3 ft a step east, back and forth, as a drag does
            feature["geometry"]["coordinates"] = [lon + 1.1e-6 * ((step % 7) - 3), lat]
            break
    return out


def post(url: str, doc: dict) -> tuple[float, float, dict]:
    body = json.dumps(doc).encode("utf-8")
    request = urllib.request.Request(
        url + "api/check", data=body, headers={"Content-Type": "application/json"}
    )
    started = time.perf_counter()
    with urllib.request.urlopen(request) as response:
        payload = json.loads(response.read())
        timing = response.headers.get("Server-Timing", "")
    round_trip = (time.perf_counter() - started) * 1000
    parts = {k: float(v) for k, v in re.findall(r"(\w+);dur=([\d.]+)", timing)}
    return parts, round_trip, payload


CHROMIUM = Path("/usr/bin/chromium")
MOVES_JS = """async (n) => {
  const app = window.gswApp;
  const device = app.state.features.find((f) => f.kind === "devices" && f.layer.getLatLng);
  const base = device.layer.getLatLng();
  const out = [];
  for (let i = 0; i < n; i++) {
    const before = app.checks;
    const started = performance.now();
    device.layer.setLatLng([base.lat, base.lng + 1.1e-6 * ((i % 7) - 3)]);
    device.layer.fire("dragend");
    while (app.checks === before || app.pending) await new Promise((r) => setTimeout(r, 2));
    out.push([app.lastCheck.server_ms, app.lastCheck.round_trip_ms, performance.now() - started]);
  }
  return out;
}"""


def chromium_moves(url: str, moves: int) -> np.ndarray | None:
    """(server, fetch round trip, edit to findings shown) ms of each move, in the page."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not CHROMIUM.exists():
        return None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"], headless=True
        )
        page = browser.new_page(bypass_csp=True)  # Playwright's waits need eval
        page.goto(url)
        page.wait_for_function("() => window.gswApp && window.gswApp.ready && window.gswApp.checks")
        page.evaluate(MOVES_JS, 3)  # warm
        rows = page.evaluate(MOVES_JS, moves)
        browser.close()
    return np.array(rows, dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parcels", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench_serve")
    parser.add_argument("--proposal", default="P09-lot-line-devices")
    parser.add_argument("--moves", type=int, default=40)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    town = make_town(args.work, args.parcels)
    proposal, doc = one_proposal(town, args.proposal, args.work)
    cold = cold_check(town, proposal, args.work / "check")
    proc, url, startup = start_server(town, proposal)
    try:
        post(url, doc)  # first request: imports and caches warm
        parts, trips = [], []
        for step in range(args.moves):
            part, trip, payload = post(url, moved(doc, step))
            parts.append(part)
            trips.append(trip)
        findings = len(payload["findings"])
        browser = chromium_moves(url, args.moves)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    s, t = np.array([p["check"] for p in parts]), np.array(trips)
    split = ", ".join(
        f"{k} {np.median([p[k] for p in parts]):.1f} ms" for k in ("parse", "screen", "encode")
    )
    print()
    print(f"town: {args.parcels:,} parcels ({town}); proposal {args.proposal}, {findings} findings")
    print(f"cold `gis-sw check` of the proposal:   {cold * 1000:8.0f} ms")
    print(f"`gis-sw serve` start-up (town read once): {startup * 1000:6.0f} ms")
    print(
        f"live re-check, {args.moves} moves: server median {np.median(s):6.1f} ms "
        f"(p90 {np.percentile(s, 90):.1f}), round trip median {np.median(t):6.1f} ms "
        f"(p90 {np.percentile(t, 90):.1f})"
    )
    print(f"  server time by part (medians): {split}")
    if browser is not None:
        print(
            f"in Chromium, {args.moves} moves: server median {np.median(browser[:, 0]):.1f} ms, "
            f"fetch round trip median {np.median(browser[:, 1]):.1f} ms, edit to findings "
            f"shown median {np.median(browser[:, 2]):.1f} ms (p90 "
            f"{np.percentile(browser[:, 2], 90):.1f})"
        )
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores, load average {load} (1, 5, 15 min)")
    print(f"speed-up over a cold check: {cold * 1000 / np.median(t):.0f}x (round trip)")
    goal = "met" if np.median(s) < 100 else "NOT met"
    print(f"goal, median server time under 100 ms: {goal}")


if __name__ == "__main__":
    main()
