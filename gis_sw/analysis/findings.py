"""Findings: what a rule says about one subject, as rows of a GeoDataFrame.

A check returns rows with the columns of :data:`CHECK_COLUMNS`; the engine
(:func:`gis_sw.analysis.engine.run_rules`) adds the citation, severity, ruleset, stable
``finding_id`` and waiver columns, giving :data:`FINDING_COLUMNS`.

Every check is written the same way: a body decorated with :func:`rule_check` fills a
:class:`Findings` builder, one :meth:`Findings.add` per row (or :meth:`Findings.extend` for
a column at a time).  The builder is bound to the check's rule by the registry, so a check
never writes its own rule id: the rows carry it, and ``rows.citation`` is the rule's
citation from the ruleset for its messages.
"""

from __future__ import annotations

import functools
import hashlib
import math
import weakref
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from geopandas.array import from_shapely
from pyproj import CRS

if TYPE_CHECKING:
    from gis_sw.analysis.context import CheckContext


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
    """Return whether ``value`` is a column of values (not a scalar, not a string)."""
    return isinstance(value, Sequence | np.ndarray | pd.Series) and not isinstance(value, str)


NUMBER_TYPES = (float, int, np.floating, np.integer, type(None))


def _text_ids(values: list[Any]) -> Any:
    """Return ids as text, as ``astype(str)`` of a column gives (missing stays missing)."""
    if values and all(type(v) is str for v in values):
        return values
    return pd.Series(values).astype(str)


def _numbers(values: list[Any]) -> Any:
    """Return floats, as ``pd.to_numeric(..., errors="coerce")`` of a column gives."""
    if all(isinstance(v, NUMBER_TYPES) and not isinstance(v, bool) for v in values):
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
    """Return a findings frame with no rows and the right columns."""
    names = FINDING_COLUMNS if full else CHECK_COLUMNS
    data = {c: pd.Series(dtype="object") for c in names if c != "geometry"}
    return gpd.GeoDataFrame(data, geometry=gpd.GeoSeries([], crs=crs), crs=crs)


def finding_id(ruleset: str, version: str, rule_id: str, proposal_id: str, subject_id: str) -> str:
    """Return the stable id of a finding: a re-run gives the same id, so waivers keep matching."""
    key = "\x1f".join((ruleset, version, rule_id, proposal_id, subject_id))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def tripping(findings: pd.DataFrame, fail_on: str) -> pd.DataFrame:
    """Return the findings that trip ``--fail-on fail_on``: not waived, outcome at or before it.

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
    """Return True for None or an empty geometry."""
    return geometry is None or bool(shapely.is_empty(geometry))


_FIELDS = ("proposal_id", "subject_id", "outcome", "message", "measured", "threshold", "unit")


class Findings:
    """The rows one rule's check gives, built a row (or a column) at a time.

    Made by :func:`rule_check` for the rule the registry binds the check to; the check only
    adds rows.  ``threshold`` and ``unit`` are the defaults of rows that give none;
    ``decimals`` rounds every measured figure (``numpy.round``) when the frame is built.

    Parameters
    ----------
    rule_id
        The rule the rows belong to (stamped on every row).
    citation
        The rule's citation in the ruleset, for the check's messages.
    crs
        CRS of the rows' geometries (the working CRS).
    """

    __slots__ = ("_columns", "citation", "crs", "decimals", "rule_id", "threshold", "unit")

    def __init__(self, rule_id: str, citation: str, crs: CRS) -> None:
        self.rule_id = rule_id
        self.citation = citation
        self.crs = crs
        self.threshold: float = math.nan
        self.unit: str = ""
        self.decimals: int | None = None
        self._columns: dict[str, list[Any]] = {k: [] for k in (*_FIELDS, "geometry")}

    def __len__(self) -> int:
        """Return the number of rows added so far."""
        return len(self._columns["outcome"])

    def add(
        self,
        proposal_id: Any,
        outcome: Outcome | str,
        message: str,
        *,
        subject_id: Any = None,
        measured: float = math.nan,
        threshold: float | None = None,
        unit: str | None = None,
        geometry: Any = None,
    ) -> None:
        """Add one row; ``subject_id`` defaults to the proposal id.

        ``threshold`` and ``unit`` left as None take the builder's defaults.
        """
        values = (
            proposal_id,
            proposal_id if subject_id is None else subject_id,
            outcome,
            message,
            measured,
            threshold,
            unit,
            geometry,
        )
        for column, value in zip(self._columns.values(), values, strict=True):
            column.append(value)

    def extend(
        self,
        *,
        proposal_id: Sequence[Any] | Any,
        outcome: Sequence[Any] | Any,
        message: Sequence[Any] | Any,
        subject_id: Sequence[Any] | Any = None,
        measured: Sequence[Any] | Any = math.nan,
        threshold: Sequence[Any] | Any = None,
        unit: Sequence[Any] | Any = None,
        geometry: Sequence[Any] | Any = None,
    ) -> None:
        """Add a column of rows at once; scalars are repeated to the sequences' length.

        Raises
        ------
        ValueError
            When the sequences have different lengths.
        """
        given = {
            "proposal_id": proposal_id,
            "subject_id": proposal_id if subject_id is None else subject_id,
            "outcome": outcome,
            "message": message,
            "measured": measured,
            "threshold": threshold,
            "unit": unit,
            "geometry": geometry,
        }
        lengths = {len(v) for v in given.values() if _is_sequence(v)}
        if len(lengths) > 1:
            raise ValueError(f"{self.rule_id}: finding columns have different lengths {lengths}")
        n = lengths.pop() if lengths else 1
        for name, value in given.items():
            self._columns[name].extend(list(value) if _is_sequence(value) else [value] * n)

    def set(
        self,
        row: int,
        outcome: Outcome | str,
        message: str,
        *,
        measured: float = math.nan,
        geometry: Any = None,
    ) -> None:
        """Decide row ``row`` (added by :meth:`extend`): outcome, message, measured figure.

        A ``geometry`` of None keeps the row's geometry.
        """
        self._columns["outcome"][row] = outcome
        self._columns["message"][row] = message
        self._columns["measured"][row] = measured
        if geometry is not None:
            self._columns["geometry"][row] = geometry

    def frame(self) -> gpd.GeoDataFrame:
        """Return the rows as a frame with the columns of :data:`CHECK_COLUMNS`."""
        if not len(self):
            return empty_findings(self.crs)
        cols = self._columns
        measured: Any = cols["measured"]
        if self.decimals is not None:
            measured = np.round(np.asarray(measured, dtype="float64"), self.decimals)
        return make_findings(
            self.rule_id,
            self.crs,
            proposal_id=cols["proposal_id"],
            subject_id=cols["subject_id"],
            outcome=cols["outcome"],
            message=cols["message"],
            measured=measured,
            threshold=self._thresholds(),
            unit=self._units(),
            geometry=cols["geometry"],
        )

    def _thresholds(self) -> list[Any]:
        return [self.threshold if v is None else v for v in self._columns["threshold"]]

    def _units(self) -> list[Any]:
        return [self.unit if v is None else v for v in self._columns["unit"]]

    def added(self) -> dict[str, list[Any]]:
        """Return the rows' columns as added, thresholds and units given their defaults.

        Not copies: for reading (:func:`gis_sw.analysis.rows.plain_columns`).
        """
        return {**self._columns, "threshold": self._thresholds(), "unit": self._units()}


CheckBody = Callable[["CheckContext", Findings], None]
"""A check's body: reads the context and adds its rule's rows to the builder."""


def rule_check(body: CheckBody) -> Callable[[CheckContext], gpd.GeoDataFrame]:
    """Make a rule's check from ``body``: ``check(ctx)`` returns the rows ``body`` adds.

    The rule is the one :data:`gis_sw.analysis.registry.RULES` binds the check to, so its id
    is written once, in the registry; the builder carries it and the rule's citation.

    Parameters
    ----------
    body
        ``body(ctx, rows)`` adds rows to ``rows`` (:class:`Findings`).

    Returns
    -------
    callable
        ``check(ctx) -> GeoDataFrame`` with the columns of :data:`CHECK_COLUMNS`.
    """

    @functools.wraps(body)
    def check(ctx: CheckContext) -> gpd.GeoDataFrame:
        from gis_sw.analysis.registry import rule_of  # the registry imports every check

        rule_id = rule_of(check).rule_id
        rows = Findings(rule_id, ctx.citation(rule_id), ctx.crs)
        body(ctx, rows)
        return rows.frame()

    _BODIES[check] = body
    return check


_BODIES: weakref.WeakKeyDictionary[Callable[..., Any], CheckBody] = weakref.WeakKeyDictionary()


def body_of(check: Callable[..., Any]) -> CheckBody | None:
    """Return the body :func:`rule_check` made ``check`` from (None for any other function).

    The engine fills the builder itself and takes its rows as arrays
    (:meth:`Findings.columns`), without the frame ``check(ctx)`` returns.
    """
    return _BODIES.get(check)
