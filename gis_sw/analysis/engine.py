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
from typing import Literal

import geopandas as gpd
import numpy as np
import pandas as pd

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.coverage import apply_coverage, name_shared_lots
from gis_sw.analysis.findings import (
    CHECK_COLUMNS,
    FINDING_COLUMNS,
    Outcome,
    Severity,
    empty_findings,
    finding_id,
    make_findings,
)
from gis_sw.analysis.registry import RULES_BY_ID, Rule, rule_title, select_rules
from gis_sw.errors import GisSwError
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

_OUTCOME_ORDER = {o: i for i, o in enumerate(("fail", "review", "required", "info", "pass"))}


def complete_findings(rows: gpd.GeoDataFrame, ruleset: Ruleset) -> gpd.GeoDataFrame:
    """Add citation, title, severity, ruleset, finding id and waiver columns to check rows."""
    if len(rows) == 0:
        return empty_findings(ruleset.working_crs, full=True)
    out = rows.copy()
    rules = [RULES_BY_ID[r] for r in out["rule_id"]]
    out["citation"] = [ruleset.citation(r.rule_id) for r in rules]
    out["title"] = [rule_title(r, ruleset) for r in rules]
    passive = out["outcome"].isin([Outcome.PASS, Outcome.INFO]).to_numpy()
    out["severity"] = np.where(passive, str(Severity.INFO), [str(r.severity) for r in rules])
    out["ruleset"] = ruleset.name
    out["ruleset_version"] = ruleset.version
    out["finding_id"] = [
        finding_id(ruleset.name, ruleset.version, r, p, s)
        for r, p, s in zip(out["rule_id"], out["proposal_id"], out["subject_id"], strict=True)
    ]
    out["waived"] = False
    out["waiver_reason"] = ""
    dupes = out["finding_id"].duplicated(keep=False)
    if dupes.any():
        sample = out.loc[dupes, ["rule_id", "proposal_id", "subject_id"]].head(3).to_dict("records")
        raise RuntimeError(f"two findings share one (rule, proposal, subject): {sample}")
    order = out["outcome"].map(_OUTCOME_ORDER)
    out = out.assign(_order=order).sort_values(
        ["proposal_id", "rule_id", "_order", "subject_id"], kind="stable"
    )
    out = out.drop(columns="_order").reset_index(drop=True)
    return gpd.GeoDataFrame(out[list(FINDING_COLUMNS)], geometry="geometry", crs=rows.crs)


def _crash_rows(rule: Rule, ctx: CheckContext, exc: Exception) -> gpd.GeoDataFrame:
    ids = ctx.proposals.ids
    if not ids:
        return empty_findings(ctx.crs)
    text = f"{type(exc).__name__}: {exc}".strip()
    if len(text) > 300:
        text = text[:297] + "..."
    return make_findings(
        rule.rule_id,
        ctx.crs,
        proposal_id=ids,
        subject_id=ids,
        outcome=Outcome.REVIEW,
        message=f"The {rule.rule_id} check could not run ({text}): review this rule by hand.",
        geometry=[ctx.disturbance_union.loc[p] for p in ids],
    )


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
    try:
        rows = _checked(rule, rule.check(ctx))
        rows = name_shared_lots(apply_coverage(rule.rule_id, rows, ctx), ctx)
    except GisSwError:
        raise
    except Exception as exc:
        if on_error == "raise":
            raise
        log.error("%s check failed: %s", rule.rule_id, exc, exc_info=log.isEnabledFor(10))
        return _crash_rows(rule, ctx, exc)
    return rows


def _checked(rule: Rule, rows: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    missing = [c for c in CHECK_COLUMNS if c not in rows.columns]
    if missing:
        raise RuntimeError(f"{rule.rule_id} check returned no column(s) {missing}")
    bad = set(rows["rule_id"]) - {rule.rule_id}
    if bad:
        raise RuntimeError(f"{rule.rule_id} check returned rows for {sorted(bad)}")
    return rows[list(CHECK_COLUMNS)]


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
    """
    ctx = context or CheckContext(layers=layers, proposals=proposals, ruleset=ruleset)
    frames = []
    for rule in select_rules(select, ignore):
        log.debug("running %s", rule.rule_id)
        rows = run_check(rule, ctx, on_error=on_error)
        if len(rows):
            frames.append(rows)
    if not frames:
        return empty_findings(ruleset.working_crs, full=True)
    rows = gpd.GeoDataFrame(
        pd.concat(frames, ignore_index=True), geometry="geometry", crs=ruleset.working_crs
    )
    return complete_findings(rows, ruleset)
