"""Findings as the page shows them: panel rows and map geometries in EPSG:4326, as JSON.

Column arrays and the app's one transformer, not a frame per row and a CRS per call: this
runs on every edit of the page.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import shapely
from pyproj import Transformer

from gis_sw.layers.geoms import unlocated

ROW_COLUMNS = (
    "finding_id", "rule_id", "title", "citation", "outcome", "severity", "message",
    "subject_id", "measured", "threshold", "unit", "waived",
)  # fmt: skip
"""The columns of a findings panel row."""

GEOMETRY_COLUMNS = ("rule_id", "outcome", "subject_id", "message")
"""The properties of a finding's geometry on the map."""


def json_text(value: Any) -> Any:
    """Return a finding's text cell as JSON: missing as null, anything else as text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value if isinstance(value, str) else str(value)


def json_number(value: Any) -> float | None:
    """Return a number rounded to 0.01 for JSON; None for missing and non-finite values."""
    if value is None:
        return None
    number = float(value)
    return round(number, 2) if np.isfinite(number) else None


def encode_findings(
    findings: Any, to_wgs: Transformer
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the findings panel's rows and the map's finding geometries (EPSG:4326).

    Parameters
    ----------
    findings
        The findings frame of a screening (working CRS).
    to_wgs
        The transformer from the working CRS to EPSG:4326 (``always_xy``).
    """
    cols = {c: findings[c].to_numpy() for c in ROW_COLUMNS}
    rows = []
    for i in range(len(findings)):
        row = {c: json_text(cols[c][i]) for c in ROW_COLUMNS}
        row["measured"] = json_number(cols["measured"][i])
        row["threshold"] = json_number(cols["threshold"][i])
        row["waived"] = bool(cols["waived"][i])
        rows.append(row)
    geoms = np.asarray(findings.geometry.to_numpy(), dtype=object)
    drawn = np.flatnonzero(~unlocated(geoms) & (shapely.get_type_id(geoms) != 0))
    lines: list[dict[str, Any]] = []
    if len(drawn):

        def degrees(xy: np.ndarray) -> np.ndarray:
            lon, lat = to_wgs.transform(xy[:, 0], xy[:, 1])
            return np.column_stack([lon, lat])

        wgs = shapely.transform(geoms[drawn], degrees)
        texts = shapely.to_geojson(shapely.set_precision(wgs, 1e-7))
        for i, text in zip(drawn.tolist(), texts, strict=True):
            props = {c: json_text(cols[c][i]) for c in GEOMETRY_COLUMNS}
            lines.append({"type": "Feature", "properties": props, "geometry": json.loads(text)})
    return rows, lines
