"""One screening report per application (``report.pdf``): the page a planner files.

The first page (and its continuation when the list is long) is a summary a planner can read
aloud: the application, its parcels with address and owner, its zones, the verdict in one
sentence, what the law requires of it (permit, SWPPP, post-construction controls, fees,
inspections, notices), every fail and review with its reason, measured figure, limit and
citation, and then the passes in one compact list.  The application's site sheets, its
calculation sheet and its phasing chart follow as further pages.

Every page carries the ruleset, the run date, the gis-sw version and "Screening result, not
a permit decision"; the site sheets carry them in their title block, the pages drawn here in
their footer.  Text is real PDF text (DejaVu Sans embedded as a Type 3 subset, as on the
sheets: ``pdf.fonttype`` 42 took 3 s a report to subset here), so it can be selected,
searched and read by a screen reader.

:func:`summarise_application` turns one application's findings into an
:class:`ApplicationSummary` (pure); :func:`summary_figures` lays it out on letter pages;
:func:`write_application_report` writes the PDF atomically, appending the other pages.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from gis_sw.analysis.wording import figure_pair, fmt_number, fmt_usd
from gis_sw.outputs.atomic import readable, write_bytes_atomic
from gis_sw.units import SQFT_PER_ACRE

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DISCLAIMER = "Screening result, not a permit decision"
PAGE_IN = (8.5, 11.0)
"""US letter, portrait."""
MARGIN_IN = 0.75
WRAP_CHARS = 100
"""Characters per line of 9 pt DejaVu Sans across 7 in of text (measured: ~5.0 pt a char)."""

_RC: Any = {"pdf.fonttype": 3, "font.family": "DejaVu Sans"}
_OUTCOME_WORDS = {
    "fail": "FAIL",
    "review": "REVIEW",
    "required": "REQUIRED",
    "info": "INFO",
    "pass": "pass",
}


@dataclass(frozen=True, slots=True)
class ParcelLine:
    """A parcel under the application, as the parcels layer names it."""

    parcel_id: str
    address: str = ""
    owner: str = ""


@dataclass(frozen=True, slots=True)
class FindingLine:
    """One finding as the report prints it."""

    rule_id: str
    title: str
    outcome: str
    citation: str
    message: str
    measured: str
    limit: str
    waived: bool = False
    waiver_reason: str = ""


@dataclass(frozen=True, slots=True)
class ApplicationSummary:
    """What page 1 of an application's report says."""

    proposal_id: str
    name: str
    parcels: tuple[ParcelLine, ...]
    zones: tuple[str, ...]
    verdict: str
    counts: tuple[tuple[str, int], ...]
    obligations: tuple[FindingLine, ...]
    problems: tuple[FindingLine, ...]
    passes: tuple[FindingLine, ...]
    info: tuple[FindingLine, ...] = field(default=())

    def count(self, outcome: str) -> int:
        """How many findings (not waived) have ``outcome``."""
        return dict(self.counts).get(outcome, 0)


def _text(value: object) -> str:
    if type(value) is str:  # most cells: text already
        return value
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float) and value != value:  # noqa: PLR0124  (NaN)
        return ""
    return str(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def verdict_sentence(counts: dict[str, int]) -> str:
    """Return the verdict in one sentence, from the counts of unwaived findings by outcome.

    >>> verdict_sentence({"fail": 1, "review": 2, "required": 3})
    'Does not comply as proposed: 1 rule fails; 2 findings need review; 3 obligations attach.'
    """
    fails, reviews, required = (counts.get(k, 0) for k in ("fail", "review", "required"))
    tail = []
    if reviews:
        tail.append(f"{_plural(reviews, 'finding')} {'needs' if reviews == 1 else 'need'} review")
    if required:
        tail.append(
            f"{_plural(required, 'obligation')} {'attaches' if required == 1 else 'attach'}"
        )
    if fails:
        verb = "fails" if fails == 1 else "fail"
        head = f"Does not comply as proposed: {_plural(fails, 'rule')} {verb}"
        return "; ".join([head, *tail]) + "."
    if reviews:
        rest = f"; {tail[1]}" if len(tail) > 1 else ""
        return (
            f"Cannot be cleared by screening: {tail[0]} (missing data or the Town Engineer's "
            f"judgement){rest}."
        )
    if required:
        return f"Meets every screened rule, subject to what the law requires: {tail[0]}."
    return "Meets every screened rule; the law attaches no obligation."


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # noqa: PLR0124  (NaN)


def _figures(measured: object, limit: object, unit: str) -> tuple[str, str]:
    """Measured figure and limit in one unit, with the decimals their comparison needs.

    Square feet turn into acres only when both figures are an acre or more, so a 250 sq ft
    limit is never printed beside a figure in acres.
    """
    m, lim = _number(measured), _number(limit)
    if unit == "USD":
        return (fmt_usd(m) if m is not None else "", fmt_usd(lim) if lim is not None else "")
    shown = unit
    if unit == "sq ft" and all(x is None or abs(x) >= SQFT_PER_ACRE for x in (m, lim)):
        m, lim = (None if x is None else x / SQFT_PER_ACRE for x in (m, lim))
        shown = "acres"
    integral = all(x is None or x == round(x) for x in (m, lim))
    base = {"acres": 2, "sq ft": 0, "ft": 2}.get(shown, 0 if integral else 2)
    if m is not None and lim is not None:
        pair = figure_pair(m, lim, base=base if abs(m - lim) else 0)
        return f"{pair[0]} {shown}".strip(), f"{pair[1]} {shown}".strip()
    text = [
        "" if x is None else f"{fmt_number(x, 0 if x == round(x) else 2)} {shown}".strip()
        for x in (m, lim)
    ]
    return text[0], text[1]


@lru_cache(maxsize=65_536)
def _figures_of(
    measured: float | None, limit: float | None, unit: str, _signs: tuple[float, float]
) -> tuple[str, str]:
    """:func:`_figures` of figures already numbers (``_signs`` tell -0.0 from 0.0 apart).

    Thousands of applications share their figures (a limit, the same 400 sq ft): each pair
    is formatted once.
    """
    return _figures(measured, limit, unit)


def _line(rec: dict[Any, Any]) -> FindingLine:
    m, lim = _number(rec.get("measured")), _number(rec.get("threshold"))
    signs = (
        math.copysign(1.0, 0.0 if m is None else m),
        math.copysign(1.0, 0.0 if lim is None else lim),
    )
    measured, limit = _figures_of(m, lim, _text(rec.get("unit")), signs)
    return FindingLine(
        rule_id=_text(rec.get("rule_id")),
        title=_text(rec.get("title")),
        outcome=_text(rec.get("outcome")),
        citation=_text(rec.get("citation")),
        message=_text(rec.get("message")),
        measured=measured,
        limit=limit,
        waived=bool(rec.get("waived", False)),
        waiver_reason=_text(rec.get("waiver_reason")),
    )


def summarise_application(
    findings: pd.DataFrame,
    proposal_id: str,
    *,
    name: str = "",
    parcels: Iterable[ParcelLine] = (),
    zones: Iterable[str] = (),
) -> ApplicationSummary:
    """One application's findings as the report's first page states them.

    Parameters
    ----------
    findings
        Findings of a run (:data:`~gis_sw.analysis.findings.FINDING_COLUMNS`); only the rows
        of ``proposal_id`` are used.
    proposal_id
        The application.
    name, parcels, zones
        What the title names: the application's name, the parcels under it, their zones.
    """
    mine = findings[findings["proposal_id"].astype(str) == str(proposal_id)]
    return summary_of_records(
        mine.drop(columns="geometry", errors="ignore").to_dict("records"),
        proposal_id,
        name=name,
        parcels=parcels,
        zones=zones,
    )


def summary_of_records(
    records: list[dict[Any, Any]],
    proposal_id: str,
    *,
    name: str = "",
    parcels: Iterable[ParcelLine] = (),
    zones: Iterable[str] = (),
) -> ApplicationSummary:
    """:func:`summarise_application` of one application's findings given as records.

    (The console's blocks turn a run's findings into records once, not once per
    application: 20,000 applications.)
    """
    order = {"fail": 0, "review": 1, "required": 2, "info": 3, "pass": 4}
    records = sorted(
        records,
        key=lambda r: (order.get(str(r["outcome"]), 9), str(r["rule_id"]), str(r["subject_id"])),
    )
    lines = [_line(r) for r in records]
    counts: dict[str, int] = {}
    for item in lines:
        if not item.waived:
            counts[item.outcome] = counts.get(item.outcome, 0) + 1
    return ApplicationSummary(
        proposal_id=str(proposal_id),
        name=name,
        parcels=tuple(parcels),
        zones=tuple(sorted(set(zones))),
        verdict=verdict_sentence(counts),
        counts=tuple(sorted(counts.items(), key=lambda kv: order.get(kv[0], 9))),
        obligations=tuple(x for x in lines if x.outcome == "required"),
        problems=tuple(x for x in lines if x.outcome in ("fail", "review")),
        passes=tuple(x for x in lines if x.outcome == "pass"),
        info=tuple(x for x in lines if x.outcome == "info"),
    )


# -- layout ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Cursor:
    """Writes lines top to bottom, starting a new page when one is full."""

    footer: str
    title: str
    pages: list[Figure] = field(default_factory=list)
    y_in: float = 0.0

    def _new_page(self) -> None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=PAGE_IN)
        number = len(self.pages) + 1
        fig.text(MARGIN_IN / PAGE_IN[0], 0.4 / PAGE_IN[1], self.footer, fontsize=7, color="0.3")
        fig.text(
            1 - MARGIN_IN / PAGE_IN[0],
            0.58 / PAGE_IN[1],
            f"{self.title}, page {number}",
            fontsize=7,
            color="0.3",
            ha="right",
        )
        self.pages.append(fig)
        self.y_in = PAGE_IN[1] - MARGIN_IN

    def write(
        self,
        text: str,
        *,
        size: float = 9.0,
        weight: str = "normal",
        indent_in: float = 0.0,
        color: str = "black",
        gap_in: float = 0.0,
        wrap: int = WRAP_CHARS,
    ) -> None:
        """Write ``text`` wrapped to the page width, with ``gap_in`` of space before it."""
        # bold DejaVu Sans is about an eighth wider than regular
        widen = 0.87 if weight == "bold" else 1.0
        chars = max(20, int(wrap * widen * 9.0 / size) - int(indent_in * 14.4))
        wrapped = textwrap.wrap(text, chars, break_long_words=True) or [""]
        step_in = size * 1.35 / 72.0
        if not self.pages or self.y_in - gap_in - step_in * min(len(wrapped), 3) < MARGIN_IN:
            self._new_page()
        elif gap_in:
            self.y_in -= gap_in
        for part in wrapped:
            if self.y_in - step_in < MARGIN_IN:
                self._new_page()
            self.y_in -= step_in
            self.pages[-1].text(
                (MARGIN_IN + indent_in) / PAGE_IN[0],
                self.y_in / PAGE_IN[1],
                part,
                fontsize=size,
                fontweight=weight,
                color=color,
                va="bottom",
            )


def _short(item: FindingLine) -> str:
    """Return one line of an obligation.

    For example ``SW101 Town ... permit threshold (§ 183-12A): 304,920 sq ft against 250 sq
    ft``.
    """
    figures = ""
    if item.measured and item.limit:
        figures = f": {item.measured} against {item.limit}"
    elif item.measured:
        figures = f": {item.measured}"
    elif item.limit:
        figures = f" (limit {item.limit})"
    return f"{item.rule_id} {item.title} ({item.citation}){figures}"


def _finding_block(cur: _Cursor, item: FindingLine) -> None:
    word = _OUTCOME_WORDS.get(item.outcome, item.outcome)
    figures = ""
    if item.measured or item.limit:
        figures = f" (measured {item.measured or '-'}, limit {item.limit or '-'})"
    waived = f" [waived: {item.waiver_reason}]" if item.waived else ""
    colour = {"fail": "#b00020", "review": "#8a5a00"}.get(item.outcome, "black")
    cur.write(
        f"{word}  {item.rule_id} {item.title}, {item.citation}{figures}{waived}",
        weight="bold",
        color=colour,
        gap_in=0.05,
    )
    cur.write(item.message, indent_in=0.25)


def summary_figures(
    summary: ApplicationSummary,
    *,
    ruleset_name: str,
    ruleset_version: str,
    run_date: str,
    version: str,
) -> list[Figure]:
    """Draw the summary pages of one application's report (letter, portrait)."""
    footer = (
        f"Ruleset {ruleset_name}, version {ruleset_version} · run {run_date} · "
        f"gis-sw {version} · {DISCLAIMER}"
    )
    cur = _Cursor(footer=footer, title=f"Application {summary.proposal_id}")
    cur.write(f"Stormwater screening report: application {summary.proposal_id}", size=15)
    if summary.name:
        cur.write(summary.name, size=11, gap_in=0.02)
    cur.write(DISCLAIMER + ". The Town Engineer decides.", size=8, color="0.3", gap_in=0.04)
    for parcel in summary.parcels or (ParcelLine("(no parcel of the parcels layer)"),):
        where = ", ".join(
            x for x in (parcel.address, parcel.owner and f"owner {parcel.owner}") if x
        )
        cur.write(f"Parcel {parcel.parcel_id}" + (f": {where}" if where else ""), gap_in=0.06)
    cur.write("Zones: " + (", ".join(summary.zones) or "none mapped"), gap_in=0.02)
    cur.write("Verdict", size=12, weight="bold", gap_in=0.18)
    cur.write(summary.verdict, size=11, gap_in=0.04)
    cur.write("What the law requires of it", size=12, weight="bold", gap_in=0.2)
    if not summary.obligations:
        cur.write("Nothing.", gap_in=0.04)
    for item in summary.obligations:
        cur.write(f"- {_short(item)}", gap_in=0.03)
    cur.write("Fails and reviews", size=12, weight="bold", gap_in=0.2)
    if not summary.problems:
        cur.write("None.", gap_in=0.04)
    for item in summary.problems:
        _finding_block(cur, item)
    cur.write("Rules met", size=12, weight="bold", gap_in=0.2)
    met_rules = dict.fromkeys(f"{p.rule_id} {p.title}" for p in summary.passes)
    met = "; ".join(met_rules) or "None."
    cur.write(met, gap_in=0.04)
    if summary.obligations:
        cur.write("What is required, in full", size=12, weight="bold", gap_in=0.2)
        for item in summary.obligations:
            _finding_block(cur, item)
    if summary.info:
        cur.write("Figures the law asks to see", size=12, weight="bold", gap_in=0.2)
        for item in summary.info:
            cur.write(f"{item.rule_id}: {item.message}", gap_in=0.03)
    return cur.pages


def stamp_figure(fig: Figure, *, footer: str) -> Figure:
    """Add the report's footer line to a page drawn elsewhere (calc sheet, phasing chart)."""
    fig.text(0.02, 0.008, footer, fontsize=6, color="0.3")
    return fig


def write_application_report(
    path: str | Path,
    pages: Sequence[Figure],
    *,
    attachments: Sequence[Path | tuple[Path, int]] = (),
    after: Sequence[Figure] = (),
    overwrite: bool = False,
) -> Path:
    """Write ``pages``, ``attachments`` and ``after`` as one PDF, atomically.

    ``attachments`` are whole PDFs, or ``(pdf, page index)``.

    Raises
    ------
    OutputError
        If ``path`` exists without ``overwrite`` or cannot be written.
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_pdf import PdfPages
    from pypdf import PdfReader, PdfWriter

    def rendered(figures: Sequence[Figure]) -> PdfReader:
        buffer = io.BytesIO()
        with mpl.rc_context(_RC), PdfPages(buffer) as pdf:
            for fig in figures:
                pdf.savefig(fig)
        return PdfReader(io.BytesIO(buffer.getvalue()))

    writer = PdfWriter()
    writer.append(rendered(pages))
    for extra in attachments:
        if isinstance(extra, tuple):
            writer.append(PdfReader(str(readable(extra[0]))), pages=[extra[1]])
        else:
            writer.append(PdfReader(str(readable(extra))))
    if after:
        writer.append(rendered(after))
    merged = io.BytesIO()
    writer.write(merged)
    return write_bytes_atomic(path, merged.getvalue(), overwrite=overwrite)
