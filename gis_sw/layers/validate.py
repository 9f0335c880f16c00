"""Check a layer against its spec; collect every problem; repair invalid geometries.

:func:`validate_layer` never raises for bad data: it returns the cleaned frame and the list of
problems, so a reader can go through every layer and raise one
:class:`~gis_sw.errors.LayerError` naming them all.  :func:`check_layer` is the raising form.

Features are named by their id (``parcel_id`` ...) when the spec has one and the value is
present, else by their row number in the source, counted from 1 (``row 3``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.errors import LayerError, Problem
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.labels import (
    MAX_LISTED,
    SOURCE_ROW,
    Labels,
    LazyLabels,
    feature_labels,
    id_text,
    listing,
)
from gis_sw.layers.repair import repair_polygons
from gis_sw.layers.specs import GeometryKind, LayerSpec
from gis_sw.layers.values import parse_bool

logger = logging.getLogger(__name__)

__all__ = [  # the names of gis_sw.layers.labels too, which readers import from here
    "ALLOWED_TYPES",
    "MAX_LISTED",
    "SOURCE_ROW",
    "ValidatedLayer",
    "apply_columns",
    "bad_values",
    "check_layer",
    "feature_labels",
    "id_text",
    "listing",
    "strip_text",
    "validate_layer",
    "validate_table",
]

ALLOWED_TYPES: dict[GeometryKind, frozenset[str]] = {
    GeometryKind.POLYGON: frozenset({"Polygon", "MultiPolygon"}),
    GeometryKind.POINT: frozenset({"Point", "MultiPoint"}),
    GeometryKind.LINE: frozenset({"LineString", "MultiLineString"}),
    GeometryKind.POINT_OR_POLYGON: frozenset({"Point", "MultiPoint", "Polygon", "MultiPolygon"}),
}


@dataclass(frozen=True, slots=True)
class ValidatedLayer:
    """A layer that passed validation.

    Attributes
    ----------
    frame
        Columns renamed to the spec's names, geometries 2-D and valid.
    repaired_ids
        Features repaired with ``make_valid``.
    warnings
        Non-fatal remarks (Z dropped, ids repaired).
    """

    frame: gpd.GeoDataFrame
    repaired_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def apply_columns(
    frame: gpd.GeoDataFrame, columns: Mapping[str, str], *, layer: str
) -> tuple[gpd.GeoDataFrame, list[Problem]]:
    """Rename source columns to spec names (``{"zone": "ZONE_TYPE"}``).

    A mapped source column that is absent is a problem naming the columns that exist.
    """
    problems: list[Problem] = []
    rename: dict[str, str] = {}
    for spec_name, source_name in columns.items():
        if source_name in frame.columns:
            rename[source_name] = spec_name
        else:
            problems.append(
                Problem(
                    layer,
                    f"column mapping {spec_name} = {source_name!r}: the source has no column "
                    f"{source_name!r} (it has {listing(_attribute_columns(frame))}).",
                    "correct the mapping under columns in the manifest.",
                )
            )
    clash = [s for s in rename.values() if s in frame.columns and s not in rename]
    out = frame.drop(columns=clash).rename(columns=rename) if rename else frame
    return gpd.GeoDataFrame(out, geometry=frame.geometry.name, crs=frame.crs), problems


def _attribute_columns(frame: gpd.GeoDataFrame) -> list[str]:
    return [c for c in frame.columns if c != frame.geometry.name]


def validate_layer(
    frame: gpd.GeoDataFrame,
    spec: LayerSpec,
    *,
    layer: str | None = None,
    strict: bool = False,
) -> tuple[ValidatedLayer | None, list[Problem]]:
    """Check a frame against its spec and repair what may be repaired.

    Parameters
    ----------
    frame
        The layer, columns already renamed to the spec's names.
    spec
        Its :class:`~gis_sw.layers.specs.LayerSpec`.
    layer
        Name used in messages (default: the spec's kind).
    strict
        Refuse invalid geometries instead of repairing them.

    Returns
    -------
    (ValidatedLayer or None, problems)
        The validated layer is None when there is any problem.
    """
    name = layer or spec.kind
    problems: list[Problem] = []
    warnings: list[str] = []
    frame = frame.reset_index(drop=True)
    text_columns = [c for c, k in {**spec.required, **spec.optional}.items() if k == "str"]
    frame = strip_text(frame, text_columns)
    labels = LazyLabels(frame, spec.id_column)

    for column in spec.required:
        if column not in frame.columns:
            problems.append(
                Problem(
                    name,
                    f"required column {column!r} is missing (columns present: "
                    f"{listing(_attribute_columns(frame)) or 'none'}).",
                    f"add {column!r}, or map it in the manifest: columns = "
                    f'{{ {column} = "YOUR_COLUMN" }}.',
                )
            )
    if len(frame) == 0:
        if spec.required_layer:
            problems.append(
                Problem(name, "has no features.", "provide a layer with at least one feature.")
            )
        return (None if problems else ValidatedLayer(frame)), problems

    geoms = np.asarray(frame.geometry.values, dtype=object)
    missing = unlocated(geoms)
    if missing.any():
        problems.append(
            Problem(
                name,
                f"{int(missing.sum())} feature(s) have no geometry: {listing(labels[missing])}.",
                "delete these features or draw their geometry.",
            )
        )
    present = ~missing
    if shapely.has_z(geoms[present]).any() or _has_m(geoms[present]):
        geoms = geoms.copy()
        geoms[present] = shapely.force_2d(geoms[present])
        warnings.append("Z/M values dropped (2-D geometry is used).")

    present &= ~_wrong_types(geoms, present, spec=spec, labels=labels, name=name, problems=problems)
    geoms, repaired = _repair_invalid(
        geoms, present, spec=spec, labels=labels, name=name, strict=strict, problems=problems
    )

    problems.extend(_check_attributes(frame, spec, labels, name))
    if problems:
        return None, problems
    out = frame.copy()
    out[frame.geometry.name] = gpd.GeoSeries(geoms, index=frame.index, crs=frame.crs)
    for column, kind in {**spec.required, **spec.optional}.items():
        if kind == "str" and column in out.columns and out[column].dtype.kind == "f":
            out[column] = id_text(out[column])
    validated = gpd.GeoDataFrame(out, geometry=frame.geometry.name, crs=frame.crs)
    return ValidatedLayer(validated, repaired, tuple(warnings)), []


def _wrong_types(
    geoms: np.ndarray,
    present: np.ndarray,
    *,
    spec: LayerSpec,
    labels: Labels,
    name: str,
    problems: list[Problem],
) -> np.ndarray:
    """Return the mask of present geometries of a type the spec refuses (a problem if any)."""
    allowed = ALLOWED_TYPES.get(spec.geometry)
    if allowed is None:
        return np.zeros(len(geoms), dtype=bool)
    names = pd.Series(shapely.get_type_id(geoms)).map(GEOMETRY_TYPE_NAMES)
    wrong = present & ~names.isin(allowed).to_numpy()
    if wrong.any():
        found = ", ".join(sorted(set(names[wrong])))
        problems.append(
            Problem(
                name,
                f"{int(wrong.sum())} feature(s) are {found}, not {spec.geometry.value}: "
                f"{listing(labels[wrong])}.",
                f"give {spec.kind} as {' or '.join(sorted(allowed))} geometries.",
            )
        )
    return wrong


def _repair_invalid(
    geoms: np.ndarray,
    present: np.ndarray,
    *,
    spec: LayerSpec,
    labels: Labels,
    name: str,
    strict: bool,
    problems: list[Problem],
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Return the geometries with invalid ones repaired, and the labels of those repaired.

    Under ``strict`` invalid geometries are a problem instead; so are repairs that collapse
    to nothing.
    """
    invalid = present & ~shapely.is_valid(geoms)
    if not invalid.any():
        return geoms, ()
    if strict:
        reasons = shapely.is_valid_reason(geoms[invalid])
        bad = [f"{lab} ({why})" for lab, why in zip(labels[invalid], reasons, strict=True)]
        problems.append(
            Problem(
                name,
                f"{int(invalid.sum())} invalid geometr(ies): {listing(bad)}.",
                "repair them in the source, or run without --strict to repair with make_valid.",
            )
        )
        return geoms, ()
    fixed = _repair(geoms[invalid], spec.geometry)
    collapsed = shapely.is_empty(fixed)
    if collapsed.any():
        problems.append(
            Problem(
                name,
                "invalid geometries that collapse to nothing when repaired: "
                f"{listing(labels[invalid][collapsed])}.",
                "redraw these features.",
            )
        )
    geoms = geoms.copy()
    geoms[invalid] = fixed
    repaired = tuple(str(x) for x in labels[invalid])
    logger.info("%s: repaired %d invalid geometries", name, len(repaired))
    return geoms, repaired


def strip_text(frame: gpd.GeoDataFrame, columns: Iterable[str]) -> gpd.GeoDataFrame:
    """Text values without leading and trailing blanks (``"R-10 "`` is zone ``R-10``).

    Exports pad text fields; a padded zone name or id would otherwise match nothing.
    """
    present = [c for c in columns if c in frame.columns]
    if not present:
        return frame
    out = frame.copy()
    for column in present:
        values = out[column]
        if isinstance(values.dtype, pd.StringDtype):
            out[column] = values.str.strip()
        elif values.dtype == object:
            out[column] = values.map(lambda v: v.strip() if isinstance(v, str) else v)
    return out


GEOMETRY_TYPE_NAMES = {
    -1: "None",
    0: "Point",
    1: "LineString",
    2: "LinearRing",
    3: "Polygon",
    4: "MultiPoint",
    5: "MultiLineString",
    6: "MultiPolygon",
    7: "GeometryCollection",
}
"""Shapely's geometry type ids (``-1``: missing) to the names GDAL and messages use."""


def _has_m(geoms: np.ndarray) -> bool:
    has_m = getattr(shapely, "has_m", None)
    return bool(has_m(geoms).any()) if has_m is not None and len(geoms) else False


def _repair(geoms: np.ndarray, kind: GeometryKind) -> np.ndarray:
    """``make_valid``; polygon layers keep only the polygonal parts of the result."""
    if kind in (GeometryKind.POLYGON, GeometryKind.POINT_OR_POLYGON):
        fixed = repair_polygons(geoms)  # ring by ring: a cut-out stays cut out
        out = np.empty(len(fixed), dtype=object)
        for i, geom in enumerate(fixed):
            polys = [p for p in shapely.get_parts(geom) if p.geom_type == "Polygon"]
            out[i] = (
                shapely.MultiPolygon()
                if not polys
                else polys[0]
                if len(polys) == 1
                else shapely.MultiPolygon(polys)
            )
        return out
    return np.asarray(shapely.make_valid(geoms), dtype=object)


def _check_attributes(
    frame: pd.DataFrame, spec: LayerSpec, labels: Labels, name: str
) -> list[Problem]:
    return [
        *_check_ids(frame, spec, name),
        *_check_required_values(frame, spec, labels, name),
        *_check_values(frame, spec, labels, name),
    ]


def validate_table(
    frame: pd.DataFrame, spec: LayerSpec, *, layer: str | None = None
) -> list[Problem]:
    """Problems of an attribute table (no geometry): columns, ids, empty and bad values."""
    name = layer or spec.kind
    frame = frame.reset_index(drop=True)
    problems = [
        Problem(
            name,
            f"required column {column!r} is missing (columns present: "
            f"{listing(frame.columns) or 'none'}).",
            f"add a {column!r} column.",
        )
        for column in spec.required
        if column not in frame.columns
    ]
    problems.extend(_check_attributes(frame, spec, feature_labels(frame, spec.id_column), name))
    return problems


def _check_ids(frame: pd.DataFrame, spec: LayerSpec, name: str) -> list[Problem]:
    column = spec.id_column
    if not column or column not in frame.columns or not spec.unique_id:
        return []
    ids = id_text(frame[column])
    # a blank id (stripped to "") is no id: the required-values check names it by row
    present = ids.notna() & (ids.astype(object).fillna("").astype(str).str.len() > 0)
    dup = ids[present & ids.duplicated(keep=False)]
    if dup.empty:
        return []
    counts = dup.value_counts(sort=False)
    listed = [f"{value!r} ({count} times)" for value, count in counts.items()]
    return [
        Problem(
            name,
            f"duplicate {column}: {listing(listed)}.",
            f"give every feature its own {column}.",
        )
    ]


def _check_required_values(
    frame: pd.DataFrame, spec: LayerSpec, labels: Labels, name: str
) -> list[Problem]:
    problems = []
    for column in spec.required:
        if column not in frame.columns:
            continue
        values = frame[column]
        empty = values.isna()
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            empty |= _blank_text(values)
        if empty.any():
            problems.append(
                Problem(
                    name,
                    f"required column {column!r} is empty for {int(empty.sum())} feature(s): "
                    f"{listing(labels[empty.to_numpy()])}.",
                    f"fill in {column} for every feature.",
                )
            )
    return problems


def _blank_text(values: pd.Series) -> np.ndarray:
    """Return which values are text holding nothing but blanks (``""``, ``"  "``).

    A text column (pandas ``str``) is tested by its first characters: only values that
    start with a blank (or are empty) can be blank, and only those few are stripped.
    """
    if not isinstance(values.dtype, pd.StringDtype):
        blank = values.astype(object).map(lambda v: isinstance(v, str) and not v.strip())
        return blank.to_numpy(dtype=bool)
    first = values.str.slice(0, 1)
    spaces = [head for head in pd.unique(first.dropna()) if head == "" or head.isspace()]
    out = np.zeros(len(values), dtype=bool)
    if spaces:
        maybe = first.isin(spaces).to_numpy(dtype=bool)
        out[maybe] = [not str(v).strip() for v in values[maybe]]
    return out


def _check_values(frame: pd.DataFrame, spec: LayerSpec, labels: Labels, name: str) -> list[Problem]:
    """Values that do not parse as the column's logical type (bool, date, number)."""
    problems = []
    for column, kind in {**spec.required, **spec.optional}.items():
        if column not in frame.columns or kind == "str":
            continue
        bad = bad_values(frame[column], kind)
        if bad.any():
            shown = [
                f"{lab} = {val!r}" for lab, val in zip(labels[bad], frame[column][bad], strict=True)
            ]
            problems.append(
                Problem(
                    name,
                    f"column {column!r} has values that are not {_KIND_WORDS[kind]}: "
                    f"{listing(shown)}.",
                    _KIND_FIXES[kind],
                )
            )
    return problems


_KIND_WORDS = {
    "bool": "yes/no",
    "date": "ISO dates",
    "float": "numbers",
    "int": "whole numbers",
}
_KIND_FIXES = {
    "bool": "write true/false, yes/no, y/n or 1/0 (empty when unknown).",
    "date": "write dates as YYYY-MM-DD (empty when unknown).",
    "float": "write plain numbers (empty when unknown).",
    "int": "write whole numbers (empty when unknown).",
}


def bad_values(series: pd.Series, kind: str) -> np.ndarray:
    """Boolean mask of values that are present but do not parse as ``kind``."""
    present = series.notna().to_numpy(dtype=bool)
    if kind == "bool":

        def unparseable(value: object) -> bool:
            try:
                parse_bool(value)
            except ValueError:
                return True
            return False

        values = series[present]
        failing = [v for v in pd.unique(values.astype(object)) if unparseable(v)]
        bad = np.zeros(len(series), dtype=bool)
        bad[present] = values.isin(failing).to_numpy(dtype=bool) if failing else False
        return bad
    if kind == "date":
        if pd.api.types.is_datetime64_any_dtype(series):
            return np.zeros(len(series), dtype=bool)
        text = series.map(lambda v: v if isinstance(v, str) else str(v))
        parsed = pd.to_datetime(text.where(present), errors="coerce", format="ISO8601")
        return present & parsed.isna().to_numpy()
    if kind in ("float", "int"):
        parsed = pd.to_numeric(series, errors="coerce")
        bad = present & parsed.isna().to_numpy()
        if kind == "int":
            whole = (parsed.isna() | (parsed == np.floor(parsed))).to_numpy(dtype=bool)
            bad |= present & ~whole
        return bad
    return np.zeros(len(series), dtype=bool)


def check_layer(
    frame: gpd.GeoDataFrame, spec: LayerSpec, *, layer: str | None = None, strict: bool = False
) -> ValidatedLayer:
    """:func:`validate_layer` that raises.

    Raises
    ------
    LayerError
        Listing every problem of the layer.
    """
    validated, problems = validate_layer(frame, spec, layer=layer, strict=strict)
    if problems or validated is None:
        raise LayerError(problems)
    return validated
