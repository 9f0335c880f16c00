"""Applying waivers: reviewed exceptions that stay visible in every output.

The waivers file is read by :func:`gis_sw.layers.waivers.load_waivers` (its format is
described there); :func:`apply_waivers` marks the findings each waiver matches.  Matching
findings get ``waived = True`` and ``waiver_reason``; they are never dropped, and a waived
finding does not trip ``--fail-on``.  An expired waiver (``expires`` before today) does not
apply and is reported, as is a waiver that matched nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import geopandas as gpd
import numpy as np

from gis_sw.layers.waivers import Waiver, WaiverError, load_waivers

__all__ = [
    "Waiver",
    "WaiverError",
    "WaiverResult",
    "WaiverStatus",
    "apply_waivers",
    "load_waivers",
]


class WaiverStatus(StrEnum):
    """What a waiver did in a run: applied, expired, or matched no finding."""

    APPLIED = "applied"
    EXPIRED = "expired"
    UNMATCHED = "unmatched"


@dataclass(frozen=True, slots=True)
class WaiverResult:
    """What one waiver did in a run."""

    waiver: Waiver
    status: WaiverStatus
    finding_ids: tuple[str, ...] = ()


def _matches(findings: gpd.GeoDataFrame, waiver: Waiver) -> np.ndarray:
    if waiver.finding_id:
        mask = findings["finding_id"].astype(str).to_numpy() == waiver.finding_id
    else:
        mask = (findings["rule_id"].astype(str).to_numpy() == waiver.rule_id) & (
            findings["subject_id"].astype(str).to_numpy() == waiver.subject_id
        )
        if waiver.proposal_id:
            mask &= findings["proposal_id"].astype(str).to_numpy() == waiver.proposal_id
    return np.asarray(mask, dtype=bool)


def apply_waivers(
    findings: gpd.GeoDataFrame,
    waivers: Sequence[Waiver],
    *,
    today: dt.date | None = None,
) -> tuple[gpd.GeoDataFrame, list[WaiverResult]]:
    """Mark findings matched by a current waiver as waived; report every waiver's fate.

    Returns
    -------
    (findings, results)
        A copy of ``findings`` with ``waived`` and ``waiver_reason`` set (no row is dropped),
        and one :class:`WaiverResult` per waiver: applied, expired or unmatched.
    """
    today = today or dt.datetime.now(dt.UTC).date()
    out = findings.copy()
    waived = out["waived"].astype(bool).to_numpy().copy()
    reasons = out["waiver_reason"].fillna("").astype(str).to_numpy(dtype=object).copy()
    results: list[WaiverResult] = []
    for waiver in waivers:
        mask = _matches(out, waiver)
        ids = tuple(out.loc[mask, "finding_id"].astype(str))
        if waiver.is_expired(today):
            results.append(WaiverResult(waiver, WaiverStatus.EXPIRED, ids))
            continue
        if not ids:
            results.append(WaiverResult(waiver, WaiverStatus.UNMATCHED))
            continue
        until = f" (until {waiver.expires.isoformat()})" if waiver.expires else ""
        text = f"{waiver.reason}{until}"
        for pos in np.flatnonzero(mask):
            reasons[pos] = f"{reasons[pos]}; {text}" if waived[pos] and reasons[pos] else text
        waived |= mask
        results.append(WaiverResult(waiver, WaiverStatus.APPLIED, ids))
    out["waived"] = waived
    out["waiver_reason"] = reasons
    return out, results
