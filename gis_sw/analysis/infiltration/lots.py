"""Distance to the device's lot lines and to buildings with basements (SW205, SW206).

SW206 measures to the town's buildings and to the proposal's own new roofs
(:mod:`gis_sw.analysis.buildings`); unknown basements are ``review`` naming the attribute.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.buildings import Buildings, all_buildings
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.distances import meets_minimum, nearest, pairs_within
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.infiltration.common import DeviceRows, ft, limit_ft, no_devices, rows_of


@rule_check
def check_property_line(ctx: CheckContext, out: Findings) -> None:
    """Check SW205: at least 10 ft from every line of the device's parcel, and not across it."""
    if no_devices(ctx):
        return
    params = ctx.ruleset.devices
    limit, tol = params.property_line_ft, params.distance_tolerance_ft
    rows = DeviceRows(ctx, out, limit)
    devs = rows.devices
    parcels = ctx.layers.get("parcels")
    if len(devs) == 0:
        return
    idx = devs["parcel_index"].to_numpy()
    on = idx >= 0
    geoms = devs.geometry.to_numpy()
    dist = np.full(len(devs), np.nan)
    inside = np.zeros(len(devs), dtype=bool)
    lines = np.full(len(devs), None, dtype=object)
    if parcels is not None and on.any():
        lots = parcels.geometry.to_numpy()[idx[on]]
        edges = shapely.boundary(lots)
        dist[on] = shapely.distance(geoms[on], edges)
        inside[on] = shapely.within(geoms[on], lots)
        lines[on] = np.where(
            inside[on],
            shapely.shortest_line(geoms[on], edges),
            shapely.difference(geoms[on], lots),
        )
    ok = meets_minimum(dist, limit, tol) & inside
    parcel_ids = devs["parcel_id"].to_numpy()
    overlaps = _overlapping_parcels(geoms, idx, parcels)
    for i in range(len(devs)):
        name, parcel = rows.name(i), parcel_ids[i]
        if not on[i]:
            rows.set(i, Outcome.REVIEW, f"{name} is not on any parcel of the parcels layer")
        elif not inside[i]:
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} crosses the line of parcel {parcel} onto a neighbouring lot (0.00 ft, "
                f"less than the {limit_ft(limit)} minimum)",
                measured=0.0,
                geometry=lines[i],
            )
        elif ok[i] and overlaps[i]:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} is {ft(dist[i])} from the line of parcel {parcel}, but it also lies in "
                f"parcel {overlaps[i]}, which overlaps parcel {parcel}: the parcels layer "
                "contradicts itself, so the property line cannot be told; fix the overlapping "
                f"parcels to check the {limit_ft(limit)} minimum",
                measured=dist[i],
            )
        elif ok[i]:
            rows.set(
                i,
                Outcome.PASS,
                f"{name} is {ft(dist[i])} from the line of parcel {parcel}, at least the "
                f"{limit_ft(limit)} minimum",
                measured=dist[i],
            )
        else:
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} is {ft(dist[i])} from the line of parcel {parcel}, less than the "
                f"{limit_ft(limit)} minimum",
                measured=dist[i],
                geometry=lines[i],
            )
    return


def _overlapping_parcels(
    geoms: np.ndarray, parcel_index: np.ndarray, parcels: gpd.GeoDataFrame | None
) -> list[str]:
    """Return, per device, the other parcels whose interior holds it too ("" when none).

    Parcels with the same geometry as the device's own are one lot under several ids
    (condominium units) and do not count; abutting parcels never hold a point inside both.
    """
    out = [""] * len(geoms)
    on = np.flatnonzero(parcel_index >= 0)
    if parcels is None or not len(on):
        return out
    lots = parcels.geometry.to_numpy()
    ids = parcels["parcel_id"].astype(str).to_numpy()
    points = shapely.point_on_surface(geoms[on])
    d_pos, p_idx = shapely.STRtree(lots).query(points, predicate="within")
    own = parcel_index[on[d_pos]]
    other = (p_idx != own) & ~shapely.equals(lots[p_idx], lots[own])
    for k, p in zip(on[d_pos[other]], p_idx[other], strict=True):
        out[k] = f"{out[k]}, {ids[p]}" if out[k] else str(ids[p])
    return out


@rule_check
def check_habitable_basement(ctx: CheckContext, out: Findings) -> None:
    """Check SW206: at least 20 ft from a building with a habitable basement.

    Or with a below-ground storage area: the town's buildings and the proposal's own new
    roofs alike (:mod:`gis_sw.analysis.buildings`).
    """
    if no_devices(ctx):
        return
    params = ctx.ruleset.devices
    limit, tol = params.habitable_basement_ft, params.distance_tolerance_ft
    rows = DeviceRows(ctx, out, limit)
    geoms = rows.devices.geometry.to_numpy()
    found = all_buildings(ctx)
    if found is None:
        for i in range(len(geoms)):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{rows.name(i)} cannot be checked: no buildings layer was provided",
            )
        return
    pids = rows.devices["proposal_id"].astype(str).to_numpy()
    pairs = pairs_within(geoms, found.geoms, limit)
    owner = found.proposal_id[pairs.target]
    mine_ok = np.array(
        [o is None or o == pids[s] for o, s in zip(owner, pairs.source, strict=True)], dtype=bool
    )
    close = ~meets_minimum(pairs.distance_ft, limit, tol) & mine_ok
    no_layer = ctx.layers.get("buildings") is None
    nearest_ft = _nearest_qualifying(geoms, pids, found)
    for i in range(len(geoms)):
        name = rows.name(i)
        mine = rows_of(pairs.source, close, i)  # nearest first
        hit = [k for k in mine if found.qualifies[pairs.target[k]] is True]
        unknown = [k for k in mine if found.qualifies[pairs.target[k]] is None]
        if hit:
            t, d = int(pairs.target[hit[0]]), float(pairs.distance_ft[hit[0]])
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} is {ft(d)} from {found.names[t]}, which has {found.why[t]}, less "
                f"than the {limit_ft(limit)} minimum",
                measured=d,
                geometry=shapely.shortest_line(geoms[i], found.geoms[t]),
            )
        elif unknown:
            t, d = int(pairs.target[unknown[0]]), float(pairs.distance_ft[unknown[0]])
            missing = str(found.why[t])
            verb = "are" if " and " in missing else "is"
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} is {ft(d)} from {found.names[t]}, whose {missing} {verb} not given; "
                f"it must be at least {limit_ft(limit)} away if the building has a habitable "
                "basement or below-ground storage area",
                measured=d,
                geometry=shapely.shortest_line(geoms[i], found.geoms[t]),
            )
        elif no_layer:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} has no new building of its proposal within {limit_ft(limit)}, but no "
                "buildings layer was provided to check existing ones",
            )
        else:
            rows.set(
                i,
                Outcome.PASS,
                f"{name} has no building with a habitable basement or below-ground storage "
                f"area within {limit_ft(limit)}",
                measured=float(nearest_ft[i]),
            )
    return


def _nearest_qualifying(geoms: np.ndarray, pids: np.ndarray, found: Buildings) -> np.ndarray:
    """Return the distance from each device to the nearest building that may qualify.

    Qualifying buildings have, or may have, a habitable basement or below-ground storage,
    of those it is measured against (town buildings, and new buildings of its own
    proposal); ``nan`` when none.
    """
    qualifying = np.array([q is not False for q in found.qualifies], dtype=bool)
    town = qualifying & np.array([p is None for p in found.proposal_id], dtype=bool)
    out = nearest(geoms, found.geoms[town])[1]
    roofs = np.flatnonzero(qualifying & ~town)
    if len(roofs) and len(geoms):
        # every (device, roof of the same proposal) pair, by a join on the proposal id
        pairs = pd.merge(
            pd.DataFrame({"proposal_id": pids, "device": np.arange(len(geoms))}),
            pd.DataFrame({"proposal_id": found.proposal_id[roofs].astype(str), "roof": roofs}),
            on="proposal_id",
        )
        if len(pairs):
            dev = pairs["device"].to_numpy()
            dist = shapely.distance(geoms[dev], found.geoms[pairs["roof"].to_numpy()])
            np.fmin.at(out, dev, dist)
    return out
