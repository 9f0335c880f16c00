"""Checks across a proposals file: its attribute table, dates and orphan features.

Each function returns the problems it finds (never raises);
:func:`gis_sw.layers.proposals_io.read_proposals` collects them with the per-layer problems
and raises once.  The page of ``gis-sw serve`` checks its attribute rows with
:func:`check_attributes` too.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd

from gis_sw.errors import Problem
from gis_sw.layers.build import coerce_column
from gis_sw.layers.exemptions import accepted_forms, parse_exemption
from gis_sw.layers.specs import LAND_USES, PROPOSAL_LAYERS
from gis_sw.layers.validate import feature_labels, id_text, listing, validate_table
from gis_sw.ruleset import Ruleset

ATTRIBUTE_TABLE = "proposals"
"""The GeoPackage table (no geometry) of one row per proposal."""


def check_attributes(attributes: pd.DataFrame, ruleset: Ruleset | None, name: str) -> list[Problem]:
    """Return the problems of a proposals table: spec types, land uses, exemptions, dates.

    Exemptions are checked against the ruleset's letters when a ruleset is given.
    """
    spec = PROPOSAL_LAYERS[ATTRIBUTE_TABLE]
    problems = validate_table(attributes, spec, layer=name)
    labels = feature_labels(attributes.reset_index(drop=True), "proposal_id")
    frame = attributes.reset_index(drop=True)
    if "land_use" in frame.columns:
        text = frame["land_use"].map(lambda v: None if pd.isna(v) else str(v).strip())
        bad = text.notna() & (text != "") & ~text.isin(LAND_USES)
        if bad.any():
            shown = [f"{lab} = {v!r}" for lab, v in zip(labels[bad], text[bad], strict=True)]
            problems.append(
                Problem(
                    name,
                    f"land_use is not one of {', '.join(LAND_USES)}: {listing(shown)}.",
                    f"write one of {', '.join(LAND_USES)} (empty when unknown).",
                )
            )
    headings = ruleset.exemptions if ruleset is not None else None
    cited = ruleset.exemptions_citation if ruleset is not None else ""
    if "exemption" in frame.columns and headings:
        text = frame["exemption"].map(lambda v: None if pd.isna(v) else str(v).strip())
        unread = text.map(
            lambda v: bool(v) and parse_exemption(v, headings, citation=cited) is None
        )
        bad = text.notna() & unread.astype(bool)
        if bad.any():
            shown = [f"{lab} = {v!r}" for lab, v in zip(labels[bad], text[bad], strict=True)]
            problems.append(
                Problem(
                    name,
                    f"exemption is not a letter of the ruleset's exemptions: {listing(shown)}.",
                    f"{accepted_forms(headings, citation=cited)}.",
                )
            )
    if not problems:
        problems.extend(
            _end_before_start(frame, labels, "construction_start", "construction_end", name)
        )
    return problems


def check_dates(disturbance: gpd.GeoDataFrame | None, path: str | Path) -> list[Problem]:
    """Return a problem naming each disturbance feature that ends before it starts."""
    if disturbance is None:
        return []
    labels = feature_labels(disturbance, "disturbance_id")
    name = f"disturbance [{path}]"
    return _end_before_start(disturbance, labels, "start_date", "end_date", name)


def _end_before_start(
    frame: pd.DataFrame, labels: pd.Series, start: str, end: str, name: str
) -> list[Problem]:
    if start not in frame.columns or end not in frame.columns:
        return []
    starts = coerce_column(frame[start], "date")
    ends = coerce_column(frame[end], "date")
    bad = (ends < starts).to_numpy(dtype=bool)
    if not bad.any():
        return []
    shown = [
        f"{lab} ({s:%Y-%m-%d} to {e:%Y-%m-%d})"
        for lab, s, e in zip(labels[bad], starts[bad], ends[bad], strict=True)
    ]
    return [
        Problem(
            name,
            f"{end} is before {start}: {listing(shown)}.",
            f"correct the dates ({end} is the day of final stabilisation).",
        )
    ]


def without_disturbance(
    attributes: pd.DataFrame | None, disturbance: gpd.GeoDataFrame | None, path: str | Path
) -> list[Problem]:
    """Return a problem naming the proposals table's rows with no disturbance feature.

    Left in, such a proposal would pass every area rule at 0 sq ft.
    """
    if attributes is None or disturbance is None or "proposal_id" not in attributes.columns:
        return []
    drawn = set(id_text(disturbance["proposal_id"]).dropna())
    listed = id_text(attributes["proposal_id"]).dropna()
    missing = sorted(set(listed) - drawn)
    if not missing:
        return []
    return [
        Problem(
            f"{ATTRIBUTE_TABLE} [{path}]",
            f"{len(missing)} proposal(s) have no disturbance feature: {listing(missing)}.",
            "draw each proposal's limits of disturbance in the 'disturbance' layer with its "
            "proposal_id, or remove its row from the proposals table.",
        )
    ]


def of_no_proposal(frames: dict[str, gpd.GeoDataFrame], path: str | Path) -> list[Problem]:
    """Return problems naming devices and impervious surfaces of no drawn proposal.

    Left in, each would be screened as a phantom proposal of its own (SW2xx findings for an
    application nobody drew), so they are an error naming each feature and the ids drawn.
    """
    disturbance = frames.get("disturbance")
    if disturbance is None:
        return []
    drawn = pd.unique(disturbance["proposal_id"].astype(str))
    problems = []
    for kind, id_column in (("devices", "device_id"), ("impervious", None)):
        frame = frames.get(kind)
        if frame is None or not len(frame):
            continue
        ids = frame["proposal_id"].astype(str)
        orphan = ~ids.isin(drawn).to_numpy(dtype=bool)
        if not orphan.any():
            continue
        labels = feature_labels(frame, id_column)
        shown = [
            f"{lab} (proposal_id {pid!r})"
            for lab, pid in zip(labels[orphan], ids[orphan], strict=True)
        ]
        problems.append(
            Problem(
                f"{kind} [{path}]",
                f"{int(orphan.sum())} feature(s) belong to no proposal in the disturbance "
                f"layer: {listing(shown)}; the proposals drawn are {listing(sorted(drawn))}.",
                "correct their proposal_id to one of those, or draw that proposal's limits "
                "of disturbance in the 'disturbance' layer.",
            )
        )
    return problems
