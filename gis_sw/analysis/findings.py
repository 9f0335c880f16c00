"""Findings: what a rule says about one subject, as rows of a GeoDataFrame.

A check returns rows with the columns of :data:`CHECK_COLUMNS`; the engine
(:func:`gis_sw.analysis.engine.run_rules`) adds the citation, severity, ruleset, stable
``finding_id`` and waiver columns, giving :data:`FINDING_COLUMNS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from geopandas.array import from_shapely
from pyproj import CRS


class Outcome(StrEnum):
    """Outcome of a finding, as RULES.md defines them."""

    PASS = "pass"  # noqa: S105  # the rule is met
    FAIL = "fail"  # the rule is broken
    REQUIRED = "required"  # the law attaches an obligation (permit, SWPPP, fee, inspection)
    REVIEW = "review"  # data missing, or judgement needed: never a silent pass
    INFO = "info"  # a measured figure the law asks to see


class Severity(StrEnum):
    """How much a finding matters when it is not a pass."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    ADVISORY = "advisory"
    INFO = "info"


FAIL_ON_ORDER: tuple[Outcome, ...] = (Outcome.FAIL, Outcome.REVIEW, Outcome.REQUIRED)
"""``--fail-on X`` trips on X and every outcome before it in this order."""

CHECK_COLUMNS: tuple[str, ...] = (
    "rule_id",
    "proposal_id",
    "subject_id",
    "outcome",
    "message",
    "measured",
    "threshold",
    "unit",
    "geometry",
)

FINDING_COLUMNS: tuple[str, ...] = (
    "finding_id",
    "rule_id",
    "citation",
    "title",
    "outcome",
    "severity",
    "message",
    "subject_id",
    "proposal_id",
    "measured",
    "threshold",
    "unit",
    "ruleset",
    "ruleset_version",
    "waived",
    "waiver_reason",
    "geometry",
)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence | np.ndarray | pd.Series) and not isinstance(value, str)


_NUMBER_TYPES = (float, int, np.floating, np.integer, type(None))


def _text_ids(values: list[Any]) -> Any:
    """Ids as text, as ``astype(str)`` of a column of ``values`` gives (missing stays missing)."""
    if values and all(type(v) is str for v in values):
        return values
    return pd.Series(values).astype(str)


def _numbers(values: list[Any]) -> Any:
    """Floats, as ``pd.to_numeric(..., errors="coerce")`` of a column of ``values`` gives."""
    if all(isinstance(v, _NUMBER_TYPES) and not isinstance(v, bool) for v in values):
        return np.asarray(values, dtype="float64")
    return pd.to_numeric(pd.Series(values), errors="coerce").astype("float64")


def make_findings(
    rule_id: str,
    crs: CRS,
    *,
    proposal_id: Sequence[Any] | Any,
    subject_id: Sequence[Any] | Any,
    outcome: Sequence[Any] | Any,
    message: Sequence[Any] | Any,
    measured: Sequence[Any] | Any = np.nan,
    threshold: Sequence[Any] | Any = np.nan,
    unit: Sequence[Any] | Any = "",
    geometry: Sequence[Any] | Any = None,
) -> gpd.GeoDataFrame:
    """Build check rows; scalars are broadcast to the length of the longest sequence.

    Every check calls this once or twice per run (``gis-sw serve`` re-checks on each edit),
    so the columns are made as plain lists and arrays and the frame is built once from them.

    Returns
    -------
    GeoDataFrame
        Columns :data:`CHECK_COLUMNS`, in ``crs``.
    """
    columns: dict[str, Any] = {
        "proposal_id": proposal_id,
        "subject_id": subject_id,
        "outcome": outcome,
        "message": message,
        "measured": measured,
        "threshold": threshold,
        "unit": unit,
    }
    lengths = [
        len(v)
        for v in [*columns.values(), geometry]
        if isinstance(v, Sequence | np.ndarray | pd.Series | gpd.GeoSeries)
        and not isinstance(v, str)
    ]
    n = max(lengths, default=1)
    if any(length not in (n,) for length in lengths):
        raise ValueError(f"{rule_id}: finding columns have different lengths {lengths}")

    def col(value: Any) -> list[Any]:
        return list(value) if _is_sequence(value) else [value] * n

    if isinstance(geometry, gpd.GeoSeries):
        geoms = geometry.to_numpy()
    elif isinstance(geometry, Sequence | np.ndarray) and not isinstance(geometry, str):
        geoms = np.asarray(list(geometry), dtype=object)
    else:
        geoms = np.asarray([geometry] * n, dtype=object)
    data = {
        "rule_id": [rule_id] * n,
        "proposal_id": _text_ids(col(proposal_id)),
        "subject_id": _text_ids(col(subject_id)),
        "outcome": [str(Outcome(o)) for o in col(outcome)],
        "message": col(message),
        "measured": _numbers(col(measured)),
        "threshold": _numbers(col(threshold)),
        "unit": col(unit),
        # a geometry array that carries the CRS: no CRS comparison
        "geometry": from_shapely(geoms, crs=crs),
    }
    return gpd.GeoDataFrame(pd.DataFrame(data, copy=False), geometry="geometry", copy=False)


def empty_findings(crs: CRS, *, full: bool = False) -> gpd.GeoDataFrame:
    """A findings frame with no rows and the right columns."""
    names = FINDING_COLUMNS if full else CHECK_COLUMNS
    data = {c: pd.Series(dtype="object") for c in names if c != "geometry"}
    return gpd.GeoDataFrame(data, geometry=gpd.GeoSeries([], crs=crs), crs=crs)


def finding_id(ruleset: str, version: str, rule_id: str, proposal_id: str, subject_id: str) -> str:
    """Stable id of a finding: a re-run gives the same id, so waivers keep matching."""
    key = "\x1f".join((ruleset, version, rule_id, proposal_id, subject_id))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def tripping(findings: pd.DataFrame, fail_on: str) -> pd.DataFrame:
    """Findings that make ``--fail-on fail_on`` trip: not waived, outcome at or before it.

    The order is :data:`FAIL_ON_ORDER` (fail, review, required): ``review`` trips on fail and
    review; ``never`` trips on nothing.

    Raises
    ------
    ValueError
        If ``fail_on`` is not fail, review, required or never.
    """
    if fail_on == "never":
        return findings.iloc[0:0]
    names = [str(o) for o in FAIL_ON_ORDER]
    if fail_on not in names:
        raise ValueError(f"fail_on must be one of {[*names, 'never']}, not {fail_on!r}")
    tripping_outcomes = names[: names.index(fail_on) + 1]
    hit = np.array(findings["outcome"].isin(tripping_outcomes), dtype=bool)
    if "waived" in findings.columns:
        hit &= ~findings["waived"].map(lambda v: v is True or v == True).to_numpy(dtype=bool)  # noqa: E712
    return findings[hit]


def is_empty_geometry(geometry: Any) -> bool:
    """True for None or an empty geometry."""
    return geometry is None or bool(shapely.is_empty(geometry))
