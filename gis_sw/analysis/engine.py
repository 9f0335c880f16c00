"""Run the rules: every check over every proposal, then citations, severities and ids.

A check that crashes (a bug, or data no validator foresaw) does not stop the others and
never turns into a silent pass: with ``on_error="review"`` (the default) it becomes one
``review`` finding per proposal naming the error; ``on_error="raise"`` re-raises.  Bad input
(:class:`~gis_sw.errors.GisSwError`) always propagates, so the CLI answers exit 2.

Every check's rows pass through :func:`gis_sw.analysis.coverage.apply_coverage`: a pass on a
subject outside the coverage of a layer the rule relies on becomes review.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import geopandas as gpd
import numpy as np
import pandas as pd
from geopandas.array import from_shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.coverage import (
    apply_coverage,
    coverage_applies,
    name_shared_lots,
    shared_lot_messages,
)
from gis_sw.analysis.findings import (
    CHECK_COLUMNS,
    FINDING_COLUMNS,
    Findings,
    Outcome,
    Severity,
    body_of,
    empty_findings,
    finding_id,
)
from gis_sw.analysis.registry import RULES_BY_ID, Rule, rule_title, select_rules
from gis_sw.analysis.rows import RowColumns, columns_of, plain_columns
from gis_sw.errors import GisSwError, ProposalError
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

_OUTCOME_ORDER = {o: i for i, o in enumerate(("fail", "review", "required", "info", "pass"))}

_TEXT_KEYS = ("proposal_id", "rule_id", "subject_id")


def _joined(parts: list[RowColumns]) -> RowColumns:
    """All the rows of ``parts``; where the parts' dtypes differ, as ``pd.concat`` joins them."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0].dtypes
    if any(p.dtypes != first for p in parts[1:]):
        frames = [_frame_of(p) for p in parts]
        return columns_of(pd.concat(frames, ignore_index=True))
    return RowColumns(
        {c: np.concatenate([p.arrays[c] for p in parts]) for c in CHECK_COLUMNS}, dict(first)
    )


def _frame_of(rows: RowColumns) -> pd.DataFrame:
    """Return a frame of the rows' columns with their dtypes (for ``pd.concat`` of unlike parts)."""
    return pd.DataFrame(
        {
            c: pd.array(rows.arrays[c], dtype=rows.dtypes[c])
            if c != "geometry"
            else from_shapely(rows.arrays[c])
            for c in CHECK_COLUMNS
        },
        copy=False,
    )


def _sort_codes(values: np.ndarray) -> np.ndarray:
    """Integer codes that sort as ``values`` sort (missing values last)."""
    missing = pd.isna(values)
    codes = np.full(len(values), len(values), dtype=np.int64)
    present = ~missing
    if present.any():
        _, inverse = np.unique(values[present], return_inverse=True)
        codes[present] = inverse
    return codes


def _complete(rows: RowColumns, ruleset: Ruleset, crs: Any) -> gpd.GeoDataFrame:
    """Return the findings frame of check rows: one frame, built once, sorted."""
    n = len(rows)
    if n == 0:
        return empty_findings(ruleset.working_crs, full=True)
    a = rows.arrays
    rule_ids = a["rule_id"]
    per_rule = {}
    for rid in dict.fromkeys(rule_ids.tolist()):
        rule = RULES_BY_ID[rid]
        per_rule[rid] = (ruleset.citation(rule.rule_id), rule_title(rule, ruleset), rule)
    facts = [per_rule[r] for r in rule_ids.tolist()]
    passive = np.isin(a["outcome"], [str(Outcome.PASS), str(Outcome.INFO)])
    severity = [
        str(Severity.INFO) if quiet else str(f[2].severity)
        for quiet, f in zip(passive.tolist(), facts, strict=True)
    ]
    ids = [
        finding_id(ruleset.name, ruleset.version, r, p, s)
        for r, p, s in zip(rule_ids, a["proposal_id"], a["subject_id"], strict=True)
    ]
    if len(set(ids)) != n:
        seen = Counter(ids)
        dupes = [i for i, f in enumerate(ids) if seen[f] > 1][:3]
        sample = [{k: a[k][i] for k in ("rule_id", "proposal_id", "subject_id")} for i in dupes]
        raise RuntimeError(f"two findings share one (rule, proposal, subject): {sample}")
    order = np.array([_OUTCOME_ORDER.get(o, n) for o in a["outcome"].tolist()])
    keys = [_sort_codes(a[k]) for k in _TEXT_KEYS]
    # np.lexsort sorts by its last key first, and is stable
    sort = np.lexsort((keys[2], order, keys[1], keys[0]))
    derived: dict[str, Any] = {
        "citation": [f[0] for f in facts],
        "title": [f[1] for f in facts],
        "severity": severity,
        "ruleset": [ruleset.name] * n,
        "ruleset_version": [ruleset.version] * n,
        "finding_id": ids,
        "waived": [False] * n,
        "waiver_reason": [""] * n,
    }
    data: dict[str, Any] = {}
    for name in FINDING_COLUMNS:
        if name == "geometry":
            data[name] = from_shapely(a[name][sort], crs=crs)
        elif name in derived:
            values = derived[name]
            data[name] = [values[i] for i in sort.tolist()]
        else:
            data[name] = pd.array(a[name][sort], dtype=rows.dtypes[name])
    frame = pd.DataFrame(data, copy=False)
    return gpd.GeoDataFrame(frame, geometry="geometry", copy=False)


def complete_findings(rows: gpd.GeoDataFrame, ruleset: Ruleset) -> gpd.GeoDataFrame:
    """Add citation, title, severity, ruleset, finding id and waiver columns to check rows.

    Returns
    -------
    GeoDataFrame
        Columns :data:`FINDING_COLUMNS` in the CRS of ``rows``, sorted by proposal, rule,
        outcome and subject.

    Raises
    ------
    RuntimeError
        When two rows share one (rule, proposal, subject).
    """
    if len(rows) == 0:
        return empty_findings(ruleset.working_crs, full=True)
    return _complete(columns_of(rows), ruleset, rows.crs)


def _crash_rows(rule: Rule, ctx: CheckContext, exc: Exception) -> gpd.GeoDataFrame:
    """Return one review row per proposal naming the error a crashing check raised."""
    ids = ctx.proposal_ids
    if not ids:
        return empty_findings(ctx.crs)
    text = f"{type(exc).__name__}: {exc}".strip()
    if len(text) > 300:
        text = text[:297] + "..."
    rows = Findings(rule.rule_id, ctx.citation(rule.rule_id), ctx.crs)
    rows.extend(
        proposal_id=ids,
        outcome=Outcome.REVIEW,
        message=f"The {rule.rule_id} check could not run ({text}): review this rule by hand.",
        geometry=[ctx.disturbance_union.loc[p] for p in ids],
    )
    return rows.frame()


def run_check(
    rule: Rule, ctx: CheckContext, *, on_error: Literal["raise", "review"] = "raise"
) -> gpd.GeoDataFrame:
    """Run one rule's check and verify its columns.

    Raises
    ------
    GisSwError
        Bad input found by the check (always propagated).
    RuntimeError
        With ``on_error="raise"``, when the check returns malformed rows; any other
        exception of the check is re-raised as is.
    """
    return _run(rule, ctx, on_error)[list(CHECK_COLUMNS)]


T = TypeVar("T")


def _guarded(
    rule: Rule,
    ctx: CheckContext,
    on_error: Literal["raise", "review"],
    run: Callable[[], T],
    crashed: Callable[[gpd.GeoDataFrame], T],
) -> T:
    """Return ``run()``; a crash (not bad input) becomes ``crashed`` of its review rows."""
    try:
        return run()
    except GisSwError:
        raise
    except Exception as exc:
        if on_error == "raise":
            raise
        log.error("%s check failed: %s", rule.rule_id, exc, exc_info=log.isEnabledFor(10))
        return crashed(_crash_rows(rule, ctx, exc))


def _run(rule: Rule, ctx: CheckContext, on_error: Literal["raise", "review"]) -> gpd.GeoDataFrame:
    """Return the check's rows, coverage and shared lots applied.

    The rows have every column of :data:`CHECK_COLUMNS`, maybe more.
    """
    return _guarded(rule, ctx, on_error, lambda: _frame_rows(rule, ctx), lambda rows: rows)


def _frame_rows(rule: Rule, ctx: CheckContext) -> gpd.GeoDataFrame:
    rows = _checked(rule, rule.check(ctx))
    return name_shared_lots(apply_coverage(rule.rule_id, rows, ctx), ctx)


def _run_columns(
    rule: Rule, ctx: CheckContext, on_error: Literal["raise", "review"]
) -> RowColumns | None:
    """Return the check's rows as :func:`_run` does, as plain arrays (None: no rows).

    A check made by :func:`~gis_sw.analysis.findings.rule_check` fills its builder here and
    its rows are taken as arrays without a frame, unless coverage may change them or a
    value needs pandas' conversion; then, and for any other check, through :func:`_run`.
    """

    def columns() -> RowColumns | None:
        registered = RULES_BY_ID.get(rule.rule_id)
        body = (
            body_of(rule.check)
            if registered is not None and registered.check is rule.check
            else None
        )
        if body is not None and not coverage_applies(rule.rule_id, ctx):
            rows = Findings(rule.rule_id, ctx.citation(rule.rule_id), ctx.crs)
            body(ctx, rows)
            if not len(rows):
                return None
            plain = plain_columns(rows)
            if plain is not None:
                return _shared_lots(plain, ctx)
            return columns_of(name_shared_lots(rows.frame(), ctx))
        return _some(_frame_rows(rule, ctx))

    return _guarded(rule, ctx, on_error, columns, _some)


def _some(rows: gpd.GeoDataFrame) -> RowColumns | None:
    return columns_of(rows) if len(rows) else None


def _shared_lots(rows: RowColumns, ctx: CheckContext) -> RowColumns:
    """Return the rows with :func:`~gis_sw.analysis.coverage.name_shared_lots`' messages."""
    messages = shared_lot_messages(rows.arrays["message"], ctx)
    if messages is None:
        return rows
    return RowColumns({**rows.arrays, "message": messages}, rows.dtypes)


def _checked(rule: Rule, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    missing = [c for c in CHECK_COLUMNS if c not in rows.columns]
    if missing:
        raise RuntimeError(f"{rule.rule_id} check returned no column(s) {missing}")
    bad = set(rows["rule_id"].tolist()) - {rule.rule_id}
    if bad:
        raise RuntimeError(f"{rule.rule_id} check returned rows for {sorted(bad)}")
    return rows


def check_unique_devices(proposals: Proposals) -> None:
    """Refuse devices that share one id within a proposal: their findings could not be told apart.

    Raises
    ------
    ProposalError
        Naming the proposal, the repeated device ids and the fix.
    """
    devices = proposals.devices
    if len(devices) < 2:
        return
    keys = pd.DataFrame(
        {"proposal": devices["proposal_id"].astype(str), "device": devices["device_id"].astype(str)}
    )
    repeated = keys[keys.duplicated(keep=False)].drop_duplicates()
    if len(repeated):
        listed = ", ".join(f"{d} (proposal {p})" for p, d in repeated.head(5).to_numpy())
        raise ProposalError(
            f"{proposals.source}: devices layer: device_id {listed} is given to more than one "
            "device of a proposal, so their findings could not be told apart. Fix: give each "
            "device its own device_id."
        )


def run_rules(
    layers: LayerSet,
    proposals: Proposals,
    ruleset: Ruleset,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    context: CheckContext | None = None,
    on_error: Literal["raise", "review"] = "review",
) -> gpd.GeoDataFrame:
    """Screen every proposal with every selected rule.

    Each check's rows are taken as plain arrays and the findings frame is built once, at
    the end (``gis-sw serve`` re-checks one proposal on every edit: a frame per rule would
    cost more than most checks).

    Parameters
    ----------
    layers, proposals, ruleset
        The town's layers, the applications and the law's numbers, all in the working CRS.
    select, ignore
        Rule id prefixes to run / skip (``["SW1"]``, ``["SW210"]``).
    context
        A prepared :class:`CheckContext` (reuses its caches).
    on_error
        ``"review"``: a crashing check gives review findings naming the error;
        ``"raise"``: re-raise it.

    Returns
    -------
    GeoDataFrame
        Columns :data:`FINDING_COLUMNS` in the working CRS, sorted by proposal, rule,
        outcome and subject.

    Raises
    ------
    ProposalError
        When two devices of one proposal share a device_id (:func:`check_unique_devices`).
    """
    check_unique_devices(proposals)
    ctx = context or CheckContext(layers=layers, proposals=proposals, ruleset=ruleset)
    parts = []
    for rule in select_rules(select, ignore):
        log.debug("running %s", rule.rule_id)
        rows = _run_columns(rule, ctx, on_error)
        if rows is not None:
            parts.append(rows)
    if not parts:
        return empty_findings(ruleset.working_crs, full=True)
    return _complete(_joined(parts), ruleset, ruleset.working_crs)
