"""Sub-area figures by area alone, for cover levels of many small parts.

:func:`~gis_sw.analysis.runoff.cover.split_cover` cuts a drainage area into pieces, each
level keeping what the levels above left.  After a level of 100,000 small polygons (a
disturbance of many lots) the ground left is a polygon with tens of thousands of holes, and
every overlay with it takes seconds.  The sub-area table only needs areas, and those follow
from unions alone: with ``U_k`` the union of the first ``k`` levels (inside the area), the
piece of level ``k`` is ``U_k - U_(k-1)`` and ``U_(k-1)`` lies inside ``U_k``, so for a soil
group ``G``

    area(piece_k & G) = area(U_k & G) - area(U_(k-1) & G)

and the ground no level covers (the default cover) is ``area(A & G) - area(U_last & G)``.
A union's parts are disjoint polygons, so its area inside a group is summed part by part
(parts wholly inside counted whole, only those crossing the group's edge intersected).  No
polygon with holes is built.  The figures equal the overlay path's
(:func:`~gis_sw.analysis.runoff.cover.subarea_columns` of the pieces) to float noise;
``tests/test_perf14_areas.py`` checks them to 0.01 sq ft.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import shapely

from gis_sw.analysis.runoff.cover import (
    CoverLevel,
    Layer,
    area_inside,
    many_small_parts,
    polygon_parts,
    sums_to_columns,
    whole_groups,
)
from gis_sw.analysis.runoff.params import HydrologyParams

__all__ = ["has_many_small_parts", "level_area_columns"]

_MIN_AREA_SQFT = 1e-6
"""The overlay path's floor for a sub-area (:mod:`gis_sw.analysis.runoff.cover`)."""


def has_many_small_parts(geometry: shapely.Geometry) -> bool:
    """Tell whether a level is of more than ``MANY_PARTS`` polygons of under 64 vertices."""
    return many_small_parts(geometry)


@dataclass(frozen=True, slots=True)
class _Figures:
    """Areas of one union: in all, inside each soil group, inside any group."""

    total: float
    by_letter: Mapping[str, float]
    every: float

    def minus(self, other: _Figures) -> _Figures:
        """Return the figures of ``self`` less those of ``other`` (a union inside it)."""
        return _Figures(
            self.total - other.total,
            {k: v - other.by_letter[k] for k, v in self.by_letter.items()},
            self.every - other.every,
        )


def _figures(
    parts: np.ndarray, whole: Mapping[str, shapely.Geometry], every: shapely.Geometry | None
) -> _Figures:
    """Figures of a union given by its disjoint polygon ``parts``."""
    total = float(shapely.area(parts).sum())
    by_letter = {k: area_inside(parts, g) for k, g in whole.items()}
    return _Figures(total, by_letter, area_inside(parts, every) if every is not None else 0.0)


def _add(
    sums: dict[tuple[str, str, str | None], float], source: str, cover: str, piece: _Figures
) -> None:
    """Add one piece's sub-areas to ``sums`` in the overlay path's order and floors."""
    if piece.total <= _MIN_AREA_SQFT:
        return
    for letter in sorted(piece.by_letter):
        if piece.by_letter[letter] > _MIN_AREA_SQFT:
            key: tuple[str, str, str | None] = (source, cover, letter)
            sums[key] = sums.get(key, 0.0) + piece.by_letter[letter]
    left = piece.total - piece.every
    if left > _MIN_AREA_SQFT:
        none_key: tuple[str, str, str | None] = (source, cover, None)
        sums[none_key] = sums.get(none_key, 0.0) + left


def level_area_columns(
    area: shapely.Geometry,
    levels: Sequence[CoverLevel],
    default: str,
    *,
    soils: Layer | None,
    groups: Mapping[str, shapely.Geometry],
    params: HydrologyParams,
) -> dict[str, np.ndarray]:
    """Return ``subarea_columns(split_cover(area, levels, default), ...)`` by areas alone.

    ``levels`` lie inside ``area`` (as :func:`~gis_sw.analysis.runoff.cover.cover_levels_existing`
    and :func:`~gis_sw.analysis.runoff.cover.cover_levels_new` give them); ``groups`` is
    :func:`~gis_sw.analysis.runoff.cover.soil_groups` of ``soils`` inside ``area``.
    """
    whole = whole_groups(soils, area, params) if groups else {}
    whole = {k: whole[k] for k in groups if k in whole}
    every: shapely.Geometry | None = None
    if whole:
        every = shapely.disjoint_subset_union_all(list(whole.values()))
        shapely.prepare(every)
    sums: dict[tuple[str, str, str | None], float] = {}
    parts = np.empty(0, dtype=object)
    before = _Figures(0.0, dict.fromkeys(whole, 0.0), 0.0)
    for level in levels:
        if shapely.is_empty(level.geometry):
            continue
        joined = shapely.disjoint_subset_union_all([*parts, *polygon_parts(level.geometry)])
        parts = polygon_parts(joined)
        after = _figures(parts, whole, every)
        _add(sums, level.source, level.cover, after.minus(before))
        before = after
    every_clipped = shapely.disjoint_subset_union_all(list(groups.values())) if groups else None
    ground = _Figures(
        float(shapely.area(area)),
        {k: float(shapely.area(groups[k])) for k in whole},
        float(shapely.area(every_clipped)) if every_clipped is not None else 0.0,
    )
    _add(sums, "default pervious cover", default, ground.minus(before))
    return sums_to_columns(sums, params)
