"""What the townwide overview counts and how it colours each parcel (its legend).

A batch's parcels (with its area and siting columns) take the first of
:data:`CONSTRAINT_CLASSES` that holds for them; a frame with only a result column is
coloured by result (:data:`RESULT_ORDER`).  :class:`Tally` sums the legend's counts over
every piece drawn (:mod:`gis_sw.outputs.maps.overview`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import geopandas as gpd
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from gis_sw.errors import OutputError
from gis_sw.outputs.maps.style import OUTCOME_COLOURS
from gis_sw.ruleset import Ruleset

RESULT_COLUMNS = ("result", "outcome", "worst_outcome", "screening_result")
"""Columns read, in this order, for each parcel's screening result."""

RESULT_ORDER = ("fail", "review", "required", "info", "pass", "none")
"""Legend order; any other value is drawn as ``none``."""

CONSTRAINT_CLASSES: tuple[tuple[str, str, str], ...] = (
    ("no_roof_site", "No legal place for\na roof-runoff device", "#7b3294"),
    ("no_vehicle_site", "No legal place for a\nvehicle-traffic device", "#c2a5cf"),
    ("resource", "Wetland, its adjacent area,\nwater or floodplain on the lot", "#4daf4a"),
    ("low_zone", "Low-threshold zone\n(permit from {low:g} sq ft)", "#fdb863"),
    ("clear", "Clear", "#f7f7f7"),
)
"""(key, legend label, fill) in priority order: a parcel takes the first that holds."""

CLASS_COLUMNS = (
    "low_zone_area_sqft",
    "wetland_sqft",
    "wetland_adjacent_sqft",
    "water_body_sqft",
    "floodplain_sqft",
    "roof_siting_sqft",
    "vehicle_siting_sqft",
)
"""Batch columns that switch the map from results to constraint classes."""

MIN_SITING_AREA_SQFT = 1.0
"""Less siting room than this is no legal place (the batch's default ``min_siting_area_sqft``)."""


def constraint_classes(
    parcels: pd.DataFrame, *, min_siting_area_sqft: float = MIN_SITING_AREA_SQFT
) -> np.ndarray:
    """Each parcel's constraint class key (:data:`CONSTRAINT_CLASSES`), from batch columns.

    A siting area that is missing (not computed) is not read as "no place"; the parcel then
    takes its next class, and its ``review`` result shows as a hatch.
    """

    def col(name: str) -> np.ndarray:
        return pd.to_numeric(parcels[name], errors="coerce").to_numpy(dtype="float64")

    resource = np.zeros(len(parcels), dtype=bool)
    for name in ("wetland_sqft", "wetland_adjacent_sqft", "water_body_sqft", "floodplain_sqft"):
        resource |= np.nan_to_num(col(name)) > 0
    conditions = [
        col("roof_siting_sqft") < min_siting_area_sqft,
        col("vehicle_siting_sqft") < min_siting_area_sqft,
        resource,
        np.nan_to_num(col("low_zone_area_sqft")) > 0,
    ]
    keys = [k for k, _, _ in CONSTRAINT_CLASSES]
    return np.select(conditions, keys[:-1], default=keys[-1]).astype(object)


def result_column(parcels: gpd.GeoDataFrame) -> str:
    """Return the column holding the screening result.

    Raises
    ------
    OutputError
        When none of :data:`RESULT_COLUMNS` is present.
    """
    for name in RESULT_COLUMNS:
        if name in parcels.columns:
            return name
    raise OutputError(
        f"the parcels passed to the overview map have no result column (one of "
        f"{', '.join(RESULT_COLUMNS)}); columns: {', '.join(map(str, parcels.columns))}. "
        "Fix: add the worst outcome of each parcel as a 'result' column."
    )


def results_of(parcels: pd.DataFrame, column: str) -> np.ndarray:
    """Each parcel's result from ``column``; a value not in :data:`RESULT_ORDER` is ``none``."""
    values = parcels[column].astype("object")
    return values.where(parcels[column].isin(RESULT_ORDER[:-1]), "none").astype(str).to_numpy()


@dataclass(slots=True)
class Tally:
    """What the legend counts, summed over everything drawn."""

    by_class: bool
    classes: dict[str, int] = field(default_factory=dict)
    results: dict[str, int] = field(default_factory=dict)
    review: int = 0
    parcels: int = 0

    def colours(self, parcels: pd.DataFrame, results: np.ndarray) -> list[str]:
        """Return each parcel's fill, counting classes and results on the way."""
        self.parcels += len(parcels)
        self.review += int((results == "review").sum())
        for key, count in pd.Series(results).value_counts().items():
            self.results[str(key)] = self.results.get(str(key), 0) + int(count)
        if not self.by_class:
            return [OUTCOME_COLOURS[r] for r in results]
        classes = constraint_classes(parcels)
        for key, count in pd.Series(classes).value_counts().items():
            self.classes[str(key)] = self.classes.get(str(key), 0) + int(count)
        fills = {k: f for k, _, f in CONSTRAINT_CLASSES}
        return [fills[c] for c in classes]

    def handles(self, ruleset: Ruleset) -> tuple[list[Patch], str]:
        """Return the legend entries and title."""
        if not self.by_class:
            return [
                Patch(
                    facecolor=OUTCOME_COLOURS[r],
                    edgecolor="#606060",
                    label=f"{r if r != 'none' else 'not screened'}: {self.results[r]:,}",
                )
                for r in RESULT_ORDER
                if r in self.results
            ], "Screening result (parcels)"
        low = ruleset.permit.threshold_low_zone_sqft
        handles = [
            Patch(
                facecolor=fill,
                edgecolor="#606060",
                label=f"{label.format(low=low)}: {self.classes.get(key, 0):,}",
            )
            for key, label, fill in CONSTRAINT_CLASSES
        ]
        if self.review:
            handles.append(
                Patch(
                    facecolor="white",
                    edgecolor="#e66101",
                    hatch="////",
                    label=f"Review (data missing),\nover its class: {self.review:,}",
                )
            )
        return handles, "What constrains the parcel"


def result_counts(parcels_with_result: gpd.GeoDataFrame) -> dict[str, int]:
    """How many parcels have each result (the numbers in the overview's legend)."""
    column = result_column(parcels_with_result)
    values = parcels_with_result[column].astype("object")
    values = values.where(values.isin(RESULT_ORDER[:-1]), "none")
    return {str(k): int(v) for k, v in values.value_counts().items()}


__all__ = [
    "CLASS_COLUMNS",
    "CONSTRAINT_CLASSES",
    "RESULT_ORDER",
    "Tally",
    "constraint_classes",
    "result_column",
    "result_counts",
    "results_of",
]
