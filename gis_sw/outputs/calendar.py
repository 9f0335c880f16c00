r"""Write a construction calendar as CSV and as iCalendar (RFC 5545) for site staff.

The ``.ics`` holds one all-day event per dated duty (``DTSTART;VALUE=DATE``, ``DTEND`` the
next day), lines end in CRLF and are folded at 75 octets without splitting a UTF-8
character, text values are escaped (``\``, ``;``, ``,``, newline), and every ``UID`` is a
hash of the proposal id, the kind of duty and its date, so a re-generated calendar updates
the events already imported instead of duplicating them.  Notices whose milestone has no
date are listed in the CSV (empty date) and in the description of the first notice.
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from gis_sw.analysis.calendar import ConstructionCalendar
from gis_sw.outputs.atomic import check_writable, write_bytes_atomic, write_text_atomic
from gis_sw.outputs.csvcells import csv_row, excel_text
from gis_sw.outputs.timeline import timeline_path

CSV_COLUMNS = ("proposal_id", "date", "kind", "summary", "description", "uid")
PRODID = "-//gis_sw//construction calendar//EN"
UID_DOMAIN = "gis-sw"


@dataclass(frozen=True, slots=True)
class CalendarRow:
    """One line of the calendar (``day`` None for an undated notice)."""

    proposal_id: str
    day: date | None
    kind: str
    summary: str
    description: str

    @property
    def uid(self) -> str:
        """Return the event's stable UID (a hash of proposal, kind and day)."""
        when = self.day.isoformat() if self.day else self.summary
        key = "\x1f".join((self.proposal_id, self.kind, when))
        return f"{hashlib.sha256(key.encode('utf-8')).hexdigest()[:24]}@{UID_DOMAIN}"


def calendar_rows(calendar: ConstructionCalendar, *, proposal_id: str) -> list[CalendarRow]:
    """Return the calendar as rows: dated duties by date (notices first), then undated."""
    rows: list[CalendarRow] = []
    for notice in calendar.notices:
        if notice.milestone_date is None:
            continue
        rows.append(
            CalendarRow(
                proposal_id,
                notice.due,
                "notice",
                f"{proposal_id}: {notice.notice_hours}-hour notice to the Town",
                f"Last day to notify the Town before {notice.milestone} on "
                f"{notice.milestone_date.isoformat()}.",
            )
        )
    for due in calendar.inspections:
        rows.append(
            CalendarRow(
                proposal_id,
                due.due,
                f"{due.kind}_inspection",
                f"{proposal_id}: inspection report due ({due.kind})",
                due.describe(),
            )
        )
    rows.sort(key=lambda r: (r.day or date.max, r.kind != "notice"))
    for notice in calendar.notices:
        if notice.milestone_date is None:
            rows.append(
                CalendarRow(
                    proposal_id,
                    None,
                    "notice",
                    f"{proposal_id}: {notice.notice_hours}-hour notice before {notice.milestone}",
                    f"Notify the Town at least {notice.notice_hours} hours before "
                    f"{notice.milestone} "
                    "(date not in the plan).",
                )
            )
    return rows


def calendar_csv_text(rows: list[CalendarRow]) -> str:
    """CSV text (header :data:`CSV_COLUMNS`, ISO dates, empty date when unknown)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        day = row.day.isoformat() if row.day else ""
        cells = [row.proposal_id, day, row.kind, row.summary, row.description, row.uid]
        writer.writerow(csv_row(cells))
    return buffer.getvalue()


def escape_text(value: str) -> str:
    """Escape an RFC 5545 TEXT value."""
    return (
        value.replace("\\", "\\\\")
        .replace(";", "\\;")
        .replace(",", "\\,")
        .replace("\r\n", "\\n")
        .replace("\n", "\\n")
    )


def fold_line(line: str, *, limit: int = 75) -> bytes:
    """One content line as UTF-8, folded at ``limit`` octets, each piece ending in CRLF."""
    data = line.encode("utf-8")
    pieces: list[bytes] = []
    room = limit
    while len(data) > room:
        cut = room
        while cut > 0 and (data[cut] & 0xC0) == 0x80:  # never split a UTF-8 character
            cut -= 1
        pieces.append(data[:cut])
        data = data[cut:]
        room = limit - 1  # continuation lines start with one space
    pieces.append(data)
    return b"\r\n ".join(pieces) + b"\r\n"


def ics_bytes(
    rows: list[CalendarRow],
    *,
    name: str,
    generated: datetime | None = None,
) -> bytes:
    """Return an RFC 5545 calendar of the dated rows (all-day events)."""
    stamp = (generated or datetime.now(UTC)).astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    undated = [r for r in rows if r.day is None]
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        f"PRODID:{PRODID}",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{escape_text(name)}",
    ]
    first_notice = True
    for row in rows:
        if row.day is None:
            continue
        description = row.description
        if row.kind == "notice" and first_notice and undated:
            first_notice = False
            description += "\nAlso give notice before: " + "; ".join(
                r.summary.split("before ", 1)[-1] for r in undated
            )
        lines += [
            "BEGIN:VEVENT",
            f"UID:{row.uid}",
            f"DTSTAMP:{stamp}",
            f"DTSTART;VALUE=DATE:{row.day.strftime('%Y%m%d')}",
            f"DTEND;VALUE=DATE:{(row.day + timedelta(days=1)).strftime('%Y%m%d')}",
            f"SUMMARY:{escape_text(row.summary)}",
            f"DESCRIPTION:{escape_text(description)}",
            f"CATEGORIES:{escape_text(row.kind)}",
            "TRANSP:TRANSPARENT",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return b"".join(fold_line(line) for line in lines)


def calendar_paths(folder: str | Path, proposal_id: str) -> tuple[Path, Path, Path]:
    """``calendar_<id>.csv``, ``calendar_<id>.ics`` and ``timeline_<id>.png`` in ``folder``.

    Characters other than letters, digits, ``-``, ``_`` and ``.`` in the id become ``_``.
    """
    png = timeline_path(folder, proposal_id)
    safe = png.stem.removeprefix("timeline_")
    return (png.parent / f"calendar_{safe}.csv", png.parent / f"calendar_{safe}.ics", png)


def write_calendar(
    folder: str | Path,
    calendar: ConstructionCalendar,
    *,
    proposal_id: str,
    name: str | None = None,
    overwrite: bool = False,
    generated: datetime | None = None,
) -> tuple[Path, Path]:
    """Write ``calendar_<id>.csv`` and ``calendar_<id>.ics`` into ``folder``, atomically.

    Raises
    ------
    OutputError
        If a file exists and ``overwrite`` is False, or the folder is not writable.
    """
    csv_path, ics_path, _ = calendar_paths(folder, proposal_id)
    for path in (csv_path, ics_path):
        check_writable(path, overwrite=overwrite)
    rows = calendar_rows(calendar, proposal_id=str(proposal_id))
    title = name or f"Stormwater duties: {proposal_id}"
    write_text_atomic(csv_path, excel_text(calendar_csv_text(rows)), overwrite=overwrite)
    write_bytes_atomic(
        ics_path, ics_bytes(rows, name=title, generated=generated), overwrite=overwrite
    )
    return csv_path, ics_path
