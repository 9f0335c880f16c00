"""Condition A of SW103 by discharge: runoff from a disturbance and the impaired waters.

§ 183-7B(2)(a) asks whether runoff from the site *discharges to* an impaired water.  A
watershed listing (TMDL) is judged by overlap; a mapped impaired water body by where the
surface flow paths from the disturbance's DEM cells end (:class:`gis_sw.analysis.flow.FlowGrid`).
A path that leaves the DEM near where the water runs on beyond its edge, or leaves only the
window of the DEM file that was read (or of the town's DEM, :data:`FlowEnd.CUT`), is not
shown to miss: ``review``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.flow import FlowEnd, FlowGrid
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.raster import RasterLayer


class Reach(IntEnum):
    """What the layers show about a disturbance and the impaired waters."""

    REACHES = 1
    MISSES = 2
    UNKNOWN = 3


@dataclass(frozen=True, slots=True)
class Discharge:
    """One proposal's answer: reaches / misses / unknown, why (a clause), what shows it."""

    reach: Reach
    why: str
    geometry: Any


WATERSHED_LISTINGS = ("TMDL", "watershed")
"""Default ``[condition_a] watershed_listings`` when the ruleset has none."""

EDGE_REVIEW_FT = 500.0
"""Default ``[condition_a] edge_review_ft`` when the ruleset has none."""


def split_impaired(
    layer: gpd.GeoDataFrame, watershed_listings: tuple[str, ...]
) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """(TMDL watersheds, impaired water bodies): by the ``listing`` column's words.

    A feature whose ``listing`` contains one of ``watershed_listings`` (any case) is a
    watershed; every other feature, including one with no listing, is a water body (the
    stricter test: where the runoff goes).
    """
    if "listing" not in layer.columns or not watershed_listings:
        return layer.iloc[0:0], layer
    text = layer["listing"].map(lambda v: "" if v is None or pd.isna(v) else str(v).lower())
    words = [w.lower() for w in watershed_listings]
    is_shed = text.map(lambda t: any(w in t for w in words)).to_numpy(dtype=bool)
    return layer[is_shed], layer[~is_shed]


def _names(frame: gpd.GeoDataFrame, positions: np.ndarray) -> str:
    if "name" not in frame.columns or len(positions) == 0:
        return ""
    values = frame["name"].to_numpy(dtype=object)[np.unique(positions)]
    named = sorted({str(v) for v in values if v is not None and not pd.isna(v)})
    return f" ({', '.join(named[:3])}{', ...' if len(named) > 3 else ''})" if named else ""


def impaired_discharge(ctx: CheckContext, proposal_ids: list[str]) -> dict[str, Discharge]:
    """Condition A's reading of the layers for each proposal (attribute not considered).

    Overlap (or touching, at the distance tolerance) with any impaired_waters feature:
    reaches.  Otherwise a TMDL watershed is missed; an impaired water body needs the DEM
    (module docstring): every path into the water reaches it, every path leaving the DEM
    away from it misses it, anything else is unknown.
    """
    return ctx.memo("flow.discharge", lambda: _discharge(ctx, proposal_ids))


def _discharge(ctx: CheckContext, ids: list[str]) -> dict[str, Discharge]:
    unions = ctx.disturbance_union
    layer = ctx.layers.get("impaired_waters")
    if layer is None:
        return {
            p: Discharge(Reach.UNKNOWN, "the impaired_waters layer was not provided", unions[p])
            for p in ids
        }
    whole = layer  # the town's own frame (Town.local keeps it whole): the key of town_memo
    params = ctx.ruleset.section("condition_a")
    listings = tuple(str(v) for v in params.get("watershed_listings", WATERSHED_LISTINGS))
    layer, bodies, shed_mask, tree = ctx.town_memo(
        f"flow.impaired.{listings!r}", (whole,), lambda: _impaired(whole, listings)
    )
    tol = ctx.ruleset.devices.distance_tolerance_ft
    geoms = layer.geometry.to_numpy()
    subjects = unions.loc[ids].to_numpy()
    pos_s, pos_f = tree.query(subjects, predicate="dwithin", distance=tol)
    order = np.argsort(pos_s, kind="stable")
    pos_s, pos_f = pos_s[order], pos_f[order]
    bounds = np.searchsorted(pos_s, np.arange(len(ids) + 1))
    out: dict[str, Discharge] = {}
    remaining: list[str] = []
    for i, pid in enumerate(ids):
        hit = pos_f[bounds[i] : bounds[i + 1]]
        if len(hit) == 0:
            remaining.append(pid)
            continue
        union = subjects[i]
        # only the parts near the disturbance: a TMDL watershed is a town-sized polygon
        near = shapely.clip_by_rect(geoms[hit], *_grown_bounds(union, tol + 1.0))
        piece = shapely.intersection(union, shapely.union_all(shapely.make_valid(near)))
        kind = "TMDL watershed" if shed_mask[hit].all() else "impaired water"
        where = "lies in" if shapely.area(piece) > 0 else "touches"
        out[pid] = Discharge(
            Reach.REACHES,
            f"the disturbance {where} a mapped {kind}{_names(layer, hit)} (impaired_waters layer)",
            piece if shapely.area(piece) > 0 else union,
        )
    if not remaining:
        return out
    if len(bodies) == 0:
        for pid in remaining:
            out[pid] = Discharge(
                Reach.MISSES,
                "the disturbance lies in no mapped TMDL watershed and the impaired_waters layer "
                "maps no impaired water body whose runoff path would need following",
                unions[pid],
            )
        return out
    dem = ctx.layers.raster("dem")
    if dem is None:
        body_union = shapely.union_all(bodies.geometry.to_numpy())
        body_tree = shapely.STRtree(bodies.geometry.to_numpy())
        for pid in remaining:
            gap_ft = float(shapely.distance(unions[pid], body_union))
            named = _names(bodies, _nearest(body_tree, unions[pid]))
            out[pid] = Discharge(
                Reach.UNKNOWN,
                f"the nearest impaired water body{named} is {gap_ft:,.2f} ft away and no DEM "
                "was provided to follow where the runoff goes",
                unions[pid],
            )
        return out
    edge_ft = float(params.get("edge_review_ft", EDGE_REVIEW_FT))
    out.update(_traced(ctx, dem, bodies, remaining, edge_ft, source=whole))
    return out


def _impaired(
    layer: gpd.GeoDataFrame, listings: tuple[str, ...]
) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, np.ndarray, shapely.STRtree]:
    """Return the located features, the water bodies, which are watersheds, and an index.

    A feature without a location shows nothing here; the engine's coverage step makes the
    passes that rely on the layer review, naming it.
    """
    layer = layer[~unlocated(layer.geometry.to_numpy())]
    sheds, bodies = split_impaired(layer, listings)
    return layer, bodies, layer.index.isin(sheds.index), shapely.STRtree(layer.geometry.to_numpy())


def _grown_bounds(geometry: Any, by: float) -> tuple[float, float, float, float]:
    minx, miny, maxx, maxy = shapely.bounds(geometry)
    return (minx - by, miny - by, maxx + by, maxy + by)


def _prepared(dem: RasterLayer, geoms: np.ndarray) -> tuple[shapely.STRtree, FlowGrid]:
    """Return the water bodies' index and flow grid."""
    return shapely.STRtree(geoms), FlowGrid(dem, list(geoms))


class _Waters:
    """The water bodies' union and its part beyond the DEM, made when first asked.

    A town's impaired waters can be a brook of 175,000 vertices (their union 0.05 s): a
    check whose runoff reaches the water names neither.
    """

    def __init__(self, ctx: CheckContext, geoms: np.ndarray, depends: tuple[Any, ...], family: str):
        self._ctx, self._geoms, self._depends, self._family = ctx, geoms, depends, family

    def union(self) -> Any:
        """Return the union of the water bodies (kept across screenings of one town)."""
        return self._ctx.town_memo(
            f"{self._family}.body_union", self._depends, lambda: shapely.union_all(self._geoms)
        )

    def beyond(self, dem_box: Any) -> Any:
        """Return the part of the water bodies beyond ``dem_box`` (kept as the union)."""
        return self._ctx.town_memo(
            f"{self._family}.outside_water",
            self._depends,
            lambda: shapely.difference(self.union(), dem_box),
        )


def _gap(union: Any, waters: _Waters) -> str:
    """Return how far a disturbance lies from the water bodies, as a clause's words."""
    return f"{float(shapely.distance(union, waters.union())):,.2f} ft away"


def _nearest(tree: shapely.STRtree, geometry: Any) -> np.ndarray:
    """Position of the tree's geometry nearest to ``geometry`` (as a 1-element array)."""
    return np.atleast_1d(tree.nearest(geometry))


def _left_the_window(dem: RasterLayer, exits: np.ndarray, edge: np.ndarray) -> np.ndarray:
    """Return which edge exits leave only the window read, not the DEM file itself.

    An exit (the last cell inside the grid) more than one cell inside the whole file's
    extent has file cells beyond it that were not read: where its water goes is unknown.
    """
    cut = np.zeros(len(edge), dtype=bool)
    if dem.file_extent is None or not edge.any():
        return cut
    dx, dy = dem.cell_size
    minx, miny, maxx, maxy = dem.file_extent
    if maxx - minx <= 2 * dx or maxy - miny <= 2 * dy:
        return cut
    inner = shapely.box(minx + dx, miny + dy, maxx - dx, maxy - dy)
    cut[edge] = shapely.contains_xy(inner, exits[edge, 0], exits[edge, 1])
    return cut


def _traced(
    ctx: CheckContext,
    dem: RasterLayer,
    bodies: gpd.GeoDataFrame,
    ids: list[str],
    edge_ft: float,
    *,
    source: gpd.GeoDataFrame,
) -> dict[str, Discharge]:
    """Trace every remaining proposal's DEM cells at once and read each one's ends.

    The water bodies' index, grid, union and their part beyond the DEM derive from the town
    alone: they are kept across screenings of one town (``ctx.town_memo`` on the
    ``impaired_waters`` layer ``source``); the last two are made only when a message or
    an exit at the DEM's edge asks for them (:class:`_Waters`).
    """
    geoms = bodies.geometry.to_numpy()
    dem_box = shapely.box(*dem.bounds)
    listings = ctx.ruleset.section("condition_a").get("watershed_listings", WATERSHED_LISTINGS)
    family = f"flow.{tuple(str(v) for v in listings)!r}"
    # water beyond the DEM a whole read has (a window of it ends its paths there as CUT)
    whole_box = dem_box if dem.full_bounds is None else shapely.box(*dem.full_bounds)
    body_tree, grid = ctx.town_memo(f"{family}.grid", (dem, source), lambda: _prepared(dem, geoms))
    waters = _Waters(ctx, geoms, (dem, source), family)

    def nearest_of(geometry: Any) -> str:
        """Return the nearest water body's name (searched once per geometry and town)."""
        return ctx.town_cache(
            f"{family}.nearest",
            shapely.to_wkb(geometry),
            (dem, source),
            lambda: _names(bodies, _nearest(body_tree, geometry)),
        )

    def gap_of(geometry: Any) -> str:
        """Return how far ``geometry`` lies from the water bodies (once per geometry)."""
        return ctx.town_cache(
            f"{family}.gap",
            shapely.to_wkb(geometry),
            (dem, source),
            functools.partial(_gap, geometry, waters),
        )

    unions = ctx.disturbance_union
    cells = [grid.cells_of(unions[pid]) for pid in ids]
    rows = np.concatenate([c[0] for c in cells]) if cells else np.empty(0, dtype="int64")
    cols = np.concatenate([c[1] for c in cells]) if cells else np.empty(0, dtype="int64")
    starts = np.concatenate([[0], np.cumsum([len(c[0]) for c in cells])]).astype("int64")
    result = grid.trace(rows, cols)
    exits = grid.centres(result.end_row, result.end_col)
    near_edge = np.zeros(len(rows), dtype=bool)
    edge = result.end == FlowEnd.EDGE
    if edge.any() and not shapely.is_empty(outside_water := waters.beyond(whole_box)):
        pts = shapely.points(exits[edge])
        near_edge[edge] = shapely.dwithin(pts, outside_water, edge_ft)
    cut = _left_the_window(dem, exits, edge) | (result.end == FlowEnd.CUT)
    out: dict[str, Discharge] = {}
    for i, pid in enumerate(ids):
        union = unions[pid]
        mine = slice(int(starts[i]), int(starts[i + 1]))  # cells are concatenated by proposal
        n = mine.stop - mine.start
        ends = result.end[mine]
        nearest = nearest_of(union)
        if (ends == FlowEnd.WATER).any():
            wet = mine.start + np.flatnonzero(ends == FlowEnd.WATER)
            first = wet[np.argmin(result.steps[wet])]
            line = shapely.simplify(grid.path(int(rows[first]), int(cols[first])), 0.0)
            reached = nearest_of(shapely.Point(exits[first]))
            out[pid] = Discharge(
                Reach.REACHES,
                f"runoff flows over the DEM into the impaired water body{reached}: "
                f"{int((ends == FlowEnd.WATER).sum()):,} of the {n:,} DEM cells of the disturbance "
                f"drain to it, the shortest path {line.length:,.2f} ft long",
                line,
            )
        elif n == 0 or not shapely.covered_by(union, dem_box):
            out[pid] = Discharge(
                Reach.UNKNOWN,
                f"the disturbance lies {'partly ' if n else ''}outside the DEM, so where its "
                "runoff goes is not shown (the nearest impaired water body"
                f"{nearest} is {gap_of(union)})",
                union,
            )
        elif (ends == FlowEnd.EDGE).all() and not (near_edge[mine] | cut[mine]).any():
            out[pid] = Discharge(
                Reach.MISSES,
                f"every flow path from the {n:,} DEM cells of the disturbance leaves the DEM at "
                "its edge without reaching an impaired water body (the nearest"
                f"{nearest} is {gap_of(union)})",
                union,
            )
        else:
            counts = {
                "end in a closed depression (pit)": int((ends == FlowEnd.PIT).sum()),
                "end in a flat area": int((ends == FlowEnd.FLAT).sum()),
                "start on cells without elevation": int((ends == FlowEnd.NODATA).sum()),
                f"leave the DEM within {edge_ft:,.0f} ft of where an impaired water body runs on "
                "beyond its edge": int((near_edge[mine] & ~cut[mine]).sum()),
                "leave the part of the DEM that was read (the area the other layers need), "
                "where the file goes on beyond it": int(cut[mine].sum()),
            }
            told = "; ".join(f"{v:,} {k}" for k, v in counts.items() if v)
            out[pid] = Discharge(
                Reach.UNKNOWN,
                f"of the {n:,} DEM cells' flow paths, {told}, so the DEM does not show whether "
                f"that runoff reaches the impaired water body{nearest} {gap_of(union)}",
                union,
            )
    return out
