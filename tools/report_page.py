"""Draw page 1 of the sample's P07 screening report as a PNG for the README.

    .venv/bin/python tools/report_page.py            # writes docs/images/report-p07.png

Screens the committed sample town (data/sample) with every rule, writes P07's report.pdf
the way ``gis-sw check --out`` does (:func:`gis_sw.outputs.deliverable.write_application_reports`)
into a temporary folder, and turns its first page into a PNG with poppler's ``pdftoppm``
(Debian's poppler-utils).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import gis_sw
from gis_sw.outputs.deliverable import write_application_reports

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample"
TARGET = ROOT / "docs" / "images" / "report-p07.png"
PROPOSAL = "P07-commercial-phased-7ac"


def main() -> int:
    """Write P07's report.pdf and its first page as a PNG; return the exit code."""
    if shutil.which("pdftoppm") is None:
        print("pdftoppm is missing: apt-get install poppler-utils", file=sys.stderr)  # noqa: T201
        return 2
    town = gis_sw.read_town(SAMPLE / "layers.toml")
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)
    screening = town.screen(proposals)
    with tempfile.TemporaryDirectory() as folder:
        report = write_application_reports(
            folder,
            screening,
            stem=lambda pid: pid,
            proposal_ids=[PROPOSAL],
        )[0]
        stem = Path(folder) / "page"
        subprocess.run(
            [
                "pdftoppm",
                "-png",
                "-r",
                "90",
                "-f",
                "1",
                "-l",
                "1",
                "-singlefile",
                str(report),
                str(stem),
            ],
            check=True,
        )
        TARGET.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(stem.with_suffix(".png"), TARGET)
    print(TARGET)  # noqa: T201
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
