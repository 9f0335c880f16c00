"""Take the README's screenshot of `gis-sw serve` on the sample town (docs/serve.png).

    .venv/bin/python benchmarks/screenshot_serve.py [--out docs/serve.png]

Starts ``gis-sw serve --layers data/sample/layers.toml`` on a free port, opens the page in
headless Chromium (Debian's /usr/bin/chromium, through Playwright), chooses lot 0.0-1-2,
draws the limits of disturbance and a roof, places a device 9 ft from the west lot line
(SW205 fails, its line drawn red) and a second one inside the siting polygon, then saves
the window.  Not a benchmark: it lives here because it is a script run by hand.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pyproj import Transformer

ROOT = Path(__file__).resolve().parents[1]
GIS_SW = str(Path(sys.executable).with_name("gis-sw"))
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOT_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--run-all-compositor-stages-before-draw",  # every tile painted before a frame
    "--force-gpu-mem-available-mb=2048",
]
LOT = "0.0-1-2"
WEST, MID_Y = 683122.5, 825125.0
TO_GEO = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "serve.png")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    proc = subprocess.Popen(
        [GIS_SW, "serve", "--layers", str(ROOT / "data/sample/layers.toml"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = next(m.group(1) for line in proc.stdout if (m := re.search(r"(http://\S+/)", line)))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=SHOT_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1600, "height": 900}, bypass_csp=True)
            page.goto(url)
            page.wait_for_function("() => window.gswApp && window.gswApp.ready")
            page.fill("#search", LOT)
            page.press("#search", "Enter")
            page.click(f"button.result[data-parcel='{LOT}']")
            page.wait_for_function("() => !!window.gswApp.lastSiting")
            page.wait_for_timeout(400)

            def at(dx: float, dy: float) -> tuple[float, float]:
                lon, lat = TO_GEO.transform(WEST + dx, MID_Y + dy)
                x, y = page.evaluate("([a, b]) => window.gswApp.toPage(a, b)", [lat, lon])
                return float(x), float(y)

            for button, corners in (
                ("#draw-disturbance", [(5, -5), (70, -5), (70, 70), (5, 70), (5, -5)]),
                ("#draw-impervious", [(30, 30), (55, 30), (55, 55), (30, 55), (30, 30)]),
            ):
                page.click(button)
                for dx, dy in corners:
                    page.mouse.click(*at(dx, dy))
                    page.wait_for_timeout(80)
            for dx in (9.0, 45.0):
                page.click("#place-device")
                page.mouse.click(*at(dx, 80.0 if dx > 10 else 0.0))
                page.wait_for_timeout(300)
            page.wait_for_function("() => window.gswApp.checks > 0 && !window.gswApp.pending")
            page.mouse.move(5, 890)  # no tooltip under the pointer
            page.wait_for_timeout(1500)
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out), animations="disabled")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
