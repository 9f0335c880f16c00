"""The planner's deliverable: report.pdf per application, index.html, summary.xlsx, console."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from pypdf import PdfReader

from gis_sw.analysis.engine import complete_findings
from gis_sw.analysis.findings import make_findings
from gis_sw.api import Town
from gis_sw.errors import OutputError
from gis_sw.outputs.application import (
    DISCLAIMER,
    ParcelLine,
    summarise_application,
    summary_figures,
    verdict_sentence,
    write_application_report,
)
from gis_sw.outputs.console import format_blocks
from gis_sw.outputs.excel import sheet_names, write_summary_xlsx
from gis_sw.outputs.index_page import index_html
from gis_sw.ruleset import Ruleset
from gis_sw.screening import Screening

CRS = "EPSG:2260"
HOSTILE = '<img src=x onerror="alert(1)">'


def _findings(ruleset: Ruleset, proposal_id: str = "P-1") -> gpd.GeoDataFrame:
    box = shapely.box(0, 0, 10, 12)
    rows = [
        make_findings(
            "SW101",
            CRS,
            proposal_id=[proposal_id],
            subject_id=[proposal_id],
            outcome="required",
            message=["Disturbance of 120 sq ft inside zone R-10 reaches the 100 sq ft threshold."],
            measured=[120.0],
            threshold=[100.0],
            unit="sq ft",
            geometry=[box],
        ),
        make_findings(
            "SW205",
            CRS,
            proposal_id=[proposal_id, proposal_id],
            subject_id=["D1", "D2"],
            outcome=["fail", "pass"],
            message=["Device D1 is 9.99 ft from the lot line.", "Device D2 is 10.00 ft."],
            measured=[9.99, 10.0],
            threshold=[10.0, 10.0],
            unit="ft",
            geometry=[box, box],
        ),
        make_findings(
            "SW203",
            CRS,
            proposal_id=[proposal_id],
            subject_id=["D1"],
            outcome="review",
            message=["No groundwater raster or test hole."],
            geometry=[box],
        ),
    ]
    import pandas as pd

    frame = gpd.GeoDataFrame(pd.concat(rows, ignore_index=True), geometry="geometry", crs=CRS)
    return complete_findings(frame, ruleset)


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        pytest.param(
            {"fail": 1, "review": 2, "required": 3},
            "Does not comply as proposed: 1 rule fails; 2 findings need review; "
            "3 obligations attach.",
            id="fail-first",
        ),
        pytest.param(
            {"review": 1},
            "Cannot be cleared by screening: 1 finding needs review (missing data or the Town "
            "Engineer's judgement).",
            id="review-only",
        ),
        pytest.param(
            {"required": 2, "pass": 4},
            "Meets every screened rule, subject to what the law requires: 2 obligations attach.",
            id="required-only",
        ),
        pytest.param(
            {"pass": 9}, "Meets every screened rule; the law attaches no obligation.", id="clear"
        ),
    ],
)
def test_verdict_sentence(counts: dict[str, int], expected: str) -> None:
    assert verdict_sentence(counts) == expected


def test_summary_groups_and_figures(ruleset: Ruleset) -> None:
    summary = summarise_application(_findings(ruleset), "P-1", parcels=[ParcelLine("1.1-1-1")])
    assert dict(summary.counts) == {"fail": 1, "review": 1, "required": 1, "pass": 1}
    assert [x.rule_id for x in summary.problems] == ["SW205", "SW203"]
    fail = summary.problems[0]
    assert (fail.measured, fail.limit) == ("9.99 ft", "10.00 ft")
    assert (summary.obligations[0].measured, summary.obligations[0].limit) == (
        "120 sq ft",
        "100 sq ft",
    )
    assert summary.verdict.startswith("Does not comply as proposed: 1 rule fails")


def test_waived_fail_is_not_counted(ruleset: Ruleset) -> None:
    findings = _findings(ruleset)
    findings.loc[findings["outcome"] == "fail", "waived"] = True
    summary = summarise_application(findings, "P-1")
    assert summary.count("fail") == 0
    assert summary.verdict.startswith("Cannot be cleared by screening")


def test_report_pdf_text(tmp_path: Path, ruleset: Ruleset) -> None:
    summary = summarise_application(
        _findings(ruleset),
        "P-1",
        name="Garage",
        parcels=[ParcelLine("1.1-1-1", "12 Elm St", "Ann Lee")],
    )
    pages = summary_figures(
        summary,
        ruleset_name=ruleset.name,
        ruleset_version=ruleset.version,
        run_date="2026-12-01",
        version="9.9.9",
    )
    path = write_application_report(tmp_path / "report.pdf", pages)
    reader = PdfReader(str(path))
    text = " ".join(" ".join(page.extract_text().split()) for page in reader.pages)
    assert "Does not comply as proposed: 1 rule fails" in text
    assert "Parcel 1.1-1-1: 12 Elm St, owner Ann Lee" in text
    assert "SW205" in text
    assert "measured 9.99 ft, limit 10.00 ft" in text
    for page in reader.pages:
        assert DISCLAIMER in page.extract_text()
        assert "gis-sw 9.9.9" in page.extract_text()
    with pytest.raises(OutputError):
        write_application_report(tmp_path / "report.pdf", pages)


def test_console_blocks_fit_100_columns(ruleset: Ruleset) -> None:
    text = format_blocks(_findings(ruleset))
    lines = text.splitlines()
    assert lines[0].startswith("P-1: Does not comply as proposed")
    assert max(len(line) for line in lines) <= 100
    assert any(
        line.strip().startswith("FAIL     SW205: 9.99 ft against 10.00 ft") for line in lines
    )
    assert not any("D2" in line for line in lines)  # passes are counted, not listed


def test_index_escapes_hostile_ids(ruleset: Ruleset) -> None:
    summary = summarise_application(_findings(ruleset, HOSTILE), HOSTILE)
    page = index_html(
        [summary], {HOSTILE: [("report", f"{HOSTILE}/report.pdf")]}, title="t", footer="f"
    )
    assert "<img" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert 'href="%3Cimg%20src%3Dx%20onerror%3D%22alert%281%29%22%3E/report.pdf"' in page


def test_sheet_names_unique_and_legal() -> None:
    names = sheet_names(["Lot 7/A", "Lot 7_A", "P" * 40, "town"])
    assert len({n.lower() for n in names.values()}) == 4
    assert names["Lot 7_A"] == "Lot 7_A"
    assert names["Lot 7/A"].startswith("Lot 7_A~")
    assert all(len(n) <= 31 and "/" not in n for n in names.values())


def test_xlsx_cells_are_text_not_formulas(tmp_path: Path, ruleset: Ruleset) -> None:
    from openpyxl import load_workbook

    findings = _findings(ruleset, '=HYPERLINK("http://x")\x1b')
    path = write_summary_xlsx(tmp_path / "summary.xlsx", findings)
    book = load_workbook(path)
    assert book.sheetnames[0] == "Town"
    town = book["Town"]
    header = [c.value for c in town[1]]
    col = header.index("proposal_id") + 1
    cell = town.cell(row=2, column=col)
    assert cell.data_type == "s"
    assert cell.value == '=HYPERLINK("http://x")\\x1b'
    measured = [c.value for c in town[chr(ord("A") + header.index("measured"))][1:]]
    assert sorted(m for m in measured if m is not None) == [9.99, 10.0, 120.0]
    assert len(book.sheetnames) == 2


def test_sample_p07_report_and_index(tmp_path: Path, ruleset: Ruleset) -> None:
    """P07 on the sample town: the verdict, the SWPPP line and the five-acre fail are in its
    report, with its parcels' addresses and owners; index.html links the report."""
    from gis_sw.analysis.engine import run_rules
    from gis_sw.layers.read import read_layers, read_proposals
    from gis_sw.outputs.deliverable import application_site, write_application_reports

    sample = Path(__file__).parent.parent / "data" / "sample"
    layers = read_layers(sample / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(sample / "proposals.gpkg", ruleset=ruleset)
    pid = "P07-commercial-phased-7ac"
    findings = run_rules(layers, proposals, ruleset, select=["SW1", "SW3"])
    parcels, zones = application_site(layers, proposals, pid)
    assert zones == ("CB",)
    expected = layers.get("parcels")
    assert expected is not None
    assert (
        parcels[0].address == expected.set_index("parcel_id").loc[parcels[0].parcel_id, "address"]
    )
    written = write_application_reports(
        tmp_path,
        Screening(Town(layers, ruleset), proposals, findings),
        stem=lambda p: p,
        proposal_ids=[pid],
    )
    assert written == [tmp_path / pid / "report.pdf", tmp_path / "index.html"]
    reader = PdfReader(str(written[0]))
    first = " ".join(reader.pages[0].extract_text().split())
    assert "Does not comply as proposed: 1 rule fails" in first
    assert f"Parcel {parcels[0].parcel_id}: {parcels[0].address}, owner {parcels[0].owner}" in first
    assert "SW102 Land development activity" in first
    text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
    assert "FAIL SW301" in text
    assert "5.50 acres" in text
    assert len(reader.pages) == 3  # two summary pages and the phasing chart
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert f'href="{pid}/report.pdf"' in page


@pytest.fixture(scope="module")
def sample_reports(tmp_path_factory: pytest.TempPathFactory, ruleset: Ruleset) -> dict[str, Path]:
    from gis_sw.analysis.engine import run_rules
    from gis_sw.layers.read import read_layers, read_proposals
    from gis_sw.outputs.deliverable import write_application_reports

    sample = Path(__file__).parent.parent / "data" / "sample"
    layers = read_layers(sample / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(sample / "proposals.gpkg", ruleset=ruleset)
    ids = ["P01-addition-r10", "P07-commercial-phased-7ac"]
    findings = run_rules(layers, proposals, ruleset)
    out = tmp_path_factory.mktemp("reports")
    written = write_application_reports(
        out,
        Screening(Town(layers, ruleset), proposals, findings),
        stem=lambda p: p,
        proposal_ids=ids,
    )
    return dict(zip(ids, written, strict=False))


@pytest.mark.parametrize(
    ("pid", "lines"),
    [
        pytest.param(
            "P01-addition-r10",
            [
                "Cannot be cleared by screening",
                (
                    "SW101 Town stormwater management control permit threshold (§ 183-12A): "
                    "120 sq ft against 100 sq ft"
                ),
            ],
            id="P01-permit-for-120-sqft-in-R-10",
        ),
        pytest.param(
            "P07-commercial-phased-7ac",
            [
                "Does not comply as proposed: 1 rule fails",
                (
                    "SW101 Town stormwater management control permit threshold (§ 183-12A): "
                    "304,920 sq ft against 250 sq ft"
                ),
                (
                    "SW102 Land development activity: SWPPP and SPDES construction permit "
                    "(§ 183-6, § 183-7A): 7.00 acres against 1.00 acres"
                ),
                "FAIL SW301 Not more than 5 acres disturbed at any one time",
                "(measured 5.50 acres, limit 5.00 acres)",
            ],
            id="P07-five-acre-fail",
        ),
    ],
)
def test_page_one_of_the_sample_reports(sample_reports, tmp_path, pid, lines) -> None:
    import shutil
    import subprocess

    from PIL import Image

    path = sample_reports[pid]
    first = " ".join(PdfReader(str(path)).pages[0].extract_text().split())
    for line in lines:
        assert line in first, line
    if shutil.which("pdftoppm") is None:
        pytest.skip("poppler's pdftoppm is not installed (apt-get install poppler-utils)")
    stem = tmp_path / "page"
    subprocess.run(
        ["pdftoppm", "-png", "-r", "50", "-f", "1", "-l", "1", "-singlefile", str(path), str(stem)],
        check=True,
    )
    import numpy as np

    image = np.asarray(Image.open(stem.with_suffix(".png")).convert("L"))
    assert image.shape == (550, 425)  # letter at 50 dpi
    dark = int((image < 128).sum())
    assert dark > 2_000  # text on the page, not a blank sheet
