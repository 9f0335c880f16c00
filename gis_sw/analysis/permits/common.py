"""What the permit checks share: the town's words, figures beside limits, per-proposal lookups.

Areas are compared with the limits after rounding to 0.01 sq ft (:func:`reached`), and the
lookups (:func:`area`, :func:`union`, :func:`attr`) are dicts cached on the context, so a
check reads one proposal's figure without pandas work.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.wording import figure_pair
from gis_sw.layers.geoms import unlocated

EMPTY = shapely.Polygon()

CONTROLS = "post-construction stormwater runoff controls (water quantity and quality) are required"

WORDING_DEFAULTS: dict[str, str] = {
    "state_construction_permit": (
        "coverage under the state's general permit for stormwater from construction activity"
    ),
    "state_floor_applies": (
        "state general permit coverage for construction activity applies alongside the town "
        "permit; the town's rules are not less restrictive than the state's requirements"
    ),
    "state_floor_not_covered": (
        "the town permit addresses land not covered by a state construction stormwater permit; "
        "state requirements still apply where they reach further"
    ),
    "wetlands_consequence": "the town's wetland law and state or federal wetland permits may apply",
    "wetland_adjacent_area_consequence": "the town's wetland law may regulate the adjacent area",
    "water_bodies_consequence": "state and federal permits for work in or near waters may apply",
    "floodplain_consequence": "the town's flood damage prevention law applies",
    "impaired_waters": "an impaired water or TMDL watershed",
}
"""Keys of the ruleset's ``[wording]`` table SW1xx uses, with the neutral sentence (naming no
agency or chapter) each falls back to when a ruleset leaves it out."""


def say(ctx: CheckContext, key: str) -> str:
    """Return the town's words for ``key`` (``[wording]``), or the neutral default."""
    return ctx.ruleset.wording(key, WORDING_DEFAULTS[key])


def sqft_pair(area_sqft: float, limit_sqft: float) -> tuple[str, str]:
    """Return the measured area (rounded to 0.01, as compared) and limit, as they compare."""
    return figure_pair(round(float(area_sqft), 2), limit_sqft)


def reached(area_sqft: float, limit_sqft: float) -> bool:
    """Return whether the area, rounded to 0.01 sq ft, reaches the limit."""
    return round(float(area_sqft), 2) >= limit_sqft


def area(ctx: CheckContext) -> dict[str, float]:
    """Return the disturbed area of each proposal, sq ft, as a dict by proposal id."""
    return ctx.memo(
        "permits.area", lambda: {str(k): float(v) for k, v in ctx.disturbed_area_sqft.items()}
    )


def union(ctx: CheckContext) -> dict[str, Any]:
    """Return the disturbance union of each proposal as a dict by proposal id."""
    unions = ctx.disturbance_union
    return ctx.memo(
        "permits.union",
        lambda: dict(zip(unions.index.astype(str), unions.to_numpy(), strict=True)),
    )


def attr(ctx: CheckContext, column: str) -> dict[str, Any]:
    """Return one attribute column as a dict by proposal id."""
    attrs = ctx.proposals.attributes
    return ctx.memo(
        f"permits.attr.{column}",
        lambda: dict(
            zip(attrs.index.astype(str), attrs[column].to_numpy(dtype=object), strict=True)
        ),
    )


def disturbance_gap(ctx: CheckContext) -> dict[str, str]:
    """Return, for each proposal whose disturbance cannot be measured whole, why.

    A proposal with no disturbance polygons, with polygons that have no geometry (null or
    empty), or whose polygons have no area at all (a degenerate ring, 0 sq ft) has no
    disturbed area a rule may pass on; a tiny polygon of some area is measured as drawn.
    Proposals whose disturbance is whole are absent.
    """

    def compute() -> dict[str, str]:
        dist = ctx.proposals.disturbance
        geoms = dist.geometry.to_numpy()
        blank = unlocated(geoms)
        pids = dist["proposal_id"].astype(str).to_numpy()
        ids = dist["disturbance_id"].astype(str).to_numpy()
        out: dict[str, str] = {}
        for pid in ctx.proposal_ids:
            mine = pids == pid
            if not mine.any():
                out[pid] = f"proposal {pid} has no disturbance polygons"
            elif (mine & blank).any():
                listed = ", ".join(sorted(ids[mine & blank])[:5])
                out[pid] = f"disturbance polygon(s) {listed} of proposal {pid} have no geometry"
            elif area(ctx)[pid] <= 0.0:
                out[pid] = f"the disturbance polygons of proposal {pid} have no area (0 sq ft)"
        return out

    return ctx.memo("permits.disturbance_gap", compute)


GAP_FIX = "draw each polygon's limits of disturbance in the disturbance layer"
"""How a proposal with a :func:`disturbance_gap` is fixed, for messages."""


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value))


def flag(value: Any) -> bool | None:
    """Return a nullable boolean attribute as True / False / None."""
    return None if _missing(value) else bool(value)


def text(value: Any) -> str | None:
    """Return an attribute as stripped text, None when missing or blank."""
    if _missing(value):
        return None
    stripped = str(value).strip()
    return stripped or None


def plan_acres_problem(ctx: CheckContext, pid: str) -> str | None:
    """Return why a given ``larger_plan_acres`` is not an area (None: not given, or an area).

    A value that is given but is no finite number of 0 or more (``-1``, ``inf``, text) says a
    larger plan exists without saying its size: never read as "not given".
    """
    value = attr(ctx, "larger_plan_acres").get(pid)
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if plan_acres(ctx, pid) is not None:
        return None
    return (
        f"its larger_plan_acres is {value!r}, not an area in acres (give the larger common "
        "plan's total, 0 or more)"
    )


def plan_acres(ctx: CheckContext, pid: str) -> float | None:
    """Return ``larger_plan_acres`` when given as a finite number of 0 or more, else None."""
    value = attr(ctx, "larger_plan_acres").get(pid)
    if value is None or value is pd.NA:
        return None
    try:
        acres = float(value)
    except (TypeError, ValueError):
        return None
    return acres if math.isfinite(acres) and acres >= 0 else None
