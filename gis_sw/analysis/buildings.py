"""Buildings for the device rules (SW206, SW208): the town's and the proposal's own.

Readings of the law written down here, used by :mod:`gis_sw.analysis.infiltration` and
:mod:`gis_sw.analysis.siting`:

- **A building** (§ 183-6) is a structure "occupying more than 100 square feet of area":
  a footprint whose area, rounded to 0.01 sq ft, is at most
  ``ruleset.devices.building_min_area_sqft`` (100.00 sq ft) is not a building for SW206 or
  SW208; 100.01 sq ft is.
- **The proposal's own new buildings** are its ``impervious`` polygons whose ``surface`` is
  a roof (:data:`BUILDING_SURFACES`).  They count for the devices of the same proposal
  only: another application's roof is not yet a structure on this one's ground.
- **Which structures SW206 protects** (§ 183-12C(2)(c)[7]): those "with a habitable
  basement or below-ground storage area".  A building qualifies when
  ``habitable_basement`` or ``below_ground_storage`` is yes, does not when both are no, and
  is *unknown* otherwise (one of them missing and the other not yes): a house recorded
  without a habitable basement may still have a storage cellar, so one "no" alone is not
  enough to pass.  Unknown is ``review`` in SW206 and counts as qualifying in the siting
  polygon.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

BUILDING_SURFACES = frozenset({"roof", "building", "house"})
"""Impervious ``surface`` values that are buildings (the proposal's own new buildings)."""

BASEMENT_COLUMNS = ("habitable_basement", "below_ground_storage")
"""The attributes that make a building one SW206 keeps devices 20 ft from."""


@dataclass(frozen=True, slots=True, eq=False)
class Buildings:
    """Buildings of more than the minimum area, town and proposed, in one set of arrays.

    Attributes
    ----------
    geoms
        Footprints.
    names
        How messages name each one (``building B-1``, ``new building 2 of P1``).
    qualifies
        ``True`` (habitable basement or below-ground storage), ``False`` (neither) or
        ``None`` (not known), per building.
    why
        For a qualifying building what it has; for an unknown one the attribute(s) not given.
    proposal_id
        ``None`` for the town's buildings; the proposal id for a proposed roof.
    """

    geoms: np.ndarray
    names: np.ndarray
    qualifies: np.ndarray
    why: np.ndarray
    proposal_id: np.ndarray

    def __len__(self) -> int:
        """Return the number of buildings."""
        return len(self.geoms)


def _flags(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the rows where ``column`` is known and true, and where it is known and false."""
    if column not in frame.columns:
        return np.zeros(len(frame), dtype=bool), np.zeros(len(frame), dtype=bool)
    values = frame[column]
    known = ~values.isna().to_numpy(dtype=bool)
    if pd.api.types.is_bool_dtype(values.dtype):
        true = values.to_numpy(dtype=bool, na_value=False)
    else:  # any other type as Python reads it (0, "", ... are false)
        true = np.zeros(len(frame), dtype=bool)
        true[known] = [bool(v) for v in values.to_numpy(dtype=object)[known]]
    return known & true, known & ~true


def building_names(frame: pd.DataFrame) -> np.ndarray:
    """Return ``building <id>`` per row, or ``building #<row>`` where the id is missing."""
    ids = frame["building_id"] if "building_id" in frame.columns else [None] * len(frame)
    return np.array(
        [
            f"building {v}" if v is not None and not pd.isna(v) else f"building #{i + 1}"
            for i, v in enumerate(ids)
        ],
        dtype=object,
    )


def basement_status(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``qualifies`` and ``why`` of :class:`Buildings` for the rows of ``frame``.

    Whole columns at once: a habitable basement, else a below-ground storage area, makes a
    building qualify; both known false, it does not; otherwise it is unknown (None) and
    ``why`` names the missing columns.
    """
    basement, no_basement = _flags(frame, "habitable_basement")
    storage, no_storage = _flags(frame, "below_ground_storage")
    missing_b = ~basement & ~no_basement
    missing_s = ~storage & ~no_storage
    first, second = BASEMENT_COLUMNS
    unknown_why = np.where(
        missing_b & missing_s,
        f"{first} and {second}",
        np.where(missing_b, first, second),
    )
    known_no = no_basement & no_storage
    qualifies = np.full(len(frame), None, dtype=object)
    qualifies[basement | storage] = True
    qualifies[known_no & ~(basement | storage)] = False
    why = np.where(
        basement,
        "a habitable basement",
        np.where(storage, "a below-ground storage area", np.where(known_no, "", unknown_why)),
    )
    return qualifies, why.astype(object)


def is_building(geoms: np.ndarray, ruleset: Ruleset) -> np.ndarray:
    """Return True for footprints of more than ``building_min_area_sqft`` (§ 183-6)."""
    area = np.round(shapely.area(np.asarray(geoms, dtype=object)), 2)
    return np.asarray(area > ruleset.devices.building_min_area_sqft)


def town_buildings(layers: LayerSet, ruleset: Ruleset) -> pd.DataFrame | None:
    """Return the buildings layer without structures of the minimum area or less (or None)."""
    buildings = layers.get("buildings")
    if buildings is None:
        return None
    return buildings[is_building(buildings.geometry.to_numpy(), ruleset)]


def proposed_roofs(ctx: CheckContext) -> pd.DataFrame:
    """Return the proposal's impervious roofs that are buildings, numbered per proposal.

    ``number`` counts every roof of the proposal; those of the minimum area or less are
    then left out.
    """
    imp = ctx.proposals.impervious
    if imp is None or len(imp) == 0:
        return pd.DataFrame({"proposal_id": [], "number": [], "geometry": []})
    surface = imp["surface"].astype("string").str.strip().str.lower()
    roofs = imp[surface.isin(BUILDING_SURFACES).fillna(value=False).to_numpy()].copy()
    roofs["number"] = roofs.groupby("proposal_id").cumcount().to_numpy() + 1
    return roofs[is_building(roofs.geometry.to_numpy(), ctx.ruleset)]


def all_buildings(ctx: CheckContext) -> Buildings | None:
    """Return the town buildings and the proposals' new buildings.

    None without a buildings layer and without proposed roofs.
    """

    def compute() -> Buildings | None:
        town = town_buildings(ctx.layers, ctx.ruleset)
        roofs = proposed_roofs(ctx)
        if town is None and len(roofs) == 0:
            return None
        parts = []
        if town is not None:
            q, why = basement_status(town)
            parts.append(
                (
                    town.geometry.to_numpy(),
                    building_names(town),
                    q,
                    why,
                    np.full(len(town), None, dtype=object),
                )
            )
        if len(roofs):
            q, why = basement_status(roofs)
            pids = roofs["proposal_id"].astype(str).to_numpy()
            names = np.array(
                [f"new building {n} of {p}" for n, p in zip(roofs["number"], pids, strict=True)],
                dtype=object,
            )
            parts.append((np.asarray(roofs.geometry.to_numpy(), dtype=object), names, q, why, pids))
        cols = [np.concatenate([np.asarray(p[k], dtype=object) for p in parts]) for k in range(5)]
        return Buildings(*cols)

    return ctx.memo("buildings.all", compute)
