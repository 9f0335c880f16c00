"""Mapped wetlands, their adjacent area, water bodies, floodplain and streams (SW106).

One row per mapped resource and proposal (``P-1:wetlands``, ``P-1:wetland_adjacent_area``,
``P-1:water_bodies``, ``P-1:floodplain``, and ``P-1:streams`` when a ``streams`` line layer
is given): the overlap area the plan must show, or review when the layer is missing.
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.bands import adjacent_band, wetlands_near
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.overlay import overlay_arrays, overlay_pieces
from gis_sw.analysis.permits.common import EMPTY, GAP_FIX, disturbance_gap, say, union
from gis_sw.analysis.wording import fmt_limit, fmt_sqft

_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("wetlands", "mapped wetlands", "wetlands_consequence"),
    ("wetland_adjacent_area", "the wetland adjacent area", "wetland_adjacent_area_consequence"),
    ("water_bodies", "mapped water bodies", "water_bodies_consequence"),
    ("floodplain", "the 100-year floodplain", "floodplain_consequence"),
)
"""(resource, what the sentence calls it, the ``[wording]`` key of what follows from it)."""


def _resource_names(layer: gpd.GeoDataFrame, unions: gpd.GeoSeries, column: str) -> dict[str, str]:
    """Return names of the features each proposal's disturbance touches, ``" (A, B)"``."""
    if column not in layer.columns or len(layer) == 0:
        return {}
    tree = shapely.STRtree(layer.geometry.to_numpy())
    subject_pos, feature_pos = tree.query(unions.to_numpy(), predicate="intersects")
    values = layer[column].to_numpy(dtype=object)[feature_pos]
    found: dict[str, set[str]] = {}
    labels = unions.index.to_numpy()
    for pos, value in zip(subject_pos, values, strict=True):
        if value is not None and not pd.isna(value):
            found.setdefault(str(labels[pos]), set()).add(str(value))
    out = {}
    for pid, names in found.items():
        ordered = sorted(names)
        more = ", ..." if len(ordered) > 5 else ""
        out[pid] = f" ({', '.join(ordered[:5])}{more})"
    return out


def _overlaps_of(unions: gpd.GeoSeries, layer: Any) -> dict[str, tuple[float, Any]]:
    """Return the overlap (area sq ft, geometry) of each proposal's disturbance with ``layer``.

    ``layer``: a layer's frame, or an array of geometries in the working CRS (the band).
    """
    if isinstance(layer, np.ndarray):
        hits = overlay_arrays(
            np.asarray(unions.to_numpy(), dtype=object),
            unions.index.to_numpy(),
            layer,
            None,
            keep_geometry=True,
            dissolve=True,
        )
    else:
        hits = overlay_pieces(unions, layer, None, keep_geometry=True)
    if hits is None or hits.geometry is None:
        return {}
    return {
        str(s): (float(a), g)
        for s, a, g in zip(hits.subject, hits.area_sqft, hits.geometry, strict=True)
    }


def _resource_layers(ctx: CheckContext) -> dict[str, Any]:
    """Return the layer of each resource, the wetland adjacent band built from the wetlands.

    A layer's frame, None when it is missing; the band as an array of its one geometry.
    """
    wetlands = ctx.layers.get("wetlands")
    layers: dict[str, Any] = {
        "wetlands": wetlands,
        "water_bodies": ctx.layers.get("water_bodies"),
        "floodplain": ctx.layers.get("floodplain"),
        "wetland_adjacent_area": None,
    }
    if wetlands is not None:
        buffer_ft = ctx.ruleset.resources.wetland_adjacent_area_ft
        geoms = np.asarray(wetlands.geometry.to_numpy(), dtype=object)
        # adjacent_band_near, the band of the wetlands near kept per Town by which they are
        # (the same geometry objects: Town.local cuts the town's frames)
        near = geoms[wetlands_near(geoms, ctx.disturbance_union.to_numpy(), buffer_ft)]
        zone = ctx.town_cache(
            f"resources.band.{buffer_ft!r}",
            tuple(id(g) for g in near),
            tuple(near),
            lambda: adjacent_band(near, buffer_ft),
        )
        band = np.empty(1, dtype=object)
        band[0] = zone
        layers["wetland_adjacent_area"] = band
    return layers


def _touching(unions: gpd.GeoSeries, layer: gpd.GeoDataFrame, tol_ft: float) -> set[str]:
    """Return the proposals whose disturbance touches a feature of ``layer`` (within ``tol_ft``)."""
    if not len(layer):
        return set()
    tree = shapely.STRtree(layer.geometry.to_numpy())
    subject_pos, _ = tree.query(unions.to_numpy(), predicate="dwithin", distance=tol_ft)
    return {str(pid) for pid in unions.index.to_numpy()[np.unique(subject_pos)]}


def _resource_row(
    ctx: CheckContext,
    kind: str,
    found: tuple[float, Any] | None,
    names: str,
    cite: str,
    *,
    touches: bool = False,
) -> tuple[Outcome, str, float, Any]:
    """Return outcome, message, overlap sq ft and geometry (None: the union) of one resource.

    A disturbance that touches a mapped wetland, water body or floodplain along its edge
    (0 sq ft inside, within the distance tolerance) has it adjacent: the plan must show it
    (§ 183-7B(1)(b)[6], [7]), so the row is ``required`` at 0 sq ft, as a stream line touched
    is.  The wetland adjacent area is a distance band: its outer edge is its limit, and a
    disturbance exactly there is outside it, as at every setback.
    """
    label, wording_key = _LABELS[kind]
    if found is None:
        source = "wetlands" if kind == "wetland_adjacent_area" else kind
        return (
            Outcome.REVIEW,
            (
                f"The {source} layer was not provided, so overlap of the disturbance with "
                f"{label} cannot be checked; the plan must show it ({cite})."
            ),
            float("nan"),
            None,
        )
    overlap_sqft, piece = found
    if round(overlap_sqft, 2) > 0.0:
        extent = (
            f" (within {fmt_limit(ctx.ruleset.resources.wetland_adjacent_area_ft)} ft of a wetland)"
            if kind == "wetland_adjacent_area"
            else ""
        )
        return (
            Outcome.REQUIRED,
            (
                f"{fmt_sqft(overlap_sqft)} sq ft of the disturbance lies in {label}{names}"
                f"{extent}: the plan must show it and {say(ctx, wording_key)} ({cite})."
            ),
            overlap_sqft,
            piece,
        )
    if touches and kind != "wetland_adjacent_area":
        return (
            Outcome.REQUIRED,
            (
                f"The disturbance touches {label}{names} along its edge (0 sq ft inside): the "
                f"plan must show it and {say(ctx, wording_key)} ({cite})."
            ),
            0.0,
            None,
        )
    return Outcome.PASS, f"The disturbance does not overlap {label} ({cite}).", 0.0, None


_LABELS = {kind: (label, key) for kind, label, key in _RESOURCES}


@rule_check
def check_mapped_resources(ctx: CheckContext, rows: Findings) -> None:
    """Check SW106: disturbance in wetlands, their adjacent area, water bodies, floodplain."""
    unions = ctx.disturbance_union
    layers = _resource_layers(ctx)
    overlaps = {
        kind: _overlaps_of(unions, layer) for kind, layer in layers.items() if layer is not None
    }
    name_cols = {"wetlands": "name", "water_bodies": "name", "floodplain": "flood_zone"}
    names_of = {
        kind: _resource_names(layer, unions, name_cols[kind])
        for kind, layer in layers.items()
        if layer is not None and kind in name_cols
    }
    tol = ctx.ruleset.devices.distance_tolerance_ft
    touching = {
        kind: _touching(unions, layer, tol)
        for kind, layer in layers.items()
        if layer is not None and kind in name_cols
    }
    rows.threshold, rows.unit, rows.decimals = 0.0, "sq ft", 2
    gaps = disturbance_gap(ctx)
    for pid in ctx.proposal_ids:
        whole = union(ctx)[pid]
        for kind, _, _ in _RESOURCES:
            found = overlaps[kind].get(pid, (0.0, EMPTY)) if kind in overlaps else None
            names = names_of.get(kind, {}).get(pid, "")
            touches = pid in touching.get(kind, ())
            out, msg, meas, geom = _resource_row(
                ctx, kind, found, names, rows.citation, touches=touches
            )
            if out is Outcome.PASS and pid in gaps:
                out, meas = Outcome.REVIEW, float("nan")
                msg = _gap_message(_LABELS[kind][0], gaps[pid], rows.citation)
            rows.add(
                pid,
                out,
                msg,
                subject_id=f"{pid}:{kind}",
                measured=meas,
                geometry=whole if geom is None else geom,
            )
    _stream_findings(ctx, rows)


def _gap_message(label: str, gap: str, cite: str) -> str:
    """Return why a resource's overlap cannot be checked when the disturbance is not whole."""
    return (
        f"The overlap of the disturbance with {label} cannot be checked: {gap}. Fix: "
        f"{GAP_FIX}; the plan must show {label} ({cite})."
    )


def _stream_findings(ctx: CheckContext, rows: Findings) -> None:
    """Add SW106 ``<proposal>:streams``: disturbance crossing or touching a mapped stream line.

    Streams count as water bodies.  A line has no area, so the test is buffer-free: the
    disturbance intersects the line, or comes within the distance tolerance of it (a stream
    along the edge of the limits of disturbance is touched).  The measured figure is the
    length of stream inside the disturbance, in ft.  Nothing is reported when the layer is
    not given (the ``water_bodies`` row already says what is mapped).
    """
    streams = ctx.layers.get("streams")
    if streams is None:
        return
    cite = rows.citation
    consequence = say(ctx, "water_bodies_consequence")
    tol = ctx.ruleset.devices.distance_tolerance_ft
    ids = ctx.proposal_ids
    unions = ctx.disturbance_union.loc[ids]
    lines = streams.geometry.to_numpy()
    tree = shapely.STRtree(lines)
    pos_s, pos_f = tree.query(unions.to_numpy(), predicate="dwithin", distance=tol)
    named = _resource_names(streams, unions, "name")
    for i, pid in enumerate(ids):
        whole = unions.iloc[i]
        hit = pos_f[pos_s == i]
        if len(hit):
            inside = shapely.intersection(shapely.union_all(lines[hit]), whole)
            length_ft = float(shapely.length(inside))
            how = (
                f"{length_ft:,.2f} ft of mapped stream{named.get(pid, '')} runs through the "
                "disturbance"
                if round(length_ft, 2) > 0
                else f"the disturbance touches a mapped stream{named.get(pid, '')}"
            )
            out, meas = Outcome.REQUIRED, length_ft
            geom = inside if not shapely.is_empty(inside) else whole
            msg = f"{how}: the plan must show it and {consequence} ({cite})."
        elif pid in disturbance_gap(ctx):
            out, meas, geom = Outcome.REVIEW, float("nan"), whole
            msg = _gap_message("mapped streams", disturbance_gap(ctx)[pid], cite)
        else:
            out, meas, geom = Outcome.PASS, 0.0, whole
            msg = f"The disturbance does not cross or touch a mapped stream ({cite})."
        rows.add(
            pid, out, msg, subject_id=f"{pid}:streams", measured=meas, unit="ft", geometry=geom
        )
