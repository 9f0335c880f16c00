"""Coverage of layers that map part of the town, for :func:`gis_sw.layers.read.inspect_layers`.

A layer's ``coverage`` in the layers manifest is ``"town"`` (default), ``"extent"`` (its
bounding box grown by the largest setback) or a polygon file (:func:`read_coverage`);
layers whose extent covers little of the parcels' get a warning in their report.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import shapely
from pyproj import CRS

from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.vector import read_vector, to_working_crs
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from gis_sw.layers.read import LayerInspection

__all__ = ["COVERAGE_WARN_FRACTION", "add_coverage", "read_coverage"]


COVERAGE_WARN_FRACTION = 0.5
"""``validate`` warns when a layer's extent covers less of the parcels' extent than this."""


def add_coverage(inspection: LayerInspection, ruleset: Ruleset) -> None:
    """Coverage areas of layers that declare one; a warning for layers that look partial."""
    parcels = inspection.reports.get("parcels")
    town = None
    if parcels is not None and all(math.isfinite(v) for v in parcels.bounds):
        town = shapely.box(*parcels.bounds)
    grow_ft = ruleset.devices.largest_setback_ft
    for kind, entry in inspection.manifest.entries.items():
        report = inspection.reports.get(kind)
        if report is None or entry.is_raster or entry.none:
            continue
        label = "town"
        area: shapely.Geometry | None = None
        if entry.coverage == "extent":
            label = "extent"
            if all(math.isfinite(v) for v in report.bounds):
                area = shapely.box(*report.bounds).buffer(grow_ft, join_style="mitre")
            else:
                area = shapely.Polygon()
        elif isinstance(entry.coverage, Path):
            label = str(entry.coverage)
            try:
                area = read_coverage(entry.coverage, working_crs=ruleset.working_crs)
            except GisSwError as exc:
                inspection.problems.setdefault(kind, []).append(
                    Problem(f"{kind} coverage", str(exc))
                )
                continue
        notes: list[str] = []
        if area is not None:
            inspection.coverage[kind] = area
            share = _share(area, town)
            notes.append(
                f"coverage: {label} ({share} of the parcels' extent); rules that need "
                f"{kind} answer review outside it."
            )
        elif (
            town is not None and kind != "parcels" and all(math.isfinite(v) for v in report.bounds)
        ):
            fraction = shapely.area(shapely.intersection(shapely.box(*report.bounds), town)) / max(
                shapely.area(town), 1e-9
            )
            if fraction < COVERAGE_WARN_FRACTION:
                notes.append(
                    f"warning: its extent covers only {_percent(fraction)} of the parcels' "
                    "extent. If "
                    f"{kind} map only part of the town, say so under [{kind}] in the layers "
                    'manifest: coverage = "extent" (its own extent) or coverage = '
                    '"area.gpkg" (a polygon of the area it maps); rules then answer review '
                    "outside it instead of passing."
                )
        inspection.reports[kind] = replace(
            report, coverage=label, warnings=(*report.warnings, *notes)
        )


def _share(area: shapely.Geometry, town: shapely.Geometry | None) -> str:
    if town is None or shapely.area(town) <= 0:
        return "unknown share"
    fraction = shapely.area(shapely.intersection(area, town)) / shapely.area(town)
    return _percent(fraction)


def _percent(fraction: float) -> str:
    """``32%``; ``0.4%`` below 1% (never a misleading ``0%`` for a small layer)."""
    if 0 < fraction < 0.01:
        return f"{fraction:.1%}" if fraction >= 0.001 else "under 0.1%"
    return f"{fraction:.0%}"


def read_coverage(path: Path, *, working_crs: CRS) -> shapely.Geometry:
    """Read the union of the polygons of a coverage file, in the working CRS.

    Raises
    ------
    InputFileError, CRSError
        If it cannot be read or has no CRS.
    LayerError
        If it holds no polygon.
    """
    frame, _, _ = read_vector(path)
    frame = to_working_crs(frame, working_crs, label=str(path))
    geoms = np.asarray(frame.geometry.values, dtype=object)
    keep = shapely.get_type_id(geoms) == 3
    keep |= shapely.get_type_id(geoms) == 6
    if not keep.any():
        raise LayerError(
            [
                Problem(
                    str(path),
                    "a coverage file must hold polygons of the area the layer maps.",
                    "draw the mapped area as one or more polygons.",
                )
            ]
        )
    return shapely.union_all(shapely.make_valid(geoms[keep]))
