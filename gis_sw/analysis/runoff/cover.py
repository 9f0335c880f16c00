"""Sub-areas of a drainage area: cover x hydrologic soil group, with their areas.

Cover is decided by priority, each level taking only what the levels above left:
pre-development: existing buildings, existing pavement, ``land_cover`` polygons, then the
ruleset's default pervious cover; post-development: the proposal's new impervious
surfaces first, then the same existing layers, with the disturbed ground that is not new
impervious turned to the ruleset's ``disturbed_cover`` (lawn) before land cover applies.
Each cover piece is then split by the ``soils`` layer's hydrologic soil group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.runoff.params import HydrologyParams
from gis_sw.analysis.runoff.tr55 import soil_group

SUBAREA_COLUMNS = ("source", "cover", "hsg", "area_sqft", "cn", "c", "impervious")

MIN_AREA_SQFT = 1e-6
"""Pieces and sub-areas of at most this many sq ft (float noise of an overlay) are dropped."""
_MIN_AREA_SQFT = MIN_AREA_SQFT
_POLYGON = 3
"""shapely's type id of a Polygon."""
_COLLECTION = 7
"""shapely's type id of a GeometryCollection."""
MANY_PARTS = 64
"""A cover piece of more parts than this, small ones (under 64 vertices on average), has its
soil-group areas summed part by part (parts wholly inside a group counted whole; only those
crossing its edge intersected), instead of one overlay of the whole multipolygon with each
group (minutes for 100,000 small polygons)."""


def polygon_parts(geometry: shapely.Geometry) -> np.ndarray:
    """Return the polygons of a geometry (collections opened; lines and points have no area)."""
    parts = shapely.get_parts(shapely.get_parts(geometry))
    return parts[shapely.get_type_id(parts) == _POLYGON]


def area_inside(parts: np.ndarray, group: shapely.Geometry) -> float:
    """Return the area of disjoint polygons ``parts`` inside a prepared polygon ``group``."""
    inside = shapely.contains_properly(group, parts)
    total = float(shapely.area(parts[inside]).sum())
    edge = ~inside & shapely.intersects(group, parts)
    if edge.any():  # one overlay of every crossing part: each alone would scan the group
        crossing = shapely.multipolygons(parts[edge])
        total += float(shapely.area(shapely.intersection(crossing, group)))
    return total


def whole_groups(
    soils: Layer | None, area: shapely.Geometry, params: HydrologyParams
) -> dict[str, shapely.Geometry]:
    """Return the union by soil group letter of the soil polygons meeting ``area`` (unclipped)."""
    if soils is None or len(soils) == 0:
        return {}
    geoms, values = _candidates(soils, area, "hsg")
    by_letter: dict[str, list[shapely.Geometry]] = {}
    for value, geom in zip([] if values is None else values.tolist(), geoms, strict=True):
        letter = soil_group(value, dual=params.dual_hsg)
        if letter is not None:
            by_letter.setdefault(letter, []).append(geom)
    out: dict[str, shapely.Geometry] = {
        k: shapely.disjoint_subset_union_all(v) for k, v in by_letter.items()
    }
    for geom in out.values():
        shapely.prepare(geom)
    return out


def _add_part_areas(
    sums: dict[tuple[str, str, str | None], float],
    piece: CoverLevel,
    parts: np.ndarray,
    groups: dict[str, shapely.Geometry],
    every_group: shapely.Geometry,
) -> None:
    """:func:`subareas`' sums for a piece of many parts (same figures, part by part)."""
    for letter in sorted(groups):
        part_area = area_inside(parts, groups[letter])
        if part_area > _MIN_AREA_SQFT:
            key: tuple[str, str, str | None] = (piece.source, piece.cover, letter)
            sums[key] = sums.get(key, 0.0) + part_area
    left_area = float(shapely.area(piece.geometry)) - area_inside(parts, every_group)
    if left_area > _MIN_AREA_SQFT:
        none_key: tuple[str, str, str | None] = (piece.source, piece.cover, None)
        sums[none_key] = sums.get(none_key, 0.0) + left_area


@dataclass(frozen=True, slots=True)
class CoverLevel:
    """One priority level: where it lies, which cover it gives, and a label for the sheet."""

    source: str
    cover: str
    geometry: shapely.Geometry


@dataclass(frozen=True, slots=True)
class LayerArrays:
    """A layer's geometries, spatial index and text columns, read out of its frame once.

    Thousands of drainage areas query the same layers; reading ``frame.geometry`` and a
    column of a GeoDataFrame costs more than the query itself.
    """

    geoms: np.ndarray
    sindex: Any
    texts: Mapping[str, np.ndarray]

    @classmethod
    def of(cls, frame: gpd.GeoDataFrame | None, *columns: str) -> LayerArrays | None:
        """Return the arrays of ``frame`` (None for no frame) with ``columns`` as text."""
        if frame is None:
            return None
        texts = {c: _texts(frame[c].to_numpy(dtype=object)) for c in columns if c in frame}
        return cls(np.asarray(frame.geometry.values), frame.sindex, texts)

    def __len__(self) -> int:
        """Return the number of features."""
        return len(self.geoms)


Layer: TypeAlias = gpd.GeoDataFrame | LayerArrays
"""A layer as its frame or as its :class:`LayerArrays`."""


def _texts(values: np.ndarray) -> np.ndarray:
    """Return each value as text, ``""`` where missing."""
    return np.array(["" if pd.isna(v) else str(v) for v in values], dtype=object)


def _candidates(
    layer: Layer, area: shapely.Geometry, column: str | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the geometries of ``layer`` meeting ``area`` and their ``column`` texts."""
    idx = layer.sindex.query(area, predicate="intersects")
    if isinstance(layer, LayerArrays):
        keys = layer.texts[column][idx] if column is not None else None
        return layer.geoms[idx], keys
    geoms = np.asarray(layer.geometry.values[idx])
    if column is None:
        return geoms, None
    return geoms, _texts(layer[column].to_numpy(dtype=object)[idx])


def clip_union(frame: Layer | None, area: shapely.Geometry) -> shapely.Geometry:
    """Return the union of a layer's polygons inside ``area`` (an empty polygon when none)."""
    if frame is None or len(frame) == 0:
        return shapely.Polygon()
    geoms, _ = _candidates(frame, area)
    if len(geoms) == 0:
        return shapely.Polygon()
    return shapely.disjoint_subset_union_all(clip(geoms, area))


def clip(geoms: np.ndarray, area: shapely.Geometry) -> np.ndarray:
    """Return ``shapely.intersection(geoms, area)``, overlaying only what crosses its edge.

    A polygon wholly inside the area is its own clip (a prepared test costs a fraction of
    an overlay, which thousands of drainage areas feel); the rest are intersected.
    """
    shapely.prepare(area)
    out = np.asarray(geoms, dtype=object).copy()
    edge = ~shapely.contains_properly(area, out)
    out[edge] = shapely.intersection(out[edge], area)
    return out


def grouped_unions(
    frame: Layer | None, column: str, area: shapely.Geometry
) -> dict[str, shapely.Geometry]:
    """Return the union, inside ``area``, of a layer's polygons grouped by ``column``'s text."""
    if frame is None or len(frame) == 0:
        return {}
    geoms, keys = _candidates(frame, area, column)
    if len(geoms) == 0 or keys is None:
        return {}
    parts = clip(geoms, area)
    out: dict[str, list[shapely.Geometry]] = {}
    for key, geom in zip(keys.tolist(), parts, strict=True):
        out.setdefault(key, []).append(geom)
    return {k: shapely.disjoint_subset_union_all(v) for k, v in out.items()}


def cover_levels_existing(
    area: shapely.Geometry,
    *,
    buildings: Layer | None,
    pavement: Layer | None,
    land_cover: Layer | None,
    params: HydrologyParams,
    problems: list[str],
) -> list[CoverLevel]:
    """Levels of existing cover, highest priority first (default cover not included)."""
    imp = params.cover_key("roof") or "impervious"
    levels = [
        CoverLevel("existing building", imp, clip_union(buildings, area)),
        CoverLevel("existing pavement", imp, clip_union(pavement, area)),
    ]
    for name, geom in sorted(grouped_unions(land_cover, "cover", area).items()):
        key = params.cover_key(name)
        if key is None:
            problems.append(
                f"land_cover value {name!r} is not a cover of the ruleset "
                f"({', '.join(sorted(params.covers))}); counted as {params.default_cover}"
            )
            key = params.default_cover
        levels.append(CoverLevel(f"land cover {name}", key, geom))
    return levels


def cover_levels_new(
    area: shapely.Geometry,
    *,
    impervious: gpd.GeoDataFrame | None,
    disturbance: shapely.Geometry,
    params: HydrologyParams,
) -> tuple[list[CoverLevel], CoverLevel]:
    """Return the proposal's new impervious levels, and the disturbed-ground level."""
    levels: list[CoverLevel] = []
    if impervious is not None and len(impervious):
        frame = impervious.assign(
            surface=impervious["surface"]
            .astype("object")
            .where(impervious["surface"].notna(), "default")
        )
        for surface, geom in sorted(grouped_unions(frame, "surface", area).items()):
            key = params.surface_cover.get(surface.lower()) or params.surface_cover.get(
                "default", "impervious"
            )
            levels.append(CoverLevel(f"new {surface}", key, geom))
    disturbed = CoverLevel(
        "disturbed, not impervious",
        params.disturbed_cover,
        shapely.intersection(disturbance, area),
    )
    return levels, disturbed


def split_cover(area: shapely.Geometry, levels: list[CoverLevel], default: str) -> list[CoverLevel]:
    """Pieces of ``area`` by priority: each level keeps what the levels above left."""
    remaining = area
    pieces: list[CoverLevel] = []
    for level in levels:
        if shapely.is_empty(level.geometry) or shapely.is_empty(remaining):
            continue
        piece = shapely.intersection(level.geometry, remaining)
        if shapely.area(piece) > _MIN_AREA_SQFT:
            pieces.append(CoverLevel(level.source, level.cover, piece))
        remaining = shapely.difference(remaining, level.geometry)
    if not shapely.is_empty(remaining) and shapely.area(remaining) > _MIN_AREA_SQFT:
        pieces.append(CoverLevel("default pervious cover", default, remaining))
    return pieces


def soil_groups(
    soils: Layer | None, area: shapely.Geometry, params: HydrologyParams
) -> dict[str, shapely.Geometry]:
    """Return the soils inside ``area`` united by hydrologic soil group letter (A-D only)."""
    groups: dict[str, shapely.Geometry] = {}
    for value, geom in grouped_unions(soils, "hsg", area).items():
        letter = soil_group(value, dual=params.dual_hsg)
        if letter is not None:
            groups[letter] = shapely.union_all([groups.get(letter, shapely.Polygon()), geom])
    return groups


def subarea_frame(columns: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """Return the table of :func:`subarea_columns`' arrays (``hsg`` as objects: None, not NaN)."""
    data: dict[str, Any] = dict(columns)
    data["hsg"] = pd.Series(columns["hsg"], dtype="object")
    return pd.DataFrame(data, columns=list(SUBAREA_COLUMNS))


def subareas(
    pieces: list[CoverLevel],
    soils: Layer | None,
    area: shapely.Geometry,
    params: HydrologyParams,
    *,
    groups: dict[str, shapely.Geometry] | None = None,
) -> pd.DataFrame:
    """Cover pieces split by soil group and summed: columns :data:`SUBAREA_COLUMNS`.

    ``hsg`` is ``None`` (and ``cn`` NaN) for ground no soil polygon with a group A-D covers.
    ``groups`` is :func:`soil_groups` of ``soils`` and ``area`` when the caller has it (the
    pre- and post-development tables of one drainage area share it).
    """
    return subarea_frame(subarea_columns(pieces, soils, area, params, groups=groups))


def many_small_parts(geometry: shapely.Geometry) -> bool:
    """Tell whether a geometry is of more than ``MANY_PARTS`` polygons of under 64 vertices."""
    if shapely.get_type_id(geometry) != _COLLECTION and (
        shapely.get_num_geometries(geometry) <= MANY_PARTS
    ):
        return False
    parts = polygon_parts(geometry)
    return len(parts) > MANY_PARTS and float(shapely.get_num_coordinates(parts).mean()) < 64


def _overlay_areas(
    geometries: list[shapely.Geometry], groups: Mapping[str, shapely.Geometry]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Return each geometry's area inside each group, and outside every group.

    One overlay call per group for all the pieces; the ground outside is what is left after
    taking each group away in turn (letters in order).
    """
    pieces = np.asarray(geometries, dtype=object)
    inside = {
        letter: shapely.area(shapely.intersection(pieces, groups[letter]))
        for letter in sorted(groups)
    }
    left = pieces
    for letter in sorted(groups):
        left = shapely.difference(left, groups[letter])
    return inside, shapely.area(left)


def subarea_columns(
    pieces: list[CoverLevel],
    soils: Layer | None,
    area: shapely.Geometry,
    params: HydrologyParams,
    *,
    groups: dict[str, shapely.Geometry] | None = None,
) -> dict[str, np.ndarray]:
    """Return :func:`subareas` as one array per column.

    No table: a table costs ~0.4 ms to build, which thousands of drainage areas feel.
    """
    if groups is None:
        groups = soil_groups(soils, area, params)
    sums: dict[tuple[str, str, str | None], float] = {}
    whole: dict[str, shapely.Geometry] = {}  # soil groups not clipped to the area
    every_group: shapely.Geometry | None = None
    by_part = [bool(groups) and many_small_parts(piece.geometry) for piece in pieces]
    letters = sorted(groups)
    inside, left_areas = _overlay_areas(
        [p.geometry for p, part in zip(pieces, by_part, strict=True) if not part], groups
    )
    k = 0
    for piece, part in zip(pieces, by_part, strict=True):
        if part:  # 100,000 small polygons: area by part
            if every_group is None:
                # pieces lie inside the area, so the soil polygons need no clipping (whose
                # edge, the area's, would make every test against them slow)
                whole = whole_groups(soils, area, params)
                every_group = shapely.disjoint_subset_union_all(list(whole.values()))
                shapely.prepare(every_group)
            _add_part_areas(sums, piece, polygon_parts(piece.geometry), whole, every_group)
            continue
        add_piece_sums(
            sums, piece, [(t, float(inside[t][k])) for t in letters], float(left_areas[k])
        )
        k += 1
    return sums_to_columns(sums, params)


def add_piece_sums(
    sums: dict[tuple[str, str, str | None], float],
    piece: CoverLevel,
    by_letter: Sequence[tuple[str, float]],
    left_area: float,
) -> None:
    """Add one piece's area in each soil group, and outside every group, to ``sums``.

    Areas of at most ``_MIN_AREA_SQFT`` (float noise of an overlay) are left out.
    """
    for letter, part_area in by_letter:
        if part_area > _MIN_AREA_SQFT:
            key: tuple[str, str, str | None] = (piece.source, piece.cover, letter)
            sums[key] = sums.get(key, 0.0) + part_area
    if left_area > _MIN_AREA_SQFT:
        none_key: tuple[str, str, str | None] = (piece.source, piece.cover, None)
        sums[none_key] = sums.get(none_key, 0.0) + left_area


def sums_to_columns(
    sums: Mapping[tuple[str, str, str | None], float], params: HydrologyParams
) -> dict[str, np.ndarray]:
    """Return sub-area sums by (source, cover, soil group) as :data:`SUBAREA_COLUMNS` arrays."""
    covers = params.covers
    keys = list(sums)
    return {
        "source": np.array([k[0] for k in keys], dtype=object),
        "cover": np.array([k[1] for k in keys], dtype=object),
        "hsg": np.array([k[2] for k in keys], dtype=object),  # None, not NaN
        "area_sqft": np.array(list(sums.values()), dtype="float64"),
        "cn": np.array(
            [covers[c].cn[h] if h is not None else np.nan for _, c, h in keys],
            dtype="float64",
        ),
        "c": np.array([covers[c].c for _, c, _ in keys], dtype="float64"),
        "impervious": np.array([covers[c].impervious for _, c, _ in keys], dtype=bool),
    }


def soil_problems(table: Mapping[str, np.ndarray], area_sqft: float, problems: list[str]) -> float:
    """Add to ``problems`` what the soils leave undefined in sub-area columns; return unmapped.

    Ground no soil group A-D maps (over 0.5 sq ft), and ground two soil groups both map
    (the sub-areas adding up to more than the drainage area): either leaves the curve
    numbers of the drainage area undefined, so its runoff is ``review``.
    """
    unmapped = float(table["area_sqft"][pd.isna(table["hsg"])].sum())
    if unmapped > 0.5:
        problems.append(
            f"{unmapped:,.0f} sq ft of the drainage area has no soil group A-D in the "
            "soils layer; CN weighted over the mapped part only"
        )
    twice = float(table["area_sqft"].sum()) - area_sqft
    if twice > 0.5:
        problems.append(
            f"soils polygons of different soil groups overlap inside the drainage area "
            f"({twice:,.0f} sq ft mapped twice), so its curve numbers are not defined; "
            "fix the overlaps in the soils layer"
        )
    return unmapped
