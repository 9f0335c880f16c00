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
from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
from pyproj import CRS

from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.build import make_layerset
from gis_sw.layers.layerset import LayerReport, LayerSet
from gis_sw.layers.manifest import LayerEntry, Manifest, resolve_source
from gis_sw.layers.postgis import read_postgis
from gis_sw.layers.proposals_io import read_proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.rasters_io import largest_distance_ft, needed_area, read_raster
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.layers.validate import apply_columns, validate_layer
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

    @property
    def ok(self) -> bool:
        return not self.problems

    def all_problems(self) -> list[Problem]:
        return [p for problems in self.problems.values() for p in problems]


def inspect_layers(
    source: str | Path, *, ruleset: Ruleset, strict: bool = False
) -> LayerInspection:
    """Read and validate every layer of a source, collecting problems instead of raising.

    Raises
    ------
    InputFileError
        If the source itself cannot be found or read.
    LayerError
        If the manifest is malformed (the layers are not read then).
    """
    manifest = resolve_source(source)
    inspection = LayerInspection(manifest=manifest, crs=ruleset.working_crs)
    # vectors first: a raster is read only over their extent and the rules' reach
    entries = sorted(manifest.entries.items(), key=lambda item: item[1].is_raster)
    for kind, entry in entries:
        try:
            if entry.is_raster:
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
                inspection.vectors[kind] = frame
            inspection.reports[kind] = report
        except LayerError as exc:
            inspection.problems[kind] = list(exc.problems)
        except GisSwError as exc:
            inspection.problems[kind] = [Problem(kind, str(exc))]
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


def read_layers(source: str | Path, *, ruleset: Ruleset, strict: bool = False) -> LayerSet:
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

    Raises
    ------
    InputFileError
        If the source cannot be found or read.
    LayerError
        Naming every problem of every layer (missing columns, wrong geometry types, empty
        required layers, duplicate ids, null geometries, bad values, no CRS ...).
    """
    inspection = inspect_layers(source, ruleset=ruleset, strict=strict)
    if not inspection.ok:
        raise LayerError(inspection.all_problems())
    return make_layerset(
        inspection.crs,
        inspection.vectors,
        inspection.rasters,
        reports=inspection.reports,
        source=str(inspection.manifest.source),
    )


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
    else:
        assert entry.path is not None
        frame, source_crs, warnings = read_vector(
            entry.path, layer=entry.layer, kind=entry.kind, crs=entry.crs
        )
    frame = to_working_crs(frame, working_crs, label=label)
    frame, problems = apply_columns(frame, entry.columns, layer=name)
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
    if validated.repaired_ids:
        warnings.append(f"{len(validated.repaired_ids)} invalid geometries repaired (make_valid).")
    bounds = validated.frame.total_bounds if len(validated.frame) else [float("nan")] * 4
    report = LayerReport(
        kind=entry.kind,
        source=label,
        features=len(validated.frame),
        source_crs=crs_text(source_crs),
        units=crs_units(source_crs),
        bounds=(float(bounds[0]), float(bounds[1]), float(bounds[2]), float(bounds[3])),
        repaired_ids=validated.repaired_ids,
        warnings=(*warnings, *validated.warnings),
    )
    logger.info("%s: %d features from %s", entry.kind, report.features, label)
    return validated.frame, report
