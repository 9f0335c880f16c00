"""Area of polygons by zone, or inside a layer: a vectorised overlay for one or 5 million subjects.

The one entry point, :func:`area_by_key`, takes whole GeoSeries so the same code serves a
single proposal and a statewide batch of parcels:

1. an STRtree over the features answers which (subject, feature) pairs intersect;
2. a ``contains_properly`` test against the prepared features finds subjects wholly inside
   one feature: their piece is the subject itself, no GEOS ``intersection`` needed (on a
   town's parcels against zoning, that is most of them);
3. the remaining pairs go through one vectorised ``shapely.intersection`` call;
4. pieces of one subject falling in several features with the same key are unioned (so
   overlapping wetlands are counted once) or, for a coverage such as zoning, summed
   (``dissolve=False``, faster, exact when the features do not overlap).

Areas are in the square units of the CRS (square feet in the working CRS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.rect_clip import clip_by_boxes

__all__ = [
    "MANY_PARTS",
    "Pieces",
    "area_by_key",
    "overlay_arrays",
    "overlay_pieces",
    "polygonal_part",
    "union_of_parts",
]

_POLYGONAL = {3, 6}  # shapely type ids of Polygon, MultiPolygon
_COLLECTION = 7


MANY_PARTS = 256
"""Above this many polygon parts, a union joins only the parts that meet
(:func:`union_of_parts`): one proposal of 100,000 small polygons spans two zone features,
and GEOS's full union of its two halves took 11 s where joining the parts that meet takes
well under one; the union is the same ground either way."""


def union_of_parts(geoms: Any) -> shapely.Geometry:
    """Return :func:`shapely.union_all` of ``geoms``, joining only parts that meet when many.

    Up to :data:`MANY_PARTS` parts, exactly ``shapely.union_all(geoms)``; above it,
    ``shapely.disjoint_subset_union_all`` of all the parts (the same union, computed by the
    groups of parts that intersect).
    """
    arr = np.asarray(geoms, dtype=object).ravel()
    parts = shapely.get_parts(arr)
    if len(parts) > MANY_PARTS:
        return shapely.disjoint_subset_union_all(parts)
    return shapely.union_all(arr)


def polygonal_part(geometry: shapely.Geometry | None) -> shapely.Geometry:
    """Return the polygonal part of an overlay result (a collection's lines, points dropped)."""
    if geometry is None or shapely.is_empty(geometry):
        return shapely.Polygon()
    kind = shapely.get_type_id(geometry)
    if kind in _POLYGONAL:
        return geometry
    if kind == _COLLECTION:
        parts = [p for p in shapely.get_parts(geometry) if shapely.get_type_id(p) in _POLYGONAL]
        if not parts:
            return shapely.Polygon()
        return parts[0] if len(parts) == 1 else union_of_parts(parts)
    return shapely.Polygon()


CLIP_VERTICES = 512
"""Features with more vertices than this (the wetland band's finely drawn arcs) are cut to
each subject's bounding box before the overlay: GEOS's rectangle clip is linear and the
overlay of the subject with the clipped piece is then small, where an overlay with the whole
feature would node all of its vertices for every subject it meets."""


def clip_to_subjects(features: np.ndarray, subjects: np.ndarray) -> np.ndarray:
    """``features``, each big one cut to its subject's bounding box (same result inside it).

    The rectangle clip does not promise a valid result; a cut piece that is not valid is
    replaced by the whole feature, so the answer never depends on it.
    """
    big = np.flatnonzero(shapely.get_num_coordinates(features) > CLIP_VERTICES)
    if len(big) == 0:
        return features
    out = features.copy()
    bounds = shapely.bounds(subjects[big])
    cut = clip_by_boxes(features[big], bounds)  # one rectangle per feature, in one call
    good = shapely.is_valid(cut)
    out[big[good]] = cut[good]
    return out


@dataclass(frozen=True, slots=True)
class Pieces:
    """What :func:`area_by_key` returns, as plain arrays: one entry per (subject, key) row.

    ``subject`` holds the subjects' index labels, ``key`` the key values (None when
    missing), ``area_sqft`` floats, ``geometry`` the pieces when asked for (else None).
    """

    subject: np.ndarray
    key: np.ndarray
    area_sqft: np.ndarray
    geometry: np.ndarray | None

    def __len__(self) -> int:
        """Return the number of rows."""
        return len(self.area_sqft)


def area_by_key(
    subjects: gpd.GeoSeries,
    features: gpd.GeoDataFrame,
    key: str | None = None,
    *,
    keep_geometry: bool = False,
    dissolve: bool = True,
) -> pd.DataFrame:
    """Area of each subject polygon inside the features, grouped by a feature column.

    Parameters
    ----------
    subjects
        Polygons (disturbance unions, parcels); their index labels identify them.  Empty or
        missing geometries simply have no rows.
    features
        Polygons to overlay (zoning, wetlands, floodplain), in the same CRS.
    key
        Column of ``features`` to group by (``"zone"``).  ``None`` groups every feature
        together: the area of each subject inside the layer.  Missing key values are kept
        as ``None`` (the caller decides what an unnamed zone means).
    keep_geometry
        Also return the piece of each subject inside each key (polygonal part only).
    dissolve
        Union the pieces of one subject that fall in several features with the same key,
        so overlapping features are counted once.  ``False`` sums their areas instead
        (exact for a coverage like zoning; no geometry is built for multi-piece groups
        unless ``keep_geometry``).

    Returns
    -------
    DataFrame
        One row per (subject, key) with a positive area: ``subject`` (the index label),
        ``key`` (the key value, or ``None``), ``area_sqft``, and ``geometry`` when
        ``keep_geometry``.  Rows are ordered by subject position, then by key in order of
        first appearance.

    Raises
    ------
    ValueError
        If ``key`` is not a column of ``features`` or the CRSs differ.
    """
    columns = ["subject", "key", "area_sqft"] + (["geometry"] if keep_geometry else [])
    found = overlay_pieces(subjects, features, key, keep_geometry=keep_geometry, dissolve=dissolve)
    if found is None:
        return pd.DataFrame({c: [] for c in columns}).astype({"area_sqft": "float64"})
    out = pd.DataFrame(
        {
            "subject": found.subject,
            "key": pd.Series(found.key, dtype=object),
            "area_sqft": found.area_sqft,
        }
    )
    if keep_geometry:
        out["geometry"] = found.geometry
    return out.reset_index(drop=True)[columns]


def _unions(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return ``shapely.union(a, b)`` elementwise, by :func:`union_of_parts` where many parts."""
    many = shapely.get_num_geometries(a) + shapely.get_num_geometries(b) > MANY_PARTS
    out = np.empty(len(a), dtype=object)
    out[~many] = shapely.union(a[~many], b[~many])
    for i in np.flatnonzero(many).tolist():
        out[i] = union_of_parts([a[i], b[i]])
    return out


def overlay_pieces(
    subjects: gpd.GeoSeries,
    features: gpd.GeoDataFrame,
    key: str | None = None,
    *,
    keep_geometry: bool = False,
    dissolve: bool = True,
) -> Pieces | None:
    """Return :func:`area_by_key`'s rows as plain arrays, None when there are none.

    For a few subjects (one proposal's re-check) the frame costs more than the overlay.

    Raises
    ------
    ValueError
        If ``key`` is not a column of ``features`` or the CRSs differ.
    """
    if key is not None and key not in features.columns:
        raise ValueError(f"features have no column {key!r}")
    if (
        subjects.crs is not None
        and features.crs is not None
        and subjects.crs is not features.crs
        and subjects.crs != features.crs
    ):
        raise ValueError(f"subjects are in {subjects.crs}, features in {features.crs}")
    subject_geoms = np.asarray(subjects.to_numpy(), dtype=object)
    feature_geoms = np.asarray(features.geometry.to_numpy(), dtype=object)
    if len(subject_geoms) == 0 or len(feature_geoms) == 0:
        return None
    raw_keys = None if key is None else features[key].to_numpy(dtype=object)
    return overlay_arrays(
        subject_geoms,
        subjects.index.to_numpy(),
        feature_geoms,
        raw_keys,
        keep_geometry=keep_geometry,
        dissolve=dissolve,
    )


def overlay_arrays(
    subject_geoms: np.ndarray,
    labels: np.ndarray,
    feature_geoms: np.ndarray,
    raw_keys: np.ndarray | None,
    *,
    keep_geometry: bool,
    dissolve: bool,
) -> Pieces | None:
    """Return :func:`overlay_pieces` of geometry arrays (module docstring, steps 1 to 4).

    ``labels`` name the subjects; ``raw_keys`` are the features' keys (None: one group).
    """
    tree = shapely.STRtree(feature_geoms)
    subject_pos, feature_pos = tree.query(subject_geoms, predicate="intersects")
    # a fixed order (subject, then feature row) makes unions and sums independent of how
    # the tree was built, so a parcel gets the same figure in any batch chunk
    order = np.lexsort((feature_pos, subject_pos))
    subject_pos, feature_pos = subject_pos[order], feature_pos[order]
    if len(subject_pos) == 0:
        return None

    shapely.prepare(feature_geoms)
    pair_subjects = subject_geoms[subject_pos]
    pair_features = feature_geoms[feature_pos]
    inside = shapely.contains_properly(pair_features, pair_subjects)
    pieces = np.empty(len(subject_pos), dtype=object)
    pieces[inside] = pair_subjects[inside]
    crossing = ~inside
    if crossing.any():
        pieces[crossing] = shapely.intersection(
            pair_subjects[crossing],
            clip_to_subjects(pair_features[crossing], pair_subjects[crossing]),
        )
    areas = shapely.area(pieces)

    if raw_keys is None:
        keys: np.ndarray = np.full(len(feature_pos), None, dtype=object)
    else:
        raw = raw_keys[feature_pos]
        keys = np.asarray(np.where(pd.isna(raw), None, raw), dtype=object)
    keep = areas > 0.0
    subject_pos, keys, pieces, areas = subject_pos[keep], keys[keep], pieces[keep], areas[keep]
    if len(subject_pos) == 0:
        return None

    # one group per (subject, key); a missing key is a group of its own
    key_codes, key_values = pd.factorize(pd.Series(keys, dtype=object), use_na_sentinel=False)
    group_codes = subject_pos.astype(np.int64) * (len(key_values) + 1) + key_codes
    groups, first, inverse, counts = np.unique(
        group_codes, return_index=True, return_inverse=True, return_counts=True
    )
    group_area = np.bincount(inverse, weights=areas, minlength=len(groups))
    group_geom = np.empty(len(groups), dtype=object)
    single = counts[inverse] == 1
    group_geom[inverse[single]] = pieces[single]
    multi = counts[inverse] > 1
    if (dissolve or keep_geometry) and multi.any():
        # union the pieces of every multi-piece group at once, one vectorised call per
        # round: round k adds the k-th piece of each group (no per-group Python loop)
        rows = np.flatnonzero(multi)
        rows = rows[np.argsort(inverse[rows], kind="stable")]
        groups_of = inverse[rows]
        starts = np.r_[0, np.flatnonzero(np.diff(groups_of)) + 1]
        rank = np.arange(len(rows)) - np.repeat(starts, np.diff(np.r_[starts, len(rows)]))
        for k in range(int(rank.max()) + 1):
            at = rows[rank == k]
            where = inverse[at]
            if k == 0:
                group_geom[where] = pieces[at]
            else:
                group_geom[where] = _unions(group_geom[where], pieces[at])
        if dissolve:
            merged_groups = np.unique(groups_of)
            group_area[merged_groups] = shapely.area(group_geom[merged_groups])

    cleaned = None
    if keep_geometry:
        # most pieces are already polygons; only collections and the like need cleaning
        odd = ~np.isin(shapely.get_type_id(group_geom), list(_POLYGONAL))
        cleaned = group_geom.copy()
        cleaned[odd] = [polygonal_part(g) for g in group_geom[odd]]
    # np.unique sorted the groups by subject position, then key code
    return Pieces(
        subject=labels[subject_pos[first]],
        key=keys[first],
        area_sqft=group_area.astype("float64"),
        geometry=cleaned,
    )
