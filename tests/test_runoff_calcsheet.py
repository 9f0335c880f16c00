"""Calculation sheet CSV and PDF page for the hand-built lot of test_runoff_site."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.backends.backend_pdf import PdfPages

from gis_sw.analysis.findings import empty_findings
from gis_sw.analysis.hydrology import calculation_sheet_for
from gis_sw.analysis.runoff.sheet import SHEET_COLUMNS
from gis_sw.api import Town
from gis_sw.errors import OutputError
from gis_sw.outputs.calcsheet import calc_sheet_figure, write_calc_sheet, write_run_calc_sheet
from gis_sw.ruleset import Ruleset, parse_ruleset
from gis_sw.screening import Screening
from tests.test_runoff_site import lot_layers, lot_proposal


@pytest.fixture
def sheet(ruleset: Ruleset) -> pd.DataFrame:
    return calculation_sheet_for(lot_layers(), lot_proposal(), ruleset)


def test_csv_round_trip_keeps_hand_figures(sheet: pd.DataFrame, tmp_path: Path) -> None:
    path = write_calc_sheet(sheet, tmp_path / "calcsheet.csv")
    back = pd.read_csv(path, keep_default_na=False, na_values=[""])
    assert tuple(back.columns) == SHEET_COLUMNS
    post25 = back[(back["scenario"] == "post") & (back["line"] == "storm")]
    post25 = post25[post25["storm_yr"] == 25].iloc[0]
    assert post25["q_in"] == 3.0886
    assert post25["volume_cf"] == 5147.7
    pre = back[(back["scenario"] == "pre") & (back["line"] == "composite")].iloc[0]
    assert pre["cn_weighted"] == 71.97
    assert pre["cn"] == 72
    wqv = back[back["line"] == "wqv"].iloc[0]
    assert wqv["wqv_cf"] == 327.5
    with pytest.raises(OutputError, match="already exists"):
        write_calc_sheet(sheet, path)
    write_calc_sheet(sheet, path, overwrite=True)


def test_figure_page_draws_tables(sheet: pd.DataFrame, tmp_path: Path) -> None:
    fig = calc_sheet_figure(sheet, title="Runoff calculation sheet")
    assert tuple(fig.get_size_inches()) == (11.0, 8.5)
    texts = [t.get_text() for t in fig.texts]
    assert texts[0] == "Runoff calculation sheet"
    assert any("WQv = 1.50 x 0.131 x 20,000 / 12 = 328 cu ft" in t for t in texts)
    cells = [
        c.get_text().get_text()
        for ax in fig.axes
        for tab in ax.tables
        for c in tab.get_celld().values()
    ]
    assert "3.089" in cells  # post 25-year Q
    assert "5,148" in cells  # post 25-year volume, cu ft
    out = tmp_path / "sheet.pdf"
    with PdfPages(out) as pdf:
        pdf.savefig(fig)
    assert out.stat().st_size > 5_000


def test_run_calc_sheet_written_beside_findings(ruleset: Ruleset, tmp_path: Path) -> None:
    written = write_run_calc_sheet(
        tmp_path,
        Screening(Town(lot_layers(), ruleset), lot_proposal(), empty_findings(ruleset.working_crs)),
    )
    assert written == [tmp_path / "calcsheet.csv"]
    back = pd.read_csv(written[0])
    assert set(back["line"]) == {"tc", "subarea", "composite", "storm", "wqv"}


def test_calc_sheet_page_of_the_pdf_map_set(ruleset: Ruleset, tmp_path: Path) -> None:
    from pypdf import PdfReader

    written = write_run_calc_sheet(
        tmp_path,
        Screening(Town(lot_layers(), ruleset), lot_proposal(), empty_findings(ruleset.working_crs)),
        pdf=True,
    )
    assert written == [tmp_path / "calcsheet.csv", tmp_path / "calcsheet.pdf"]
    reader = PdfReader(tmp_path / "calcsheet.pdf")
    assert len(reader.pages) == 1  # one proposal, one page
    page = reader.pages[0]
    assert (float(page.mediabox.width), float(page.mediabox.height)) == (792.0, 612.0)
    text = page.extract_text()
    assert "Runoff calculation sheet: proposal" in text
    assert "5,148" in text  # post-development 25-year volume, cu ft


def test_run_calc_sheet_skipped_without_hydrology_section(ruleset: Ruleset, tmp_path: Path) -> None:
    data = {k: v for k, v in ruleset.raw.items() if k != "hydrology"}
    other_town = parse_ruleset(data)
    written = write_run_calc_sheet(
        tmp_path,
        Screening(
            Town(lot_layers(), other_town), lot_proposal(), empty_findings(other_town.working_crs)
        ),
    )
    assert written == []
    assert not (tmp_path / "calcsheet.csv").exists()
