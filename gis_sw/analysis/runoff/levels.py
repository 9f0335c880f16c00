"""Cover levels and soil groups of thousands of drainage areas at once.

:func:`~gis_sw.analysis.runoff.site.cover_levels` and
:func:`~gis_sw.analysis.runoff.cover.soil_groups` work on one drainage area: a spatial query
of each layer, a clip and a union per key, a dozen GEOS calls whose Python overhead, for
20,000 proposals, costs more than the overlays.  Here each step is one vectorised call over
every drainage area: one query of each layer with all the areas (the tree gives each area's
candidates in the order a query of that area alone gives), one clip of every candidate
(only those crossing the area's edge intersected), and one union per group size
(``shapely.disjoint_subset_union_all`` along an axis, the same GEOS call on the same
collection as one group alone).  Soil values that share a group letter are merged in the
one-area order, ``union_all([previous or empty, union])``, rank by rank.  The levels are
the same geometries as the one-area functions give, but for new impervious surfaces, whose
candidates come in the order of a tree of all proposals' surfaces (the one-area path builds
a tree per proposal): their unions are the same polygons to float noise.
``tests/test_manyrun_bulk.py`` checks the figures against :func:`compute_drainage` to
0.01 sq ft.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.runoff.cover import (
    MANY_PARTS,
    CoverLevel,
    Layer,
    LayerArrays,
    _texts,
    many_small_parts,
)
from gis_sw.analysis.runoff.params import HydrologyParams
from gis_sw.analysis.runoff.tr55 import soil_group

__all__ = ["Prepared", "many_small_flags", "prepare_all", "same_areas"]

_COLLECTION = 7
"""shapely's type id of a GeometryCollection."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """One drainage area's pre- and post-development levels, soil groups and problems."""

    pre: list[CoverLevel]
    post: list[CoverLevel]
    groups: dict[str, shapely.Geometry]
    problems: list[str]


@dataclass(frozen=True, slots=True)
class _Clipped:
    """A layer's candidates of every area: the area's index, the clip, the key text."""

    which: np.ndarray
    idx: np.ndarray
    geoms: np.ndarray
    keys: np.ndarray | None


def _arrays(layer: Layer, column: str | None) -> tuple[np.ndarray, np.ndarray | None]:
    """Return a layer's geometries and its ``column`` texts (``""`` where missing)."""
    if isinstance(layer, LayerArrays):
        return layer.geoms, layer.texts[column] if column is not None else None
    geoms = np.asarray(layer.geometry.values)
    if column is None:
        return geoms, None
    return geoms, _texts(layer[column].to_numpy(dtype=object))


def _clip_all(
    layer: Layer | None,
    areas: np.ndarray,
    column: str | None = None,
    owner: tuple[np.ndarray, np.ndarray] | None = None,
) -> _Clipped | None:
    """Return every candidate of every area clipped to it (None for no layer or no feature).

    ``areas`` are prepared; a candidate wholly inside its area is its own clip, as in
    :func:`~gis_sw.analysis.runoff.cover.clip`.  ``owner``: each feature's owner and each
    area's, when an area takes only its own owner's features.
    """
    if layer is None or len(layer) == 0 or len(areas) == 0:
        return None
    geoms, texts = _arrays(layer, column)
    which, idx = layer.sindex.query(areas, predicate="intersects")
    if owner is not None:
        own = owner[0][idx] == owner[1][which]
        which, idx = which[own], idx[own]
    cand = geoms[idx]
    mine = areas[which]
    out = cand.copy()
    edge = ~shapely.contains_properly(mine, cand)
    out[edge] = shapely.intersection(cand[edge], mine[edge])
    return _Clipped(which, idx, out, None if texts is None else texts[idx])


def union_groups(geoms: np.ndarray, codes: np.ndarray, n: int) -> np.ndarray:
    """Return ``disjoint_subset_union_all`` of each group of ``geoms`` (None for no member).

    ``codes`` give each geometry's group in ``range(n)``; members keep their order.  One
    call per group size, along an axis: the same collection, so the same polygon, as a
    call per group.
    """
    out = np.full(n, None, dtype=object)
    if len(codes) == 0:
        return out
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n)
    starts = np.cumsum(sizes) - sizes
    for size in np.unique(sizes[sizes > 0]).tolist():
        groups = np.flatnonzero(sizes == size)
        members = order[starts[groups][:, None] + np.arange(size)]
        out[groups] = shapely.disjoint_subset_union_all(geoms[members], axis=1)
    return out


def _keyed_unions(clipped: _Clipped) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return the groups by (area, key) of clipped candidates: area, key, first, union.

    Groups are sorted by area, then by their first candidate (the one-area dict's order).
    """
    assert clipped.keys is not None
    keys, key_codes = np.unique(clipped.keys.astype(str), return_inverse=True)
    combined = clipped.which.astype("int64") * len(keys) + key_codes
    uniq, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    unions = union_groups(clipped.geoms, inverse.ravel(), len(uniq))
    area = uniq // len(keys)
    order = np.lexsort((first, area))
    return area[order], keys[uniq % len(keys)][order], first[order], unions[order]


def _clip_unions(layer: Layer | None, areas: np.ndarray) -> np.ndarray:
    """Return :func:`~gis_sw.analysis.runoff.cover.clip_union` of every area."""
    out = np.full(len(areas), None, dtype=object)
    clipped = _clip_all(layer, areas)
    if clipped is not None:
        out = union_groups(clipped.geoms, clipped.which, len(areas))
    empty = np.array([o is None for o in out.tolist()], dtype=bool)
    out[empty] = [shapely.Polygon() for _ in range(int(empty.sum()))]
    return out


def _soil_groups(
    soils: Layer | None, areas: np.ndarray, params: HydrologyParams
) -> list[dict[str, shapely.Geometry]]:
    """Return :func:`~gis_sw.analysis.runoff.cover.soil_groups` of every area."""
    out: list[dict[str, shapely.Geometry]] = [{} for _ in range(len(areas))]
    clipped = _clip_all(soils, areas, "hsg")
    if clipped is None or len(clipped.which) == 0:
        return out
    area, values, _, unions = _keyed_unions(clipped)
    letter_of = {v: soil_group(v, dual=params.dual_hsg) for v in set(values.tolist())}
    letters = np.array([letter_of[v] or "" for v in values.tolist()], dtype=object)
    keep = letters != ""
    area, letters, unions = area[keep], letters[keep].astype(str), unions[keep]
    if len(area) == 0:
        return out
    # the groups of one area and letter, in the area's value order: merged rank by rank
    tags = pd.factorize(pd.Series(area.astype(str)) + "|" + letters)[0]
    rank = pd.Series(tags).groupby(tags).cumcount().to_numpy()
    merged = np.empty(int(tags.max()) + 1, dtype=object)
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        before = merged[tags[sel]]
        if r == 0:  # the one-area function unites the first with an empty polygon too
            before = np.array([shapely.Polygon() for _ in range(int(sel.sum()))], dtype=object)
        merged[tags[sel]] = shapely.union_all(np.stack([before, unions[sel]], axis=1), axis=1)
    first = rank == 0  # a letter's place in the dict: its first value's
    for i, letter, tag in zip(
        area[first].tolist(), letters[first].tolist(), tags[first].tolist(), strict=True
    ):
        out[i][letter] = merged[tag]
    return out


def _existing(
    layers: tuple[Layer | None, Layer | None, Layer | None],
    areas: np.ndarray,
    params: HydrologyParams,
) -> tuple[list[list[CoverLevel]], list[list[str]]]:
    """Return :func:`~gis_sw.analysis.runoff.cover.cover_levels_existing` of every area."""
    buildings, pavement, land_cover = layers
    imp = params.cover_key("roof") or "impervious"
    built, paved = _clip_unions(buildings, areas), _clip_unions(pavement, areas)
    levels = [
        [CoverLevel("existing building", imp, b), CoverLevel("existing pavement", imp, p)]
        for b, p in zip(built.tolist(), paved.tolist(), strict=True)
    ]
    problems: list[list[str]] = [[] for _ in range(len(areas))]
    clipped = _clip_all(land_cover, areas, "cover")
    if clipped is None or len(clipped.which) == 0:
        return levels, problems
    area, names, _, unions = _keyed_unions(clipped)
    order = np.lexsort((names, area))  # the one-area function sorts by name
    keys = {n: params.cover_key(n) for n in set(names.tolist())}
    known = ", ".join(sorted(params.covers))
    for i, name, geom in zip(
        area[order].tolist(), names[order].tolist(), unions[order].tolist(), strict=True
    ):
        key = keys[name]
        if key is None:
            problems[i].append(
                f"land_cover value {name!r} is not a cover of the ruleset "
                f"({known}); counted as {params.default_cover}"
            )
            key = params.default_cover
        levels[i].append(CoverLevel(f"land cover {name}", key, geom))
    return levels, problems


def _new(
    impervious: Sequence[gpd.GeoDataFrame | None], areas: np.ndarray, params: HydrologyParams
) -> list[list[CoverLevel]]:
    """Return the new impervious levels of :func:`cover_levels_new` for every area."""
    out: list[list[CoverLevel]] = [[] for _ in range(len(areas))]
    frames: dict[int, int] = {}
    parts: list[gpd.GeoDataFrame] = []
    owner = np.full(len(areas), -1, dtype="int64")
    for i, frame in enumerate(impervious):
        if frame is not None and len(frame):
            owner[i] = frames.setdefault(id(frame), len(frames))
            if owner[i] == len(parts):
                parts.append(frame)
    if not parts:
        return out
    geoms = np.concatenate([np.asarray(f.geometry.values) for f in parts])
    surface = np.concatenate(
        [
            _texts(f["surface"].astype("object").where(f["surface"].notna(), "default").to_numpy())
            for f in parts
        ]
    )
    row_owner = np.repeat(np.arange(len(parts)), [len(f) for f in parts])
    layer = LayerArrays(geoms, shapely.STRtree(geoms), {"surface": surface})
    clipped = _clip_all(layer, areas, "surface", owner=(row_owner, owner))
    if clipped is None or len(clipped.which) == 0:
        return out
    area, names, _, unions = _keyed_unions(clipped)
    order = np.lexsort((names, area))
    default = params.surface_cover.get("default", "impervious")
    for i, name, geom in zip(
        area[order].tolist(), names[order].tolist(), unions[order].tolist(), strict=True
    ):
        key = params.surface_cover.get(name.lower()) or default
        out[i].append(CoverLevel(f"new {name}", key, geom))
    return out


def same_areas(areas: Sequence[shapely.Geometry] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return each area's number among the distinct areas, and each distinct one's first.

    Areas are the same when their WKB is: the same polygon, so the same figures (20,000
    small proposals on a few hundred lots share a few thousand drainage areas).
    """
    arr = np.empty(len(areas), dtype=object)
    arr[:] = list(areas)
    if len(arr) == 0:
        return np.empty(0, dtype="int64"), np.empty(0, dtype="int64")
    codes, _ = pd.factorize(pd.Series(shapely.to_wkb(arr), dtype=object))
    _, first = np.unique(codes, return_index=True)
    return codes.astype("int64"), first


def prepare_all(
    areas: Sequence[shapely.Geometry],
    impervious: Sequence[gpd.GeoDataFrame | None],
    disturbances: Sequence[shapely.Geometry],
    *,
    layers: tuple[Layer | None, Layer | None, Layer | None],
    soils: Layer | None,
    params: HydrologyParams,
) -> list[Prepared]:
    """Return the levels, soil groups and problems of every drainage area.

    The same as :func:`~gis_sw.analysis.runoff.site.cover_levels` and
    :func:`~gis_sw.analysis.runoff.cover.soil_groups` of each area alone: pre-development
    the existing buildings, pavement and land cover; post-development the new impervious
    surfaces, the existing buildings and pavement, the disturbed ground, then land cover.
    The existing levels and soil groups are found once per distinct area
    (:func:`same_areas`), shared by the areas that are the same polygon.
    """
    arr = np.empty(len(areas), dtype=object)
    arr[:] = list(areas)
    shapely.prepare(arr)
    codes, first = same_areas(arr)
    existing, problems = _existing(layers, arr[first], params)
    groups = _soil_groups(soils, arr[first], params)
    new = _new(impervious, arr, params)
    dist = np.empty(len(areas), dtype=object)
    dist[:] = list(disturbances)
    disturbed = shapely.intersection(dist, arr) if len(arr) else dist
    label, cover = "disturbed, not impervious", params.disturbed_cover
    out = []
    for k, nw, d in zip(codes.tolist(), new, disturbed.tolist(), strict=True):
        ex = existing[k]
        post = [*nw, *ex[:2], CoverLevel(label, cover, d), *ex[2:]]
        out.append(Prepared(ex, post, groups[k], list(problems[k])))
    return out


def many_small_flags(geoms: Sequence[shapely.Geometry]) -> np.ndarray:
    """Return :func:`~gis_sw.analysis.runoff.cover.many_small_parts` of every geometry.

    Only collections and geometries of more than ``MANY_PARTS`` parts are looked at one by
    one (the others have few parts).
    """
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = list(geoms)
    out = np.zeros(len(arr), dtype=bool)
    if len(arr) == 0:
        return out
    look = (shapely.get_type_id(arr) == _COLLECTION) | (
        shapely.get_num_geometries(arr) > MANY_PARTS
    )
    for i in np.flatnonzero(look).tolist():
        out[i] = many_small_parts(arr[i])
    return out
