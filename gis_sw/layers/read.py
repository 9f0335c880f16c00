"""Read town layers and proposals from files or PostGIS into the working CRS, validated.

Public entry points:

* :func:`read_layers` — a layers manifest (TOML), a GeoPackage of town layers, or a folder
  holding ``layers.toml`` → :class:`~gis_sw.layers.layerset.LayerSet`;
* :func:`read_proposals` — a proposals GeoPackage or a single disturbance file →
  :class:`~gis_sw.layers.proposals.Proposals` (implemented in
  :mod:`gis_sw.layers.proposals_io`);
* :func:`inspect_layers` — the same reading as :func:`read_layers` without raising, for
  ``gis-sw validate`` to report every layer, good and bad.

Every layer is read (pyogrio with Arrow, GeoParquet, DXF, PostGIS, GeoTIFF), given its CRS
(the file's, else the manifest's, else an error), reprojected to ``ruleset.working_crs``,
its columns renamed by the manifest's mapping and validated against its spec.  Every problem
of every layer is collected and raised once as a :class:`~gis_sw.errors.LayerError`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.build import make_layerset
from gis_sw.layers.clean import drop_bad_features, duplicate_geometry_groups
from gis_sw.layers.layerset import DroppedFeature, LayerReport, LayerSet
from gis_sw.layers.manifest import LayerEntry, Manifest, resolve_source
from gis_sw.layers.postgis import read_postgis
from gis_sw.layers.proposals_io import read_proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.rasters_io import largest_distance_ft, needed_area, read_raster
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.layers.validate import SOURCE_ROW, apply_columns, validate_layer
from gis_sw.layers.vector import crs_text, crs_units, read_vector, to_working_crs
from gis_sw.ruleset import Ruleset

logger = logging.getLogger(__name__)

__all__ = ["LayerInspection", "inspect_layers", "read_layers", "read_proposals"]


@dataclass(frozen=True, slots=True, eq=False)
class LayerInspection:
    """Everything reading a source found, good layers and problems alike.

    Attributes
    ----------
    manifest
        The resolved source.
    crs
        The working CRS.
    vectors, rasters
        Layers that read and validated cleanly.
    reports
        Kind to :class:`LayerReport`, for every layer that was read.
    problems
        Kind to the problems found in it (empty when the source is clean).
    """

    manifest: Manifest
    crs: CRS
    vectors: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    rasters: dict[str, RasterLayer] = field(default_factory=dict)
    reports: dict[str, LayerReport] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    coverage: dict[str, shapely.Geometry] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def dropped(self) -> list[DroppedFeature]:
        """Every feature left out by ``on_bad_feature = "skip"``, layer by layer."""
        return [d for report in self.reports.values() for d in report.dropped]

    def all_problems(self) -> list[Problem]:
        return [p for problems in self.problems.values() for p in problems]


def inspect_layers(
    source: str | Path,
    *,
    ruleset: Ruleset,
    strict: bool = False,
    kinds: Iterable[str] | None = None,
    keep: Callable[[str, gpd.GeoDataFrame], gpd.GeoDataFrame] | None = None,
) -> LayerInspection:
    """Read and validate every layer of a source, collecting problems instead of raising.

    ``kinds`` limits the reading to those layer kinds (batch reads only what it screens);
    the required layers are required all the same.  ``keep`` (kind, frame) returns what
    to hold of each vector layer read (``gis-sw batch --stream`` spills it to disk and
    keeps no rows).

    Raises
    ------
    InputFileError
        If the source itself cannot be found or read.
    LayerError
        If the manifest is malformed (the layers are not read then).
    """
    manifest = resolve_source(source)
    inspection = LayerInspection(manifest=manifest, crs=ruleset.working_crs)
    wanted = None if kinds is None else set(kinds)
    # vectors first: a raster is read only over their extent and the rules' reach
    entries = sorted(manifest.entries.items(), key=lambda item: item[1].is_raster)
    for kind, entry in entries:
        if wanted is not None and kind not in wanted:
            continue
        try:
            if entry.none:
                frame, report = declared_none(entry, working_crs=ruleset.working_crs)
                inspection.vectors[kind] = frame if keep is None else keep(kind, frame)
            elif entry.is_raster:
                assert entry.path is not None  # the manifest refuses PostGIS rasters
                raster, report = read_raster(
                    entry.path,
                    kind=kind,
                    working_crs=ruleset.working_crs,
                    mode=entry.mode,
                    units=entry.units,
                    crs=entry.crs,
                    area=needed_area(
                        inspection.vectors, margin_ft=largest_distance_ft(ruleset.raw)
                    ),
                )
                inspection.rasters[kind] = raster
            else:
                frame, report = read_vector_entry(
                    entry, working_crs=ruleset.working_crs, strict=strict
                )
                inspection.vectors[kind] = frame if keep is None else keep(kind, frame)
            inspection.reports[kind] = report
        except LayerError as exc:
            inspection.problems[kind] = list(exc.problems)
        except GisSwError as exc:
            inspection.problems[kind] = [Problem(kind, str(exc))]
    _add_coverage(inspection, ruleset)
    for kind, spec in TOWN_LAYERS.items():
        if spec.required_layer and kind not in manifest.entries:
            inspection.problems[kind] = [
                Problem(
                    kind,
                    f"required layer is not provided by {manifest.source}.",
                    f"add a [{kind}] table to the layers manifest, or a layer named {kind!r} "
                    "to the GeoPackage.",
                )
            ]
    return inspection


def read_layers(
    source: str | Path,
    *,
    ruleset: Ruleset,
    strict: bool = False,
    kinds: Iterable[str] | None = None,
) -> LayerSet:
    """Read, reproject and validate the town layers of a source.

    Parameters
    ----------
    source
        A layers manifest (``layers.toml``), a GeoPackage whose layer names are the kinds
        (GeoTIFFs ``dem.tif`` ... beside it), or a folder holding ``layers.toml``.
    ruleset
        Gives the working CRS.
    strict
        Refuse invalid geometries instead of repairing them with ``make_valid``.
    kinds
        Read only these kinds (and still require parcels and zoning).

    Raises
    ------
    InputFileError
        If the source cannot be found or read.
    LayerError
        Naming every problem of every layer (missing columns, wrong geometry types, empty
        required layers, duplicate ids, null geometries, bad values, no CRS ...).
    """
    inspection = inspect_layers(source, ruleset=ruleset, strict=strict, kinds=kinds)
    if not inspection.ok:
        raise LayerError(inspection.all_problems())
    return make_layerset(
        inspection.crs,
        inspection.vectors,
        inspection.rasters,
        reports=inspection.reports,
        source=str(inspection.manifest.source),
        coverage=inspection.coverage,
    )


def declared_none(entry: LayerEntry, *, working_crs: CRS) -> tuple[gpd.GeoDataFrame, LayerReport]:
    """The empty layer of a declared absence (``none = true``), with its report."""
    spec = TOWN_LAYERS[entry.kind]
    columns = {name: pd.Series(dtype="object") for name in {**spec.required, **spec.optional}}
    frame = gpd.GeoDataFrame(columns, geometry=gpd.GeoSeries([], crs=working_crs), crs=working_crs)
    nan = float("nan")
    report = LayerReport(
        kind=entry.kind,
        source="declared none in the layers manifest",
        features=0,
        source_crs=crs_text(working_crs),
        units=crs_units(working_crs),
        bounds=(nan, nan, nan, nan),
        declared_none=True,
    )
    return frame, report


COVERAGE_WARN_FRACTION = 0.5
"""``validate`` warns when a layer's extent covers less of the parcels' extent than this."""


def _add_coverage(inspection: LayerInspection, ruleset: Ruleset) -> None:
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
    """The union of the polygons of a coverage file, in the working CRS.

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


def read_vector_entry(
    entry: LayerEntry, *, working_crs: CRS, strict: bool = False
) -> tuple[gpd.GeoDataFrame, LayerReport]:
    """One vector layer of a manifest, in the working CRS, renamed and validated.

    Raises
    ------
    InputFileError, CRSError
        If it cannot be read or has no CRS.
    LayerError
        Listing every problem of the layer.
    """
    spec = TOWN_LAYERS[entry.kind]
    label = entry.label
    name = f"{entry.kind} [{label}]"
    if entry.postgis is not None:
        frame, source_crs, warnings = read_postgis(
            entry.postgis,
            table=entry.table,
            query=entry.query,
            geometry_column=entry.geometry_column,
            crs=entry.crs,
            label=label,
        )
        if entry.crs_override and entry.crs is not None and not source_crs.equals(entry.crs):
            warnings.append(
                f"CRS {crs_text(entry.crs)} from the manifest replaces the table's own "
                f"{crs_text(source_crs)}."
            )
            frame, source_crs = frame.set_crs(entry.crs, allow_override=True), entry.crs
    else:
        assert entry.path is not None
        frame, source_crs, warnings = read_vector(
            entry.path,
            layer=entry.layer,
            kind=entry.kind,
            crs=entry.crs,
            override_crs=entry.crs_override,
            where=entry.where,
        )
    if entry.where is not None:
        warnings.append(f"filter: where {entry.where} ({len(frame):,} features kept).")
    frame = to_working_crs(frame, working_crs, label=label)
    frame, problems = apply_columns(frame, entry.columns, layer=name)
    dropped: tuple[DroppedFeature, ...] = ()
    if entry.skip_bad and not problems:
        frame = frame.assign(**{SOURCE_ROW: np.arange(1, len(frame) + 1)})
        frame, dropped = drop_bad_features(
            frame,
            spec,
            placeholder_ids=entry.placeholder_ids,
            max_sliver_sqft=entry.max_sliver_sqft,
        )
    known = {**spec.required, **spec.optional}
    for spec_name in sorted(set(entry.columns) - set(known)):
        problems.append(
            Problem(
                name,
                f"column mapping {spec_name} = {entry.columns[spec_name]!r}: {spec_name!r} is "
                f"not a column of {entry.kind} (its columns: {', '.join(known)}).",
                "map one of those names, or remove the mapping.",
            )
        )
    validated, more = validate_layer(frame, spec, layer=name, strict=strict)
    problems.extend(more)
    if problems or validated is None:
        raise LayerError(problems)
    if SOURCE_ROW in validated.frame.columns:
        validated = replace(validated, frame=validated.frame.drop(columns=SOURCE_ROW))
    if validated.repaired_ids:
        warnings.append(f"{len(validated.repaired_ids)} invalid geometries repaired (make_valid).")
    bounds = validated.frame.total_bounds if len(validated.frame) else [float("nan")] * 4
    duplicates = (
        duplicate_geometry_groups(validated.frame, spec.id_column)
        if entry.kind == "parcels"
        else ()
    )
    report = LayerReport(
        kind=entry.kind,
        source=label,
        features=len(validated.frame),
        source_crs=crs_text(source_crs),
        units=crs_units(source_crs),
        bounds=(float(bounds[0]), float(bounds[1]), float(bounds[2]), float(bounds[3])),
        repaired_ids=validated.repaired_ids,
        warnings=(*warnings, *validated.warnings),
        dropped=dropped,
        duplicate_geometries=duplicates,
    )
    logger.info("%s: %d features from %s", entry.kind, report.features, label)
    return validated.frame, report
