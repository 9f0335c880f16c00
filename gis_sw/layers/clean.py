"""Messy real layers: features to leave out (with a reason), and identical geometries.

Real exports carry features that name nothing: a right of way drawn as a parcel with the
id ``---`` or ``ROAD``, a row with no geometry, a null id, a 40 sq ft unnamed zoning sliver
left by digitising.  With ``on_bad_feature = "error"`` (the default) validation refuses
the layer and names them; with ``on_bad_feature = "skip"`` in the layer's manifest table
:func:`drop_bad_features` leaves them out *before* validation and returns each one with its
reason, for ``gis-sw validate`` and batch's ``problems.csv``.  Anything else wrong with a
feature (a wrong geometry type, a bad value, a duplicate id) is still an error: a feature
that means something is never dropped silently.

:func:`duplicate_geometry_groups` finds features with identical geometry and different ids
(condominium units stacked on one lot): the ids are reported together, and batch screens
the geometry once.

:func:`whole_layer_id_problems` checks the ids of a layer read by window (only the features
near the proposals) over the whole layer, reading its id column alone (no geometry): a
``parcel_id`` repeated, or missing, far from the proposals is the same error it is when the
town is read whole, never a check that passes only because the window hid it.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from gis_sw.errors import LayerError, Problem
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.layerset import DroppedFeature
from gis_sw.layers.specs import TOWN_LAYERS, LayerSpec
from gis_sw.layers.validate import SOURCE_ROW, id_text, strip_text, validate_table

if TYPE_CHECKING:
    from gis_sw.layers.layerset import LayerReport
    from gis_sw.layers.manifest_entry import LayerEntry

__all__ = [
    "drop_bad_features",
    "duplicate_geometry_groups",
    "whole_ids_checked",
    "whole_layer_id_problems",
]


def _blank(series: pd.Series) -> np.ndarray:
    text = series.astype(object)
    return np.asarray(
        [v is None or (isinstance(v, float) and np.isnan(v)) or not str(v).strip() for v in text]
        if len(text)
        else [],
        dtype=bool,
    ) | series.isna().to_numpy(dtype=bool)


def _labels(frame: pd.DataFrame, id_column: str | None) -> np.ndarray:
    """``row 8 (parcel_id ---)``, or ``row 12`` when the feature has no id."""
    numbers = (
        frame[SOURCE_ROW].to_numpy() if SOURCE_ROW in frame.columns else range(1, len(frame) + 1)
    )
    rows = [f"row {i}" for i in numbers]
    if not id_column or id_column not in frame.columns:
        return np.asarray(rows, dtype=object)
    ids = id_text(frame[id_column]).to_numpy(dtype=object)
    return np.asarray(
        [
            f"{row} ({id_column} {v})" if not pd.isna(v) and str(v).strip() else row
            for row, v in zip(rows, ids, strict=True)
        ],
        dtype=object,
    )


def drop_bad_features(
    frame: gpd.GeoDataFrame,
    spec: LayerSpec,
    *,
    placeholder_ids: Iterable[str],
    max_sliver_sqft: float,
) -> tuple[gpd.GeoDataFrame, tuple[DroppedFeature, ...]]:
    """Leave out features with no geometry, an empty or placeholder id, or unnamed slivers.

    Slivers are zoning features with no zone name smaller than ``max_sliver_sqft``.

    ``frame`` has the spec's column names already.  Rows keep their order; the index is
    reset.  Each dropped feature is named ``row N`` (its row as read, from 1) and by its id
    when it has one: ``row 8 (parcel_id ---)``.
    """
    frame = frame.reset_index(drop=True)
    n = len(frame)
    if n == 0:
        return frame, ()
    labels = _labels(frame, spec.id_column)
    reasons: list[str | None] = [None] * n
    geoms = np.asarray(frame.geometry.values, dtype=object)
    no_geometry = unlocated(geoms)
    for i in np.flatnonzero(no_geometry):
        reasons[i] = "no geometry"
    column = spec.id_column
    if column and column in spec.required and column in frame.columns:
        ids = id_text(frame[column])
        empty = _blank(ids)
        for i in np.flatnonzero(empty & ~no_geometry):
            reasons[i] = f"no {column} (empty)"
        marks = {p.strip().upper() for p in placeholder_ids}
        upper = ids.map(lambda v: str(v).strip().upper(), na_action="ignore")
        placeholder = upper.isin(marks).to_numpy(dtype=bool) & ~empty & ~no_geometry
        for i in np.flatnonzero(placeholder):
            reasons[i] = f"placeholder {column} {ids.iloc[i]!r} (not a real feature)"
    if spec.kind == "zoning" and "zone" in frame.columns:
        unnamed = _blank(frame["zone"]) & ~no_geometry
        area = np.zeros(n)
        area[unnamed] = shapely.area(geoms[unnamed])
        sliver = unnamed & (area < max_sliver_sqft)
        for i in np.flatnonzero(sliver):
            reasons[i] = (
                f"unnamed zoning sliver of {area[i]:,.2f} sq ft (under {max_sliver_sqft:,.2f})"
            )
    drop = np.array([r is not None for r in reasons], dtype=bool)
    if not drop.any():
        return frame, ()
    dropped = tuple(
        DroppedFeature(spec.kind, str(labels[i]), str(reasons[i])) for i in np.flatnonzero(drop)
    )
    kept = frame.loc[~drop].reset_index(drop=True)
    return gpd.GeoDataFrame(kept, geometry=frame.geometry.name, crs=frame.crs), dropped


def duplicate_geometry_groups(
    frame: gpd.GeoDataFrame, id_column: str | None
) -> tuple[tuple[str, ...], ...]:
    """Ids of features whose geometries are identical (same shape, any vertex order).

    Geometries are normalised (``shapely.normalize``) and compared as WKB, so a ring
    starting at another vertex still matches; only groups with two or more different ids
    are returned, each sorted, the groups sorted by their first id.
    """
    if not id_column or id_column not in frame.columns or len(frame) < 2:
        return ()
    geoms = np.asarray(frame.geometry.values, dtype=object)
    present = ~unlocated(geoms)
    if present.sum() < 2:
        return ()
    # identical shapes have the same envelope and vertex count: only features sharing both
    # with another are normalised and compared (a town's parcels share none)
    rows = np.flatnonzero(present)
    bounds = shapely.bounds(geoms[rows])
    sizes = pd.DataFrame(bounds).assign(n=shapely.get_num_coordinates(geoms[rows]))
    rows = rows[sizes.duplicated(keep=False).to_numpy()]
    if len(rows) < 2:
        return ()
    keys = shapely.to_wkb(shapely.normalize(geoms[rows]))
    ids = id_text(frame[id_column]).to_numpy(dtype=object)[rows]
    table = pd.DataFrame({"key": keys, "id": ids}).dropna()
    repeated = table[table["key"].duplicated(keep=False)]
    if repeated.empty:
        return ()
    groups = []
    for _, members in repeated.groupby("key", sort=False)["id"]:
        distinct = tuple(sorted({str(v) for v in members}))
        if len(distinct) > 1:
            groups.append(distinct)
    return tuple(sorted(groups))


def whole_ids_checked(entry: LayerEntry, report: LayerReport) -> LayerReport:
    """Return the report of a layer read by window once its ids are checked whole.

    A PostGIS table read by window has its id column read whole in a read-only session of
    its own (one column, no geometry), and checked the same way.

    Raises
    ------
    LayerError
        For an id repeated (or empty) anywhere in the layer (:func:`whole_layer_id_problems`).
    InputFileError
        If a PostGIS table's id column cannot be read.
    """
    spec = TOWN_LAYERS[entry.kind]
    if not spec.id_column or not spec.unique_id:
        return report
    if entry.path is None:
        problems = _postgis_id_problems(entry)
        if problems:
            raise LayerError(problems)
        return report
    problems = whole_layer_id_problems(
        entry.path,
        layer=entry.layer,
        kind=entry.kind,
        source_column=entry.columns.get(spec.id_column),
        name=f"{entry.kind} [{entry.label}]",
    )
    if problems:
        raise LayerError(problems)
    return report


def whole_layer_id_problems(
    path: Path, *, layer: str | None, kind: str, source_column: str | None, name: str
) -> list[Problem]:
    """Return the problems of a windowed layer's ids over the whole layer.

    Reads the id column alone (pyogrio with Arrow, no geometry; a GeoParquet file's
    column) and checks it as validation checks a layer read whole: a repeated id of a
    layer whose ids are unique, an empty required id.  Remembered per file (size and
    modification time), so a long-lived caller reading windows again pays it once.

    Parameters
    ----------
    path
        The GeoPackage (or GeoParquet file) the layer was read from by window.
    layer
        Its layer in the file (None: the file's layer named after ``kind``, or its only one).
    kind
        Layer kind (its spec gives the id column).
    source_column
        The id column's name in the source (the manifest's mapping), None for the spec's.
    name
        The layer as problems name it (``parcels [town.gpkg:parcels]``).
    """
    spec = TOWN_LAYERS.get(kind)
    if spec is None or not spec.id_column or not spec.unique_id:
        return []
    stat = path.stat()
    column = source_column or spec.id_column
    key = (str(path), layer, kind, column, name, stat.st_size, stat.st_mtime_ns)
    with _PENDING_LOCK:
        pending = _PENDING.pop(key, None)
    if pending is not None:  # checked already, or being checked, by prefetch_whole_ids
        return list(pending.result())
    return list(_checked_ids(key))


def _checked_ids(key: tuple[str, str | None, str, str, str, int, int]) -> tuple[Problem, ...]:
    path, layer, kind, column, name, size, mtime_ns = key
    return _whole_id_problems(
        path, layer=layer, kind=kind, column=column, name=name, size=size, mtime_ns=mtime_ns
    )


_PENDING: dict[tuple[str, str | None, str, str, str, int, int], Future[tuple[Problem, ...]]] = {}
"""Whole-layer id checks started by :func:`prefetch_whole_ids`, by file version and layer."""
_PENDING_LOCK = threading.Lock()


def _forget_pending() -> None:
    """In a forked child the thread running the checks is gone: forget what it was doing."""
    _PENDING.clear()


os.register_at_fork(after_in_child=_forget_pending)


def prefetch_whole_ids(entries: Iterable[LayerEntry]) -> None:
    """Start checking, in a thread of their own, the whole ids of layers to be read by window.

    A check of one application reads each layer near the proposals, then
    :func:`whole_ids_checked` reads the id column of the whole layer (100,000 parcel ids:
    most of what reading the town around one addition costs).  Started before the reading,
    in a thread (GDAL and Arrow do it without the GIL), those reads run while the windows
    are read; :func:`whole_layer_id_problems` then takes each one's answer (its problems, or
    the error it raised) instead of reading the column again.  The answers are the same:
    only when they are computed changes.  Entries that are not read by window, or whose
    spec has no unique id, are left alone.
    """
    from gis_sw.layers.window_read import windowable

    jobs = []
    for entry in entries:
        spec = TOWN_LAYERS.get(entry.kind)
        if spec is None or not spec.id_column or not spec.unique_id or entry.path is None:
            continue
        if not windowable(entry):
            continue
        try:
            stat = entry.path.stat()
        except OSError:
            continue  # the read names the file
        column = entry.columns.get(spec.id_column) or spec.id_column
        name = f"{entry.kind} [{entry.label}]"
        key = (
            str(entry.path),
            entry.layer,
            entry.kind,
            column,
            name,
            stat.st_size,
            stat.st_mtime_ns,
        )
        future: Future[tuple[Problem, ...]] = Future()
        with _PENDING_LOCK:
            if key in _PENDING:
                continue
            _PENDING[key] = future
        jobs.append((key, future))
    if not jobs:
        return

    def run() -> None:
        for key, future in jobs:
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(_checked_ids(key))
            except BaseException as exc:  # noqa: BLE001 (handed to the reader as it was raised)
                future.set_exception(exc)

    # a daemon: a command that ends early (an error in the proposals) does not wait for it
    threading.Thread(target=run, name="gis_sw-whole-ids", daemon=True).start()


def _postgis_id_problems(entry: LayerEntry) -> list[Problem]:
    """Return the problems of a PostGIS table's ids over the whole table (read now)."""
    from gis_sw.layers.postgis import read_postgis_column

    spec = TOWN_LAYERS[entry.kind]
    if entry.postgis is None or entry.table is None:  # a query is never read by window
        return []
    column = entry.columns.get(str(spec.id_column)) or str(spec.id_column)
    values = read_postgis_column(entry.postgis, table=entry.table, column=column, label=entry.label)
    ids = pd.Series(values, dtype="object" if values else "string")
    return list(_id_problems(ids, entry.kind, f"{entry.kind} [{entry.label}]"))


@functools.lru_cache(maxsize=32)
def _whole_id_problems(
    path: str,
    *,
    layer: str | None,
    kind: str,
    column: str,
    name: str,
    size: int,
    mtime_ns: int,
) -> tuple[Problem, ...]:
    del size, mtime_ns  # the cache key: a file written again is read again
    ids = _id_column(Path(path), layer, kind, column)
    if ids is None:  # no such column: the window's own validation named it
        return ()
    return _id_problems(ids, kind, name)


def _id_problems(ids: pd.Series, kind: str, name: str) -> tuple[Problem, ...]:
    """Return the problems of a whole layer's id column, as validation gives them."""
    spec = TOWN_LAYERS[kind]
    id_column = str(spec.id_column)
    if pd.api.types.is_string_dtype(ids):
        text = ids.astype("string").str.strip()  # vectorised: a town's 100,000 parcel ids
    else:
        text = id_text(ids).astype("string")
    repeated = bool(text[text.notna()].duplicated().any())
    empty = id_column in spec.required and bool((text.isna() | (text == "")).any())
    if not repeated and not empty:
        return ()
    frame = strip_text(pd.DataFrame({id_column: ids}), [id_column])
    ids_only: LayerSpec = dataclasses.replace(
        spec,
        required={k: v for k, v in spec.required.items() if k == id_column},
        optional={},
    )
    return tuple(validate_table(frame, ids_only, layer=name))


def _id_column(path: Path, layer: str | None, kind: str, column: str) -> pd.Series | None:
    """Return one column of a whole layer, without its geometry (None when it has none)."""
    from gis_sw.layers.vector import PARQUET_SUFFIXES, pick_layer
    from gis_sw.layers.window import gpkg_fields

    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        if column not in pq.read_schema(path).names:
            return None
        return pq.read_table(path, columns=[column]).column(0).to_pandas()
    table = layer if layer is not None else kind
    fields = gpkg_fields(path, table)  # a GeoPackage's catalog: GDAL need not open it twice
    if fields is not None:
        layer = table
    else:
        layer, _ = pick_layer(path, layer, kind)
        fields = list(pyogrio.read_info(path, layer=layer)["fields"])
    if column not in fields:
        return None
    frame = pyogrio.read_dataframe(
        path, layer=layer, columns=[column], read_geometry=False, use_arrow=True
    )
    return frame[column]
