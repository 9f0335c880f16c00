"""The summary: ``summary.csv`` and a table a planner reads on the terminal.

Columns of ``summary.csv``: proposal_id, rule_id, subject_id, outcome, waived,
waiver_reason, measured, threshold, unit, citation, severity, title, message, finding_id
(one row per finding, in the engine's order: proposal, rule, outcome, subject).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pandas as pd

from gis_sw.analysis.wording import figure_pair
from gis_sw.outputs.atomic import write_text_atomic
from gis_sw.outputs.csvcells import csv_text, excel_text
from gis_sw.redact import printable

__all__ = [
    "SUMMARY_COLUMNS",
    "format_notes",
    "format_table",
    "summary_frame",
    "write_summary_csv",
]

SUMMARY_COLUMNS: tuple[str, ...] = (
    "proposal_id",
    "rule_id",
    "subject_id",
    "outcome",
    "waived",
    "waiver_reason",
    "measured",
    "threshold",
    "unit",
    "citation",
    "severity",
    "title",
    "message",
    "finding_id",
)

_OUTCOMES = ("fail", "review", "required", "info", "pass")


def summary_frame(findings: pd.DataFrame) -> pd.DataFrame:
    """Return the findings without geometry, in :data:`SUMMARY_COLUMNS` order."""
    frame = pd.DataFrame(findings).drop(columns="geometry", errors="ignore")
    for name in SUMMARY_COLUMNS:
        if name not in frame.columns:
            frame[name] = None
    out = frame[list(SUMMARY_COLUMNS)].copy()
    out["waived"] = out["waived"].map(lambda v: v is True or v == True)  # noqa: E712
    return out.reset_index(drop=True)


def write_summary_csv(path: str | Path, findings: pd.DataFrame, *, overwrite: bool = False) -> Path:
    """Write ``summary.csv`` (UTF-8, comma-separated, a header row).

    Raises
    ------
    OutputError
        If the file exists and ``overwrite`` is False, or it cannot be written.
    """
    text = csv_text(summary_frame(findings), lineterminator="\n")
    return write_text_atomic(path, excel_text(text), overwrite=overwrite)


def format_value(value: object, unit: str) -> str:
    """``260 sq ft``, ``9.99 ft``, ``$1,400.00``, ``-`` for a missing figure (0.01 precision)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    number = float(value)  # type: ignore[arg-type]
    if unit == "USD":
        return f"${number:,.2f}"
    text = f"{round(number, 2) + 0.0:,.2f}".rstrip("0").rstrip(".")
    if unit == "sq ft" and abs(number) >= 43_560.0:
        return f"{number / 43_560.0:,.2f} acres"
    return f"{text} {unit}".strip()


def format_pair(measured: object, threshold: object, unit: str) -> tuple[str, str]:
    """Return :func:`format_value` of both, with the decimals needed to tell them apart.

    When :func:`format_value` writes two different numbers alike (``5 acres`` for 5.00002
    against 5), both get the decimals their comparison needs
    (:mod:`gis_sw.analysis.wording`), in the finding's own unit.
    """
    shown = format_value(measured, unit), format_value(threshold, unit)
    if shown[0] != shown[1] or unit == "USD":
        return shown
    try:
        m, t = float(measured), float(threshold)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return shown
    if not (math.isfinite(m) and math.isfinite(t)) or m == t:
        return shown
    pair = figure_pair(m, t, base=2)
    return f"{pair[0]} {unit}".strip(), f"{pair[1]} {unit}".strip()


def _text(value: object) -> str:
    return "" if value is None or value is pd.NA or value != value else str(value)  # noqa: PLR0124


def format_table(findings: pd.DataFrame, *, max_subject: int = 34) -> str:
    r"""Return a fixed-width table: rule, proposal, subject, outcome, measured, limit, citation.

    A subject that is the proposal itself shows as ``(proposal)``; ``P-1:floodplain`` shows
    as ``floodplain`` beside its proposal.  Control characters in ids are shown escaped
    (``\x1b``, ``\n``: :func:`gis_sw.redact.printable`), so no id can forge a line.

    The last line counts the outcomes (waived findings are counted apart).
    """
    frame = summary_frame(findings)
    header = ("RULE", "PROPOSAL", "SUBJECT", "OUTCOME", "MEASURED", "LIMIT", "CITATION")
    rows = [header]
    for rec in frame.to_dict("records"):
        unit = _text(rec["unit"])
        subject, proposal = str(rec["subject_id"]), str(rec["proposal_id"])
        if subject == proposal:
            subject = "(proposal)"
        elif subject.startswith(f"{proposal}:"):
            subject = subject.removeprefix(f"{proposal}:")
        subject = printable(subject)
        if len(subject) > max_subject:
            subject = subject[: max_subject - 3] + "..."
        outcome = f"{rec['outcome']} (waived)" if rec["waived"] else str(rec["outcome"])
        rows.append(
            (
                printable(rec["rule_id"]),
                printable(rec["proposal_id"]),
                subject,
                outcome,
                *format_pair(rec["measured"], rec["threshold"], unit),
                printable(_text(rec["citation"])),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(count_line(frame))
    return "\n".join(lines)


def count_line(findings: pd.DataFrame) -> str:
    """Return the count line, e.g. ``14 findings: 1 fail, 3 review, 5 required, 2 info, 3 pass``."""
    frame = summary_frame(findings)
    active = Counter(frame.loc[~frame["waived"], "outcome"])
    parts = [f"{active[o]} {o}" for o in _OUTCOMES if active[o]]
    waived = int(frame["waived"].sum())
    text = f"{len(frame)} finding{'s' if len(frame) != 1 else ''}"
    text += ": " + ", ".join(parts) if parts else ""
    return text + (f"; {waived} waived." if waived else ".")


def format_notes(
    findings: pd.DataFrame, *, outcomes: tuple[str, ...] = ("fail", "review", "required")
) -> str:
    """Return the sentences of the findings that ask for something, one paragraph per finding.

    ``SW101 P-1 required: Disturbance of 134 sq ft inside zone R-10 reaches ...``; a waived
    finding adds ``[waived: reason]``.  Empty when no finding has one of ``outcomes``.  Each
    paragraph is one line: control characters are shown escaped.
    """
    frame = summary_frame(findings)
    frame = frame[frame["outcome"].isin(outcomes)]
    lines = []
    for rec in frame.to_dict("records"):
        waived = f" [waived: {_text(rec['waiver_reason'])}]" if rec["waived"] else ""
        lines.append(
            printable(
                f"{rec['rule_id']} {rec['proposal_id']} {rec['outcome']}: {rec['message']}{waived}"
            )
        )
    return "\n".join(lines)
