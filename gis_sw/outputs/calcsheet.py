"""The runoff calculation sheet as CSV and as a page of the PDF map set.

The table is the screening's (:attr:`gis_sw.screening.Screening.calc_sheet`, columns
:data:`gis_sw.analysis.runoff.sheet.SHEET_COLUMNS`); this module only formats and writes it.
"""

from __future__ import annotations

import logging
import math
import os
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from gis_sw.outputs.atomic import atomic_path, write_bytes_atomic
from gis_sw.outputs.csvcells import csv_text, excel_text
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gis_sw.screening import Screening

logger = logging.getLogger(__name__)

DECIMALS: dict[str, int] = {
    "area_sqft": 1,
    "area_acres": 4,
    "cn": 2,
    "cn_weighted": 2,
    "cn_x_area_acres": 3,
    "c": 3,
    "p_in": 2,
    "s_in": 4,
    "ia_in": 4,
    "ia_p": 4,
    "q_in": 4,
    "volume_cf": 1,
    "tc_hr": 4,
    "qu_csm_in": 2,
    "qp_cfs": 3,
    "i_in_hr": 3,
    "qp_rational_cfs": 3,
    "length_ft": 1,
    "slope_ft_ft": 4,
    "velocity_fps": 3,
    "travel_time_hr": 4,
    "impervious_percent": 2,
    "rv": 4,
    "wqv_cf": 1,
}
"""Decimals written for each numeric column: enough to check every line by hand."""

PAGE_SIZE_IN = (11.0, 8.5)
MAX_PAGE_ROWS = 46


def rounded(table: pd.DataFrame) -> pd.DataFrame:
    """Return the sheet with each numeric column rounded to :data:`DECIMALS`."""
    out = table.copy()
    for column, places in DECIMALS.items():
        if column in out.columns:
            out[column] = pd.to_numeric(out[column], errors="coerce").round(places)
    return out


def write_calc_sheet(table: pd.DataFrame, path: str | Path, *, overwrite: bool = False) -> Path:
    """Write the calculation sheet as CSV (UTF-8 with its BOM, header row), atomically.

    The text is what pandas' ``to_csv`` gives the rounded sheet (lines ending in
    ``os.linesep``, written as bytes), built column by column
    (:func:`gis_sw.outputs.csvcells.csv_text`).

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    text = excel_text(csv_text(rounded(table), lineterminator=os.linesep))
    return write_bytes_atomic(Path(path), text.encode("utf-8"), overwrite=overwrite)


def write_calc_sheet_pdf(
    table: pd.DataFrame, path: str | Path, *, ruleset: Ruleset, overwrite: bool = False
) -> Path | None:
    """Write the calculation sheet as a PDF, one page per proposal; None for an empty table.

    This is the calculation page of the PDF map set written beside the sheets.

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    if len(table) == 0:
        return None
    from matplotlib.backends.backend_pdf import PdfPages

    target = Path(path)
    with atomic_path(target, overwrite=overwrite) as tmp, PdfPages(tmp) as pdf:
        for pid, part in table.groupby("proposal_id", sort=True):
            title = (
                f"Runoff calculation sheet: proposal {pid} ({ruleset.name}, "
                f"{ruleset.storms.design_return_period_yr}-year design storm)"
            )
            pdf.savefig(calc_sheet_figure(part, title=title))
    return target


def write_run_calc_sheet(
    out_dir: str | Path,
    screening: Screening,
    *,
    overwrite: bool = False,
    pdf: bool = False,
) -> list[Path]:
    """Write the screening's ``calcsheet.csv`` (and ``calcsheet.pdf`` with ``pdf``).

    Returns
    -------
    list of Path
        The files written; [] when the ruleset has no hydrology
        (:attr:`gis_sw.screening.Screening.calc_sheet` is None).

    Raises
    ------
    OutputError
        If an output exists without ``overwrite`` or cannot be written.
    """
    table = screening.calc_sheet
    if table is None:
        return []
    written = [write_calc_sheet(table, Path(out_dir) / "calcsheet.csv", overwrite=overwrite)]
    if pdf:
        page = write_calc_sheet_pdf(
            table, Path(out_dir) / "calcsheet.pdf", ruleset=screening.ruleset, overwrite=overwrite
        )
        written += [page] if page is not None else []
    return written


def _fmt(value: Any, places: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float | int):
        return f"{value:,.{places}f}"
    return str(value)


SUBAREA_VIEW = (
    ("scenario", "", 0),
    ("source", "source", 0),
    ("cover", "cover", 0),
    ("hsg", "HSG", 0),
    ("area_sqft", "area sq ft", 0),
    ("cn", "CN", 0),
    ("cn_x_area_acres", "CN x A (ac)", 2),
    ("c", "C", 2),
)
STORM_VIEW = (
    ("scenario", "", 0),
    ("storm_yr", "yr", 0),
    ("p_in", "P in", 2),
    ("cn", "CN", 0),
    ("s_in", "S in", 3),
    ("ia_in", "Ia in", 3),
    ("ia_p", "Ia/P", 3),
    ("q_in", "Q in", 3),
    ("volume_cf", "vol cu ft", 0),
    ("tc_hr", "Tc h", 2),
    ("qu_csm_in", "qu csm/in", 0),
    ("qp_cfs", "qp cfs", 2),
    ("i_in_hr", "i in/h", 2),
    ("qp_rational_cfs", "CiA cfs", 2),
)


def _cells(rows: pd.DataFrame, view: tuple[tuple[str, str, int], ...]) -> list[list[str]]:
    return [[_fmt(row[col], places) for col, _, places in view] for _, row in rows.iterrows()]


HEAD_CHARS = 150
"""Characters of a drainage area's heading line (7 pt bold across the page's 10.3 in: the
composite CN, C and impervious share used to run off the right edge)."""


def calc_sheet_figure(table: pd.DataFrame, *, title: str) -> Figure:
    """Draw the sheet as one landscape letter page: sub-areas, storms, Tc and WQv per area.

    Rows beyond what fits one page are left out with a note pointing to the CSV.
    """
    from matplotlib.figure import Figure  # not imported by a run that draws nothing

    fig = Figure(figsize=PAGE_SIZE_IN)
    fig.text(0.03, 0.965, title, fontsize=12, weight="bold", va="top")
    fig.text(
        0.03,
        0.935,
        "TR-55 (USDA NRCS 1986): S = 1000/CN - 10, Ia = 0.2 S, Q = (P - Ia)^2 / (P - Ia + S), "
        "qp = qu Am Q Fp; Rational Q = C i A; WQv = P Rv A / 12 (NYS SMDM). Screening "
        "figures: the design professional owns the design; the Town Engineer reviews it.",
        fontsize=6.5,
        va="top",
        wrap=True,
    )
    sub_rows = table[table["line"] == "subarea"]
    storm_rows = table[table["line"] == "storm"]
    used = 0
    pieces: list[tuple[str, list[list[str]], list[str]]] = []
    for (pid, did), group in table.groupby(["proposal_id", "drainage_id"], sort=True):
        subs = sub_rows[(sub_rows["proposal_id"] == pid) & (sub_rows["drainage_id"] == did)]
        storms = storm_rows[(storm_rows["proposal_id"] == pid) & (storm_rows["drainage_id"] == did)]
        tc = group[group["line"] == "tc"]
        wqv = group[group["line"] == "wqv"]
        head = f"Proposal {pid}, drainage area {did}"
        if len(tc):
            head += f": Tc {tc['tc_hr'].iloc[0]:.2f} h ({tc['note'].iloc[0]})"
        if len(wqv):
            w = wqv.iloc[0]
            head += (
                f"; WQv = {w['p_in']:.2f} x {w['rv']:.3f} x {w['area_sqft']:,.0f} / 12 = "
                f"{w['wqv_cf']:,.0f} cu ft"
            )
        for comp in group[group["line"] == "composite"].itertuples():
            head += (
                f"; {comp.scenario} CN {comp.cn_weighted:.2f} -> {comp.cn:.0f}, "
                f"C {comp.c:.3f}, impervious {comp.impervious_percent:.1f}%"
            )
        head = "\n".join(textwrap.wrap(head, HEAD_CHARS, subsequent_indent="    "))
        head_lines = head.count("\n") + 1
        if used + len(subs) + len(storms) + 3 + head_lines > MAX_PAGE_ROWS:
            pieces.append(("Further drainage areas left out: see calcsheet.csv", [], []))
            break
        used += len(subs) + len(storms) + 3 + head_lines
        pieces.append((head, _cells(subs, SUBAREA_VIEW), [h for _, h, _ in SUBAREA_VIEW]))
        pieces.append(("", _cells(storms, STORM_VIEW), [h for _, h, _ in STORM_VIEW]))
    row_h = 0.84 / max(used, 12)
    top = 0.90
    for head, cells, columns in pieces:
        if head:
            fig.text(0.03, top, head, fontsize=7, weight="bold", va="top", linespacing=1.3)
            top -= row_h * (head.count("\n") + 1)
        if not cells:
            continue
        height = row_h * (len(cells) + 1)
        ax = fig.add_axes((0.03, top - height, 0.94, height))
        ax.set_axis_off()
        grid = ax.table(cellText=cells, colLabels=columns, loc="upper left", cellLoc="right")
        grid.auto_set_font_size(value=False)
        grid.set_fontsize(6)
        grid.scale(1.0, 1.0)
        top -= height + row_h * 0.5
    if not pieces:
        fig.text(0.03, 0.85, "No drainage area computed.", fontsize=9)
    return fig
