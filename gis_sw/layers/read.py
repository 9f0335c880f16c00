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

import functools
import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS

from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.absence import declared_none, empty_layer_problem, has_any_feature
from gis_sw.layers.build import make_layerset
from gis_sw.layers.clean import (
    drop_bad_features,
    duplicate_geometry_groups,
    whole_ids_checked,
)
from gis_sw.layers.coverage_io import COVERAGE_WARN_FRACTION, add_coverage, read_coverage
from gis_sw.layers.layerset import DroppedFeature, LayerReport, LayerSet
from gis_sw.layers.manifest import LayerEntry, Manifest, resolve_source
from gis_sw.layers.proposals_io import read_proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.raster_area import TOWN_WIDE_RASTERS, raster_area, read_raster_entry
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.layers.validate import SOURCE_ROW, apply_columns, validate_layer
from gis_sw.layers.vector import WINDOW_ROW, crs_text, crs_units, read_vector, to_working_crs
from gis_sw.layers.window import Bounds, GpkgWindow, ParquetWindow
from gis_sw.layers.window_read import name_by_layer_row, source_box
from gis_sw.ruleset import Ruleset

logger = logging.getLogger(__name__)

__all__ = [
    "COVERAGE_WARN_FRACTION",
    "TOWN_WIDE_RASTERS",
    "LayerInspection",
    "inspect_layers",
    "read_coverage",
    "read_layers",
    "read_proposals",
    "read_raster_entry",
]


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
    coverage
        Kind to the area a layer that maps part of the town maps.
    windows
        Kind to the box (working CRS) a layer was read in, for layers read by window.
    full_areas
        Kind to the area a whole read of the town covers, for the rasters of
        :data:`TOWN_WIDE_RASTERS` read over less of it (:func:`read_raster_entry` reads
        more of them).
    """

    manifest: Manifest
    crs: CRS
    vectors: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)
    rasters: dict[str, RasterLayer] = field(default_factory=dict)
    reports: dict[str, LayerReport] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    coverage: dict[str, shapely.Geometry] = field(default_factory=dict)
    windows: dict[str, Bounds] = field(default_factory=dict)
    full_areas: dict[str, Bounds] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether no layer had a problem."""
        return not self.problems

    @property
    def dropped(self) -> list[DroppedFeature]:
        """Every feature left out by ``on_bad_feature = "skip"``, layer by layer."""
        return [d for report in self.reports.values() for d in report.dropped]

    def all_problems(self) -> list[Problem]:
        """Return every problem of every layer."""
        return [p for problems in self.problems.values() for p in problems]


def inspect_layers(
    source: str | Path,
    *,
    ruleset: Ruleset,
    strict: bool = False,
    kinds: Iterable[str] | None = None,
    windows: Mapping[str, Bounds] | None = None,
    extents: Mapping[str, Bounds] | None = None,
    keep: Callable[[str, gpd.GeoDataFrame], gpd.GeoDataFrame] | None = None,
    threads: int | None = None,
) -> LayerInspection:
    """Read and validate every layer of a source, collecting problems instead of raising.

    ``kinds`` limits the reading to those layer kinds (batch reads only what it screens);
    the required layers are required all the same.  ``windows`` gives, by kind, a box
    (working CRS) to read the layer's features in (:func:`read_vector_entry`); rasters are
    read over the extent of the vectors read, but those in :data:`TOWN_WIDE_RASTERS` over
    the town's: ``extents`` gives, by kind, the whole extent of the layers read by window.
    ``keep`` (kind, frame) returns what to hold of each vector layer read (``gis-sw batch
    --stream`` spills it to disk and keeps no rows).  ``threads``: how many vector layers
    are read at once (None: :data:`READ_THREADS`; always one with ``keep``, which must see
    each layer before the next is read).

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
    entries = [
        (kind, entry)
        for kind, entry in sorted(manifest.entries.items(), key=lambda item: item[1].is_raster)
        if wanted is None or kind in wanted
    ]
    vectors = _read_vectors(
        [(k, e) for k, e in entries if not e.none and not e.is_raster],
        working_crs=ruleset.working_crs,
        strict=strict,
        windows=windows or {},
        threads=1 if keep is not None else threads or READ_THREADS,
    )
    for kind, entry in entries:
        try:
            if entry.none:
                frame, report = declared_none(entry, working_crs=ruleset.working_crs)
                inspection.vectors[kind] = frame if keep is None else keep(kind, frame)
            elif entry.is_raster:
                area, full_area = raster_area(entry, inspection, ruleset, extents)
                raster, report = read_raster_entry(
                    entry, working_crs=ruleset.working_crs, area=area, full_area=full_area
                )
                inspection.rasters[kind] = raster
                if full_area is not None:
                    inspection.full_areas[kind] = full_area
            else:
                window = (windows or {}).get(kind)
                frame, report, windowed = vectors[kind]()
                inspection.vectors[kind] = frame if keep is None else keep(kind, frame)
                if windowed and window is not None:
                    inspection.windows[kind] = window
            inspection.reports[kind] = report
        except LayerError as exc:
            inspection.problems[kind] = list(exc.problems)
        except GisSwError as exc:
            inspection.problems[kind] = [Problem(kind, str(exc))]
    add_coverage(inspection, ruleset)
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


READ_THREADS = 1
"""Threads reading a source's vector layers at once when the caller does not say (1: one
after the other): ``gis-sw check`` reads a few small windows, where a pool only adds its
start.  ``gis-sw batch`` reads with two (:data:`gis_sw.batch.inputs.READ_THREADS`).
Decoding (Arrow), GEOS's validity test and GDAL release the GIL, but WKB decoding into
shapely objects and the validation's pandas steps hold it: ``py-spy --gil`` finds a
one-thread read of the 100,000-parcel town holding the GIL 68% of its time.  Measured
there (issue 16): one thread 0.71-0.92 s CPU; two threads 0.31-0.43 s and 0.38-0.58 s CPU
each (the process 0.1 s more, GIL hand-offs), so on an idle second core the read's
critical path is the GIL-held part, about 0.5 s, plus the serial rest (coverage, reports);
on the loaded shared machine two threads were no faster in wall time.  With ``keep``
(``--stream``) the layers are read one at a time whatever is asked: with more, every
layer is held read before the first is kept.  Either way each layer is read, checked and
reported exactly as alone, and the results (and problems) are taken in the manifest's
order."""


def _read_vectors(
    entries: list[tuple[str, LayerEntry]],
    *,
    working_crs: CRS,
    strict: bool,
    windows: Mapping[str, Bounds],
    threads: int,
) -> dict[str, Callable[[], tuple[gpd.GeoDataFrame, LayerReport, bool]]]:
    """Return, by kind, what reads each vector layer (:func:`read_vector_window`).

    Calling it returns the layer, or raises the error reading it raised (the caller
    collects it as a problem of that layer).  With one thread (:data:`READ_THREADS`) each
    layer is read when it is called, in turn, as before: ``gis-sw batch --stream`` spills
    one layer before the next is read.  With more, the layers are read at once by a pool
    and calling waits for that one.
    """

    def read(entry: LayerEntry) -> tuple[gpd.GeoDataFrame, LayerReport, bool]:
        return read_vector_window(
            entry, working_crs=working_crs, strict=strict, window=windows.get(entry.kind)
        )

    if len(entries) < 2 or threads < 2:
        return {kind: functools.partial(read, entry) for kind, entry in entries}
    with ThreadPoolExecutor(min(threads, len(entries))) as pool:
        futures = {kind: pool.submit(read, entry) for kind, entry in entries}
    return {kind: future.result for kind, future in futures.items()}


def read_layers(
    source: str | Path,
    *,
    ruleset: Ruleset,
    strict: bool = False,
    kinds: Iterable[str] | None = None,
    windows: Mapping[str, Bounds] | None = None,
    threads: int | None = None,
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
    windows
        By kind, a box (working CRS): read only the layer's features whose envelope meets
        it, where the source can filter so (:mod:`gis_sw.layers.window_read`).
    threads
        Vector layers read at once (None: :data:`READ_THREADS`); the layers, reports and
        problems are the same whatever the number.

    Raises
    ------
    InputFileError
        If the source cannot be found or read.
    LayerError
        Naming every problem of every layer (missing columns, wrong geometry types, empty
        required layers, duplicate ids, null geometries, bad values, no CRS ...).
    """
    inspection = inspect_layers(
        source, ruleset=ruleset, strict=strict, kinds=kinds, windows=windows, threads=threads
    )
    return layerset_of(inspection)


def layerset_of(inspection: LayerInspection) -> LayerSet:
    """Return the :class:`LayerSet` of a clean inspection.

    Raises
    ------
    LayerError
        Naming every problem the inspection found.
    """
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


def read_vector_entry(
    entry: LayerEntry, *, working_crs: CRS, strict: bool = False, window: Bounds | None = None
) -> tuple[gpd.GeoDataFrame, LayerReport]:
    """One vector layer of a manifest, in the working CRS, renamed and validated.

    Parameters
    ----------
    entry
        The layer's table of the manifest.
    working_crs
        The CRS to bring it into.
    strict
        Refuse invalid geometries instead of repairing them.
    window
        Read only the features whose envelope meets this box (working CRS) where the source
        can filter so (:func:`gis_sw.layers.window_read.source_box`); None: the whole layer.

    Raises
    ------
    InputFileError, CRSError
        If it cannot be read or has no CRS.
    LayerError
        Listing every problem of the layer.
    """
    frame, report, _ = read_vector_window(
        entry, working_crs=working_crs, strict=strict, window=window
    )
    return frame, report


def read_vector_window(
    entry: LayerEntry, *, working_crs: CRS, strict: bool = False, window: Bounds | None = None
) -> tuple[gpd.GeoDataFrame, LayerReport, bool]:
    """:func:`read_vector_entry`, and whether the layer was read by window (not whole).

    Raises
    ------
    InputFileError, CRSError
        If it cannot be read or has no CRS.
    LayerError
        Listing every problem of the layer.
    """
    box = source_box(entry, window, working_crs)
    frame, report, windowed = _read_entry(entry, working_crs=working_crs, strict=strict, box=box)
    # nothing near the proposals, and the layer may be empty: read it whole, as without a
    # window (a whole read of an empty layer names it)
    if (
        windowed
        and not len(frame)
        and (TOWN_LAYERS[entry.kind].required_layer or not has_any_feature(entry))
    ):
        return _read_entry(entry, working_crs=working_crs, strict=strict, box=None)
    if windowed:  # ids are checked over the whole layer, as when it is read whole
        return frame, whole_ids_checked(entry, report), windowed
    return frame, report, windowed


def _read_entry(
    entry: LayerEntry,
    *,
    working_crs: CRS,
    strict: bool,
    box: GpkgWindow | ParquetWindow | Bounds | None,
) -> tuple[gpd.GeoDataFrame, LayerReport, bool]:
    """:func:`read_vector_window` with the window already in the source's CRS."""
    spec = TOWN_LAYERS[entry.kind]
    label = entry.label
    name = f"{entry.kind} [{label}]"
    if entry.postgis is not None:
        from gis_sw.layers.postgis import read_postgis  # its driver only when a table is read

        frame, source_crs, warnings = read_postgis(
            entry.postgis,
            table=entry.table,
            query=entry.query,
            geometry_column=entry.geometry_column,
            crs=entry.crs,
            label=label,
            window=(box, working_crs) if isinstance(box, tuple) else None,
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
            box=box if isinstance(box, GpkgWindow | ParquetWindow) else None,
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
    whole = WINDOW_ROW not in frame.columns
    if whole and not len(frame) and not problems and not spec.required_layer:
        problems.append(empty_layer_problem(entry, dropped=len(dropped)))
    if problems or validated is None:
        raise LayerError(problems)
    if SOURCE_ROW in validated.frame.columns:
        validated = replace(validated, frame=validated.frame.drop(columns=SOURCE_ROW))
    windowed = WINDOW_ROW in validated.frame.columns
    if windowed:
        validated = replace(validated, frame=name_by_layer_row(validated.frame, spec))
        warnings.append(
            f"read by window: the {len(validated.frame):,} features near the proposals."
        )
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
    return validated.frame, report, windowed
