"""The waivers file (TOML or CSV): reviewed exceptions, read into :class:`Waiver` records.

Applying them to findings is :func:`gis_sw.analysis.waivers.apply_waivers`.

A waiver names one finding, either by its stable ``finding_id`` or by ``rule_id`` plus
``subject_id`` (and optionally ``proposal_id``), with a ``reason`` and an optional ``expires``
date.  Matching findings get ``waived = True`` and ``waiver_reason``; they are never dropped,
and a waived finding does not trip ``--fail-on``.  An expired waiver (``expires`` before
today) does not apply and is reported, as is a waiver that matched nothing.

TOML::

    [[waiver]]
    finding_id = "3f2a9c0d1b7e4a55"
    reason = "Town Engineer letter of 2026-05-02"
    expires = 2026-12-31

    [[waiver]]
    rule_id = "SW106"
    subject_id = "P-7:floodplain"
    reason = "Floodplain development permit issued under Chapter 108"

CSV: a header with ``finding_id,rule_id,subject_id,proposal_id,reason,expires`` (only
``reason`` and either ``finding_id`` or ``rule_id`` + ``subject_id`` are needed).  A cell
that gis_sw's own CSVs (and spreadsheets) write with a leading apostrophe so that it is not
run as a formula (``'=P1``, :mod:`gis_sw.outputs.csvcells`) is read as the text meant
(``=P1``), so a waiver copied from ``summary.csv`` matches its finding.
"""

from __future__ import annotations

import csv
import datetime as dt
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gis_sw.errors import GisSwError

__all__ = ["Waiver", "WaiverError", "load_waivers"]

_FIELDS = ("finding_id", "rule_id", "subject_id", "proposal_id", "reason", "expires")

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a CSV cell escaped with ``'`` starts with after it: the same characters as
:data:`gis_sw.outputs.csvcells.FORMULA_STARTS` (layers do not import outputs; a test
checks that the two agree)."""


def csv_text(value: str) -> str:
    """Return the text a CSV cell means: ``'=P1`` (escaped against formulas) is ``=P1``."""
    if value.startswith("'") and value[1:].startswith(_FORMULA_STARTS):
        return value[1:]
    return value


class WaiverError(GisSwError, ValueError):
    """A waivers file cannot be read or has an invalid entry."""


@dataclass(frozen=True, slots=True)
class Waiver:
    """One reviewed exception.

    Attributes
    ----------
    reason
        Why the finding is waived (shown in every output).
    finding_id, rule_id, subject_id, proposal_id
        What it matches: ``finding_id``, or ``rule_id`` + ``subject_id`` (+ ``proposal_id``).
    expires
        Last day the waiver applies (inclusive); None for no expiry.
    where
        File and entry it came from, for messages.
    """

    reason: str
    finding_id: str | None = None
    rule_id: str | None = None
    subject_id: str | None = None
    proposal_id: str | None = None
    expires: dt.date | None = None
    where: str = ""

    def is_expired(self, today: dt.date) -> bool:
        """Return True when the waiver ended before ``today``."""
        return self.expires is not None and self.expires < today

    def label(self) -> str:
        """Return what the waiver names, for messages."""
        if self.finding_id:
            return f"finding {self.finding_id}"
        scope = f" of proposal {self.proposal_id}" if self.proposal_id else ""
        return f"{self.rule_id} {self.subject_id}{scope}"


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _date(value: Any, where: str) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise WaiverError(
            f"{where}: expires = {value!r} is not a date. Fix: write it as YYYY-MM-DD."
        ) from None


def _waiver(entry: dict[str, Any], where: str, known_rules: set[str] | None) -> Waiver:
    extra = sorted(set(entry) - set(_FIELDS))
    if extra:
        raise WaiverError(
            f"{where}: unknown field(s) {', '.join(extra)}. Fix: use only {', '.join(_FIELDS)}."
        )
    values = {k: _clean(entry.get(k)) for k in _FIELDS if k != "expires"}
    if not values["reason"]:
        raise WaiverError(f'{where}: no reason given. Fix: add reason = "..." to the waiver.')
    if not values["finding_id"] and not (values["rule_id"] and values["subject_id"]):
        raise WaiverError(
            f"{where}: a waiver needs finding_id, or rule_id and subject_id. Fix: copy them "
            "from findings.gpkg or summary.csv."
        )
    rule = values["rule_id"]
    if rule is not None:
        rule = rule.upper()
        if known_rules is not None and rule not in known_rules:
            raise WaiverError(
                f"{where}: rule_id {values['rule_id']!r} is not a rule. Fix: see `gis-sw rules`."
            )
    return Waiver(
        reason=values["reason"],
        finding_id=values["finding_id"],
        rule_id=rule,
        subject_id=values["subject_id"],
        proposal_id=values["proposal_id"],
        expires=_date(entry.get("expires"), where),
        where=where,
    )


def load_waivers(path: str | Path, *, known_rules: set[str] | None = None) -> list[Waiver]:
    """Read a waivers file (``.toml`` or ``.csv``).

    Raises
    ------
    WaiverError
        If the file is missing, unreadable, of another type, or an entry is invalid (the
        message names the file and entry).
    """
    path = Path(path)
    if not path.is_file():
        raise WaiverError(f"waivers file {path} does not exist. Fix: check the --waivers path.")
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise WaiverError(f"waivers file {path} cannot be read: {exc}.") from None
    if suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise WaiverError(f"waivers file {path} is not valid TOML: {exc}.") from None
        entries = data.get("waiver", [])
        extra = sorted(set(data) - {"waiver"})
        if extra or not isinstance(entries, list):
            raise WaiverError(
                f"waivers file {path}: expected only [[waiver]] tables, found {extra or 'waiver'}."
                " Fix: write each waiver as a [[waiver]] table."
            )
        return [
            _waiver(dict(e), f"{path} [[waiver]] #{i}", known_rules)
            for i, e in enumerate(entries, start=1)
        ]
    if suffix == ".csv":
        reader = csv.DictReader(text.splitlines())
        header = [h.strip() for h in reader.fieldnames or []]
        if "reason" not in header:
            raise WaiverError(
                f"waivers file {path} has no 'reason' column (header: {header}). Fix: the header "
                f"is {','.join(_FIELDS)}."
            )
        return [
            _waiver(
                {
                    k.strip(): csv_text(v)
                    for k, v in row.items()
                    if k is not None and isinstance(v, str) and v != ""
                },
                f"{path} line {i}",
                known_rules,
            )
            for i, row in enumerate(reader, start=2)
        ]
    raise WaiverError(f"waivers file {path} must end in .toml or .csv.")
