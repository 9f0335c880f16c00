"""Geometry tests every package shares."""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely

__all__ = ["unlocated"]


def unlocated(geoms: Any) -> np.ndarray:
    """Return which geometries give no location: missing (null) or empty."""
    values = np.asarray(geoms, dtype=object)
    return shapely.is_missing(values) | shapely.is_empty(values)
