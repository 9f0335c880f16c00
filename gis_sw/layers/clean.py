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
"""

from __future__ import annotations

from collections.abc import Iterable

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.layers.geoms import unlocated
from gis_sw.layers.layerset import DroppedFeature
from gis_sw.layers.specs import LayerSpec
from gis_sw.layers.validate import SOURCE_ROW, id_text

__all__ = ["drop_bad_features", "duplicate_geometry_groups"]


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
    keys = shapely.to_wkb(shapely.normalize(geoms[present]))
    ids = id_text(frame[id_column]).to_numpy(dtype=object)[present]
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
