"""Read proposals (what applicants submit) from a GeoPackage or a single file.

* A GeoPackage holds the layers ``disturbance`` (required), ``devices`` and ``impervious``
  (optional) and the attribute table ``proposals`` (no geometry, one row per proposal).
* Any other file (GeoJSON, Shapefile, zipped Shapefile, FlatGeobuf, DXF, GeoParquet ...) is
  the disturbance layer.  A file with no ``proposal_id`` column is one proposal named after
  the file (``addition.dxf`` → ``addition``).

Proposal attributes are read in one way.  Attribute columns (``land_use``, ``exemption``,
``approved_swppp`` ...) on a disturbance layer, of a GeoPackage or of a single file, are
taken per ``proposal_id`` (features of one proposal must agree).  When a GeoPackage also
has a ``proposals`` table, the table wins where it gives a value, and a proposal for which
the table and the disturbance layer give different values is one error naming both.

Column names are matched as exports write them (:mod:`gis_sw.layers.proposal_columns`:
another case, a Shapefile's 10-character cut, a near miss warned about) and values
normalised (:mod:`gis_sw.layers.proposal_values`: ids read as floats, time-zone dates,
dates pandas cannot hold, ``inf``).  A device or impervious surface whose ``proposal_id``
matches no disturbance is an error naming it and the ids that exist: left in, it would be
screened as a proposal of its own.

Dates are ISO (``2026-05-01``); an end before its start is an error naming the feature.
Everything is reprojected to the working CRS and ends in
:func:`gis_sw.layers.build.assemble_proposals`.  Missing optional attributes are not errors:
they become ``review`` findings later.
"""

from __future__ import annotations

import logging
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
from pyproj import CRS

from gis_sw.errors import CRSError, InputFileError, LayerError, Problem
from gis_sw.layers.build import assemble_proposals
from gis_sw.layers.layerset import LayerReport
from gis_sw.layers.manifest_entry import parse_crs
from gis_sw.layers.proposal_attributes import merge_attributes, split_attributes
from gis_sw.layers.proposal_checks import (
    ATTRIBUTE_TABLE,
    check_attributes,
    check_dates,
    of_no_proposal,
    without_disturbance,
)
from gis_sw.layers.proposal_columns import resolve_columns
from gis_sw.layers.proposal_values import (
    date_range_problem,
    id_strings,
    normalise_dates,
    number_problems,
)
from gis_sw.layers.proposals import ATTRIBUTE_COLUMNS, Proposals
from gis_sw.layers.specs import PROPOSAL_LAYERS, LayerSpec
from gis_sw.layers.validate import feature_labels, validate_layer
from gis_sw.layers.vector import crs_text, crs_units, read_vector, to_working_crs, unreadable
from gis_sw.ruleset import Ruleset

logger = logging.getLogger(__name__)

GEOMETRY_LAYERS = ("disturbance", "devices", "impervious")
ID_COLUMNS = ("proposal_id", "device_id", "disturbance_id")
NOT_NEGATIVE = ("construction_cost_usd", "depth_ft")
"""Number columns whose quantity cannot be below 0."""
SOURCE_COLUMNS = frozenset({"fid", "ogc_fid", "objectid", "shape_leng", "shape_area"})
SOURCE_COLUMNS |= {"layer", "paperspace", "subclasses", "linetype", "entityhandle", "text"}
"""Columns GIS and CAD exports add by themselves: never taken for a misspelt proposal column."""


def read_proposals(
    path: str | Path,
    *,
    ruleset: Ruleset,
    crs: CRS | str | None = None,
    strict: bool = False,
) -> Proposals:
    """Read, reproject and validate proposals.

    Parameters
    ----------
    path
        A proposals GeoPackage, or one disturbance file (GeoJSON, Shapefile, a zipped
        Shapefile, DXF ...); GDAL's ``/vsizip/`` paths are read too.
    ruleset
        Gives the working CRS and the exemption letters.
    crs
        The CRS the file's coordinates are in: used for files that carry none (DXF), and it
        overrides the CRS a file claims (a state-plane GeoJSON without a ``crs`` member is
        read by GDAL as EPSG:4326); the report says so.
    strict
        Refuse invalid geometries instead of repairing them.

    Raises
    ------
    InputFileError
        If the file is missing, not a regular file (a named pipe, a device), unreadable,
        or a GeoPackage has no ``disturbance`` layer.
    CRSError
        If a layer has no CRS and ``crs`` is not given.
    LayerError
        Naming every problem: missing or ambiguous columns, wrong geometry types, duplicate
        ids, bad yes/no values, numbers or dates, an end date before its start, unknown
        land use or exemption, devices of no drawn proposal, attributes given twice with
        different values.
    """
    path = check_input_file(path, "proposals file")
    path, inner = zip_member(path)
    assumed = _as_crs(crs)
    working = ruleset.working_crs
    problems: list[Problem] = []
    reports: dict[str, LayerReport] = {}
    frames: dict[str, gpd.GeoDataFrame] = {}
    table: pd.DataFrame | None = None

    def read(layer: str | None, kind: str, *, single: bool = False) -> None:
        _read_layer(
            path,
            layer,
            kind=kind,
            single=single,
            assumed=assumed,
            working=working,
            strict=strict,
            frames=frames,
            reports=reports,
            problems=problems,
        )

    if path.suffix.lower() == ".gpkg":
        layers = _gpkg_layers(path)
        for kind in GEOMETRY_LAYERS:
            if kind in layers:
                read(kind, kind)
        if ATTRIBUTE_TABLE in layers:
            table = _read_table(path, problems)
    else:
        read(inner, "disturbance", single=True)
    attributes = table
    if "disturbance" in frames:
        layer_name = reports["disturbance"].source
        frames["disturbance"], carried = split_attributes(
            frames["disturbance"], f"disturbance [{layer_name}]", problems
        )
        attributes = merge_attributes(
            table, carried, table_name=f"{ATTRIBUTE_TABLE} [{path}]", problems=problems
        )
    if attributes is not None:
        problems.extend(check_attributes(attributes, ruleset, f"{ATTRIBUTE_TABLE} [{path}]"))
    problems.extend(check_dates(frames.get("disturbance"), path))
    problems.extend(without_disturbance(attributes, frames.get("disturbance"), path))
    problems.extend(of_no_proposal(frames, path))
    if problems:
        raise LayerError(problems)
    proposals = assemble_proposals(
        working,
        frames["disturbance"],
        frames.get("devices"),
        attributes,
        frames.get("impervious"),
        source=str(path),
    )
    proposals.reports.update(reports)
    return proposals


def check_input_file(path: str | Path, what: str) -> Path:
    """Return the path of an input file, refused at once when it cannot be one.

    A named pipe, a socket or a device would make a reader wait for ever (or read a
    stream); only regular files, folders (a File Geodatabase) and GDAL's virtual paths
    (``/vsizip/...``) are read.

    Raises
    ------
    InputFileError
        If the path does not exist or is not a regular file or folder.
    """
    path = Path(path)
    if str(path).startswith("/vsi"):
        return path
    if not path.exists():
        raise InputFileError(f"{path}: no such {what}. Fix: check the path.")
    if not (path.is_file() or path.is_dir()):
        kind = (
            "a named pipe (FIFO)"
            if path.is_fifo()
            else "a socket"
            if path.is_socket()
            else "a device"
            if path.is_char_device() or path.is_block_device()
            else "not a regular file"
        )
        raise InputFileError(
            f"{path}: is {kind}, not a file; gis-sw reads only regular files. Fix: save the "
            f"{what} to a file and give its path."
        )
    return path


def zip_member(path: Path) -> tuple[Path, str | None]:
    """Split a GDAL ``/vsizip/ARCHIVE.zip/INNER.shp`` path into (archive, layer name).

    ``Path`` folds the double slash of ``/vsizip//abs/path.zip`` into ``/vsizip/abs/...``,
    which GDAL would read as a relative path; the archive is therefore found here (relative
    first, as GDAL does, then absolute) and read directly, its member as the layer.

    Raises
    ------
    InputFileError
        If the path names no ``.zip`` archive that exists.
    """
    text = str(path)
    if not text.startswith("/vsizip/"):
        return path, None
    parts = Path(text.removeprefix("/vsizip/")).parts
    for i, part in enumerate(parts):
        if part.lower().endswith(".zip"):
            relative = Path(*parts[: i + 1])
            inner = Path(*parts[i + 1 :]).stem if i + 1 < len(parts) else None
            for archive in (relative, Path("/") / relative):
                if archive.is_file():
                    return archive, inner or None
            raise InputFileError(f"{path}: no zip archive {relative}. Fix: check the path.")
    raise InputFileError(
        f"{path}: names no .zip archive. Fix: give the archive (lod.zip) or "
        "/vsizip/lod.zip/lod.shp."
    )


def _gpkg_layers(path: Path) -> list[str]:
    try:
        layers = [str(name) for name, _ in pyogrio.list_layers(path)]
    except Exception as exc:  # pyogrio's DataSourceError and GDAL errors
        raise InputFileError(unreadable(path, "GeoPackage", exc)) from exc
    if "disturbance" not in layers:
        raise InputFileError(
            f"{path} has no 'disturbance' layer (it has {', '.join(layers)}). Fix: name "
            "the limits-of-disturbance layer 'disturbance'."
        )
    return layers


def _as_crs(crs: CRS | str | None) -> CRS | None:
    if crs is None or isinstance(crs, CRS):
        return crs
    problems: list[Problem] = []
    parsed = parse_crs(crs, "--crs", problems)
    if problems:
        raise CRSError(str(problems[0]))
    return parsed


def _read_table(path: Path, problems: list[Problem]) -> pd.DataFrame | None:
    """Read the ``proposals`` attribute table, columns matched and values normalised."""
    try:
        raw = pyogrio.read_dataframe(
            path, layer=ATTRIBUTE_TABLE, read_geometry=False, use_arrow=True
        )
    except Exception as exc:  # GDAL read errors
        raise InputFileError(
            unreadable(path, f"GeoPackage: table {ATTRIBUTE_TABLE!r} failed", exc)
        ) from exc
    name = f"{ATTRIBUTE_TABLE} [{path}]"
    frame, notes, found = prepare_columns(
        pd.DataFrame(raw), PROPOSAL_LAYERS[ATTRIBUTE_TABLE], name=name
    )
    _log_notes(name, notes)
    problems.extend(found)
    return None if found else frame


def _spec_columns(spec: LayerSpec, kind: str) -> dict[str, str]:
    """Every column read from a layer kind, name to logical type."""
    columns = {**spec.required, **spec.optional}
    if kind == "disturbance":
        columns |= ATTRIBUTE_COLUMNS
    return columns


def prepare_columns(
    frame: pd.DataFrame, spec: LayerSpec, *, name: str, extra: dict[str, str] | None = None
) -> tuple[pd.DataFrame, list[str], list[Problem]]:
    """Match column names, normalise ids, dates and numbers before a layer's validation.

    Returns
    -------
    (frame, notes, problems)
    """
    columns = {**spec.required, **spec.optional, **(extra or {})}
    geometry = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    names = [str(c) for c in frame.columns if c != geometry]
    plan = resolve_columns(names, list(columns), required=spec.required, ignore=SOURCE_COLUMNS)
    problems = [Problem(name, message, fix) for message, fix in plan.errors]
    if plan.rename:
        frame = frame.rename(columns=dict(plan.rename))
    if problems:
        return frame, list(plan.notes), problems
    frame, labels, problems = normalise_values(frame, spec, columns, name=name)
    numbers = [c for c, kind in columns.items() if kind == "float"]
    problems.extend(number_problems(frame, numbers, labels, name, not_negative=NOT_NEGATIVE))
    return frame, list(plan.notes), problems


def normalise_values(
    frame: pd.DataFrame, spec: LayerSpec, columns: dict[str, str], *, name: str
) -> tuple[pd.DataFrame, pd.Series, list[Problem]]:
    """Ids as text (``101.0`` is ``101``) and dates as naive UTC ``datetime64[ns]``.

    Returns
    -------
    (frame, labels, problems)
        A copy of the frame, each feature's name for messages, and a problem per date
        column holding dates pandas cannot hold (``9999-12-31``).
    """
    frame = frame.copy()
    for column in ID_COLUMNS:
        if column in frame.columns:
            frame[column] = id_strings(frame[column])
    label_column = spec.id_column or ("disturbance_id" if spec.kind == "disturbance" else None)
    labels = feature_labels(frame.reset_index(drop=True), label_column)
    labels.index = frame.index
    problems = []
    for column, kind in columns.items():
        if kind != "date" or column not in frame.columns:
            continue
        frame[column], far = normalise_dates(frame[column])
        if far.any():
            problems.append(date_range_problem(frame, column, far, labels, name))
    return frame, labels, problems


def _log_notes(name: str, notes: list[str]) -> None:
    for note in notes:
        logger.warning("%s: %s", name, note)


def _read_layer(
    path: Path,
    layer: str | None,
    *,
    kind: str,
    single: bool = False,
    assumed: CRS | None,
    working: CRS,
    strict: bool,
    frames: dict[str, gpd.GeoDataFrame],
    reports: dict[str, LayerReport],
    problems: list[Problem],
) -> None:
    """Read, reproject and validate one layer into ``frames`` and ``reports``."""
    label = f"{path}:{layer}" if layer else str(path)
    name = f"{kind} [{label}]"
    frame, source_crs, warnings = read_vector(path, layer=layer, kind=kind, crs=assumed)
    frame, source_crs = override_crs(frame, source_crs, assumed, warnings)
    spec = PROPOSAL_LAYERS[kind]
    frame, notes, found = prepare_columns(
        frame, spec, name=name, extra=ATTRIBUTE_COLUMNS if kind == "disturbance" else None
    )
    if found:
        problems.extend(found)
        return
    frame = gpd.GeoDataFrame(frame, geometry=frame.geometry.name, crs=frame.crs)
    frame = to_working_crs(frame, working, label=label)
    if kind == "disturbance" and single and "proposal_id" not in frame.columns:
        frame = frame.assign(proposal_id=path.stem)
        notes.append(f"no proposal_id column: every feature is proposal {path.stem!r}.")
    _log_notes(name, notes)
    validated, found = validate_layer(frame, spec, layer=name, strict=strict)
    problems.extend(found)
    if validated is None:
        return
    frames[kind] = validated.frame
    bounds = validated.frame.total_bounds if len(validated.frame) else [float("nan")] * 4
    reports[kind] = LayerReport(
        kind=kind,
        source=label,
        features=len(validated.frame),
        source_crs=crs_text(source_crs),
        units=crs_units(source_crs),
        bounds=(float(bounds[0]), float(bounds[1]), float(bounds[2]), float(bounds[3])),
        repaired_ids=validated.repaired_ids,
        warnings=(*warnings, *notes, *validated.warnings),
    )


def override_crs(
    frame: gpd.GeoDataFrame, source_crs: CRS, assumed: CRS | None, warnings: list[str]
) -> tuple[gpd.GeoDataFrame, CRS]:
    """Apply the ``--crs`` given for a proposals file over the CRS the file claims.

    The one place the proposals side applies the override (the shared reader's own option,
    once it has one, can replace the body).
    """
    if assumed is None or source_crs.equals(assumed):
        return frame, source_crs
    warnings[:] = [w for w in warnings if not w.startswith("the file's own CRS")]
    warnings.append(
        f"the file says {crs_text(source_crs)}; --crs {crs_text(assumed)} was used instead."
    )
    return frame.set_crs(assumed, allow_override=True), assumed
