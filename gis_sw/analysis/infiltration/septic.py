"""No device up-gradient within the septic setback, decided on the DEM (SW201).

"Up-gradient" compares ground with ground: the device's highest DEM ground cell against the
lowest DEM ground cell of the part of the field within the setback; a difference within
``ruleset.devices.upgradient_flat_tolerance_ft`` either way is flat and ``review``.
"""

from __future__ import annotations

import math

import numpy as np
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.devices import ground_difference_ft, raster_gaps, up_gradient
from gis_sw.analysis.distances import meets_minimum, pairs_within
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.infiltration.common import (
    DeviceRows,
    feature_names,
    ft,
    limit_ft,
    nearest_of,
    no_devices,
    rows_of,
)
from gis_sw.layers.raster import RasterLayer


@rule_check
def check_septic_upgradient(ctx: CheckContext, out: Findings) -> None:
    """Check SW201: no device up-gradient within 20 ft of a septic field (decided on the DEM)."""
    if no_devices(ctx):
        return
    params = ctx.ruleset.devices
    limit, tol = params.septic_upgradient_ft, params.distance_tolerance_ft
    rows = DeviceRows(ctx, out, limit)
    devs = rows.devices
    septic = ctx.layers.get("septic_fields")
    if septic is None:
        for i in range(len(devs)):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{rows.name(i)} cannot be checked against septic fields: no septic_fields "
                "layer was provided",
            )
        return
    geoms = devs.geometry.to_numpy()
    fields = septic.geometry.to_numpy()
    names = feature_names(septic, "septic_fields")
    dem = ctx.layers.raster("dem")
    near_idx, near_d = nearest_of(ctx, "septic_fields")
    pairs = pairs_within(geoms, fields, limit)
    close = ~meets_minimum(pairs.distance_ft, limit, tol)
    for i in range(len(devs)):
        mine = rows_of(pairs.source, close, i)
        if len(mine) == 0:
            if near_idx[i] < 0:
                rows.set(i, Outcome.PASS, f"{rows.name(i)} has no septic field near it")
            else:
                rows.set(
                    i,
                    Outcome.PASS,
                    f"{rows.name(i)} is {ft(near_d[i])} from {names[near_idx[i]]}, not "
                    f"within the {limit_ft(limit)} up-gradient setback",
                    measured=near_d[i],
                )
            continue
        _septic_pairs(
            rows,
            i,
            mine=mine,
            targets=pairs.target,
            distances=pairs.distance_ft,
            fields=fields,
            names=names,
            dem=dem,
        )
    return


def _septic_pairs(
    rows: DeviceRows,
    i: int,
    *,
    mine: np.ndarray,
    targets: np.ndarray,
    distances: np.ndarray,
    fields: np.ndarray,
    names: np.ndarray,
    dem: RasterLayer | None,
) -> None:
    """Decide one device against the septic fields within the setback (nearest first)."""
    limit = rows.ctx.ruleset.devices.septic_upgradient_ft
    device = rows.geoms[i]
    first_t, first_d = int(targets[mine[0]]), float(distances[mine[0]])
    if dem is None:
        rows.set(
            i,
            Outcome.REVIEW,
            f"{rows.name(i)} is {ft(first_d)} from {names[first_t]}, within "
            f"{limit_ft(limit)}; no DEM was provided to decide whether it is up-gradient",
            measured=first_d,
            geometry=shapely.shortest_line(device, fields[first_t]),
        )
        return
    flat_ft = rows.ctx.ruleset.devices.upgradient_flat_tolerance_ft
    ground = float(rows.devices["ground_max_ft"].iat[i])
    partial = bool(rows.devices["ground_partial"].iat[i])
    unknown: tuple[int, float] | None = None
    flat: tuple[int, float, float, float] | None = None
    first_low = math.nan
    for k in mine:
        t, d = int(targets[k]), float(distances[k])
        near_part = shapely.intersection(fields[t], shapely.buffer(device, limit, quad_segs=64))
        cells = dem.cells_under(near_part)
        if math.isnan(ground) or len(cells) == 0:
            unknown = unknown or (t, d)
            continue
        low = float(cells.min())
        diff = float(ground_difference_ft(ground, low))
        side = int(up_gradient(diff, flat_ft))
        if side <= 0 and (partial or bool(raster_gaps(dem, np.array([near_part]))[0])):
            # ground higher under the device, or lower under the field, may lie in the gap
            unknown = unknown or (t, d)
            continue
        if side > 0:
            rows.set(
                i,
                Outcome.FAIL,
                f"{rows.name(i)} is {ft(d)} from {names[t]} and up-gradient of it (device "
                f"ground {ground:.2f} ft above the field's lowest ground {low:.2f} ft), "
                f"within the {limit_ft(limit)} setback",
                measured=d,
                geometry=shapely.shortest_line(device, fields[t]),
            )
            return
        if side == 0:
            flat = flat or (t, d, low, diff)
        elif t == first_t:
            first_low = low
    if unknown is not None:
        t, d = unknown
        rows.set(
            i,
            Outcome.REVIEW,
            f"{rows.name(i)} is {ft(d)} from {names[t]}, within {limit_ft(limit)}; the DEM "
            "has no data under the device or the field (or part of one), so up-gradient cannot "
            "be decided: supply the DEM over both",
            measured=d,
            geometry=shapely.shortest_line(device, fields[t]),
        )
        return
    if flat is not None:
        t, d, low, diff = flat
        rows.set(
            i,
            Outcome.REVIEW,
            f"{rows.name(i)} is {ft(d)} from {names[t]}, within {limit_ft(limit)}; device "
            f"ground {ground:.2f} ft and the field's lowest ground {low:.2f} ft differ by "
            f"{abs(diff):.2f} ft, not more than the DEM resolves ({flat_ft:.2f} ft), so "
            "up-gradient cannot be decided from the DEM",
            measured=d,
            geometry=shapely.shortest_line(device, fields[t]),
        )
        return
    rows.set(
        i,
        Outcome.PASS,
        f"{rows.name(i)} is {ft(first_d)} from {names[first_t]} but not up-gradient of it: "
        f"device ground {ground:.2f} ft is not above the field's lowest ground {first_low:.2f} ft",
        measured=first_d,
    )
