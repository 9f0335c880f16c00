"""Run the rules: every check over every proposal, then citations, severities and ids."""

from __future__ import annotations

import logging

import geopandas as gpd
import numpy as np
import pandas as pd

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import (
    CHECK_COLUMNS,
    FINDING_COLUMNS,
    Outcome,
    Severity,
    empty_findings,
    finding_id,
)
from gis_sw.analysis.registry import RULES_BY_ID, Rule, select_rules
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
    out["title"] = [r.title for r in rules]
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


def run_check(rule: Rule, ctx: CheckContext) -> gpd.GeoDataFrame:
    """Run one rule's check and verify its columns."""
    rows = rule.check(ctx)
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
) -> gpd.GeoDataFrame:
    """Screen every proposal with every selected rule.

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
        rows = run_check(rule, ctx)
        if len(rows):
            frames.append(rows)
    if not frames:
        return empty_findings(ruleset.working_crs, full=True)
    rows = gpd.GeoDataFrame(
        pd.concat(frames, ignore_index=True), geometry="geometry", crs=ruleset.working_crs
    )
    return complete_findings(rows, ruleset)
