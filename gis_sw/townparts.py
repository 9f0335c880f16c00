"""Parts of a :class:`gis_sw.api.Town` prepared once.

How far a proposal's neighbourhood reaches, and the names of features whose optional id is
missing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np

from gis_sw.layers.proposals import Proposals
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.ruleset import Ruleset, load_ruleset

__all__ = ["as_ruleset", "largest_distance_ft", "named", "proposal_geoms"]


def largest_distance_ft(ruleset: Ruleset) -> float:
    """Return the largest ``*_ft`` number of the ruleset (setbacks, bands, flow lengths)."""
    found = [ruleset.devices.largest_setback_ft, ruleset.resources.wetland_adjacent_area_ft]

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, str(k))
        elif key.endswith("_ft") and isinstance(value, int | float) and not isinstance(value, bool):
            found.append(float(value))

    walk(ruleset.raw)
    return max(v for v in found if math.isfinite(v))


def named(frame: gpd.GeoDataFrame, kind: str) -> gpd.GeoDataFrame:
    """Return the frame with missing optional ids written as ``#<row>`` (row in the layer)."""
    spec = TOWN_LAYERS.get(kind)
    if spec is None or spec.id_column is None or spec.id_column in spec.required:
        return frame
    column = spec.id_column
    if column not in frame.columns:
        return frame
    missing = frame[column].isna().to_numpy()
    if not missing.any():
        return frame
    out = frame.copy()
    values = out[column].astype("object").to_numpy().copy()
    values[missing] = [f"#{i + 1}" for i in np.flatnonzero(missing)]
    out[column] = values
    return out


def proposal_geoms(proposals: Proposals) -> np.ndarray:
    """Return every geometry of the proposals: disturbance, devices, impervious surfaces."""
    parts = [proposals.disturbance.geometry.to_numpy(), proposals.devices.geometry.to_numpy()]
    if proposals.impervious is not None:
        parts.append(proposals.impervious.geometry.to_numpy())
    return np.concatenate([np.asarray(p, dtype=object) for p in parts])


def as_ruleset(ruleset: Ruleset | str | Path | None) -> Ruleset:
    """Return ``ruleset`` loaded when it is a name or a path (None: the default ruleset)."""
    return ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
