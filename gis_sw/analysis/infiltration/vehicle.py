"""Devices serving vehicle traffic, against wells, wetlands and waters (SW202, SW210).

SW210 is an advisory from NYS DOH 10 NYCRR Appendix 5-B, not Chapter 183: a device nearer a
water well than the state's separation is ``review`` (advisory), never ``fail``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.distances import meets_minimum, pairs_within
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.infiltration.common import (
    FEATURE_LAYERS,
    OPTIONAL_WATER,
    DeviceRows,
    feature_names,
    ft,
    limit_ft,
    nearest_of,
    no_devices,
)


def _vehicle_flags(rows: DeviceRows) -> list[bool | None]:
    """Return each device's ``serves_vehicle_traffic`` as True / False / None."""
    values = rows.devices["serves_vehicle_traffic"]
    return [None if pd.isna(v) else bool(v) for v in values]


def _near_features(
    rows: DeviceRows, limit: float, kinds: tuple[str, ...]
) -> tuple[list[str], list[tuple[int, float, str, shapely.Geometry | None]]]:
    """Return missing feature layers and each device's nearest feature closer than ``limit``.

    The nearest well, wetland or water body has index -1 when there is none.
    """
    tol = rows.ctx.ruleset.devices.distance_tolerance_ft
    geoms = rows.devices.geometry.to_numpy()
    missing: list[str] = []
    best: list[tuple[int, float, str, shapely.Geometry | None]] = [(-1, math.inf, "", None)] * len(
        geoms
    )
    for kind in kinds:
        layer = rows.ctx.layers.get(kind)
        if layer is None:
            if kind not in OPTIONAL_WATER:
                missing.append(kind)
            continue
        features = layer.geometry.to_numpy()
        names = feature_names(layer, kind)
        pairs = pairs_within(geoms, features, limit)
        close = ~meets_minimum(pairs.distance_ft, limit, tol)
        for s, t, d in zip(
            pairs.source[close], pairs.target[close], pairs.distance_ft[close], strict=True
        ):
            if d < best[s][1]:
                best[s] = (int(t), float(d), str(names[t]), features[t])
    return missing, best


def _vehicle_rule(
    ctx: CheckContext, out: Findings, limit: float, kinds: tuple[str, ...], *, advisory: bool
) -> None:
    """Add a row per device: vehicle-traffic devices against the features of ``kinds``.

    ``advisory`` (state guidance, not town law) reviews what the town's rule fails.
    """
    if no_devices(ctx):
        return
    rows = DeviceRows(ctx, out, limit)
    lead = f"{ctx.ruleset.wording('advisory_lead', 'Advisory, not town law')}: " if advisory else ""
    flags = _vehicle_flags(rows)
    missing, best = _near_features(rows, limit, kinds)
    geoms = rows.devices.geometry.to_numpy()
    nearest_ft = np.full(len(geoms), np.inf)
    for kind in kinds:
        layer = ctx.layers.get(kind)
        if layer is not None and len(geoms):
            dist = nearest_of(ctx, kind)[1]
            nearest_ft = np.fmin(nearest_ft, np.where(np.isnan(dist), np.inf, dist))
    for i, flag in enumerate(flags):
        name = rows.name(i)
        if flag is None:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{lead}{name} does not say whether it takes runoff from roadways, parking lots "
                "or other vehicle traffic areas (serves_vehicle_traffic)",
            )
            continue
        if not flag:
            rows.set(
                i,
                Outcome.PASS,
                f"{lead}{name} does not serve vehicle traffic, so the {limit_ft(limit)} "
                "separation does not apply",
            )
            continue
        t, d, feature, geom = best[i]
        if t >= 0:
            short = (
                f"the state's {limit_ft(limit)} separation"
                if advisory
                else (f"the {limit_ft(limit)} minimum")
            )
            rows.set(
                i,
                Outcome.REVIEW if advisory else Outcome.FAIL,
                f"{lead}{name} serves vehicle traffic and is {ft(d)} from {feature}, less than "
                f"{short}",
                measured=d,
                geometry=shapely.shortest_line(rows.geoms[i], geom),
            )
        elif missing:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{lead}{name} serves vehicle traffic; no {', '.join(missing)} layer was "
                f"provided to measure the {limit_ft(limit)} separation",
            )
        else:
            rows.set(
                i,
                Outcome.PASS,
                f"{lead}{name} serves vehicle traffic and has no "
                f"{' or '.join(FEATURE_LAYERS[k][1] for k in kinds)} within {limit_ft(limit)}",
                measured=float(nearest_ft[i]) if np.isfinite(nearest_ft[i]) else math.nan,
            )


@rule_check
def check_vehicle_traffic(ctx: CheckContext, out: Findings) -> None:
    """Check SW202: vehicle-traffic devices not within 50 ft of any well, wetland or water body."""
    limit = ctx.ruleset.devices.vehicle_traffic_ft
    _vehicle_rule(ctx, out, limit, tuple(FEATURE_LAYERS), advisory=False)


@rule_check
def check_state_well_advisory(ctx: CheckContext, out: Findings) -> None:
    """Check SW210 (advisory, NYS DOH 10 NYCRR App. 5-B): vehicle devices 100 ft from wells."""
    limit = ctx.ruleset.devices.state_well_surface_recharge_ft
    _vehicle_rule(ctx, out, limit, ("wells",), advisory=True)
