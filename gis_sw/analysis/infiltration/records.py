"""The device's bottom separations and what it records (SW203, SW204, SW207, SW209).

SW203 and SW204 measure the bottom's separation above seasonal high groundwater and bedrock
(:func:`gis_sw.analysis.devices.vertical_separation`); SW207 and SW209 read the device's
attributes (sedimentation device, logged test holes), missing answers being ``review``.
"""

from __future__ import annotations

import math

import pandas as pd

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.devices import vertical_separation
from gis_sw.analysis.distances import meets_minimum, round_ft
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.infiltration.common import DeviceRows, ft, limit_ft, no_devices


def _vertical_rule(ctx: CheckContext, out: Findings, kind: str, minimum: float) -> None:
    """Add a row per device: its bottom's separation above ``kind`` against ``minimum``."""
    if no_devices(ctx):
        return
    rows = DeviceRows(ctx, out, minimum)
    tol = ctx.ruleset.devices.distance_tolerance_ft
    noun = "seasonal high groundwater" if kind == "seasonal_high_groundwater" else "bedrock"
    for i, sep in enumerate(vertical_separation(ctx, kind)):
        name = rows.name(i)
        if math.isnan(sep.separation_ft):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name}: separation above {noun} cannot be measured: {sep.reason}",
            )
            continue
        ok = bool(meets_minimum(sep.separation_ft, minimum, tol))
        if ok and sep.partial:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name}'s bottom is {ft(float(round_ft(sep.separation_ft)))} above {noun} "
                f"where it can be measured, but {sep.partial}; the {limit_ft(minimum)} minimum "
                "cannot be confirmed",
                measured=sep.separation_ft,
            )
            continue
        relation = "at least" if ok else "less than"
        rounded = float(round_ft(sep.separation_ft))
        where = "above" if rounded >= 0 else "below"
        rows.set(
            i,
            Outcome.PASS if ok else Outcome.FAIL,
            f"{name}'s bottom is {ft(abs(rounded))} {where} {noun} (worst place, from the "
            f"{sep.source}), {relation} the {limit_ft(minimum)} minimum",
            measured=sep.separation_ft,
        )


@rule_check
def check_groundwater_separation(ctx: CheckContext, out: Findings) -> None:
    """Check SW203: device bottom at least 2 ft above seasonal high groundwater."""
    minimum = ctx.ruleset.devices.groundwater_separation_ft
    _vertical_rule(ctx, out, "seasonal_high_groundwater", minimum)


@rule_check
def check_bedrock_separation(ctx: CheckContext, out: Findings) -> None:
    """Check SW204: device bottom at least 2 ft above bedrock."""
    minimum = ctx.ruleset.devices.bedrock_separation_ft
    _vertical_rule(ctx, out, "bedrock", minimum)


@rule_check
def check_sedimentation_device(ctx: CheckContext, out: Findings) -> None:
    """Check SW207: each device includes a sedimentation device."""
    if no_devices(ctx):
        return
    rows = DeviceRows(ctx, out, math.nan, unit="", spatial=False)
    for i, value in enumerate(rows.devices["has_sedimentation_device"]):
        name = rows.name(i)
        if pd.isna(value):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} does not say whether it includes a sedimentation device "
                "(has_sedimentation_device)",
            )
        elif bool(value):
            rows.set(i, Outcome.PASS, f"{name} includes a sedimentation device")
        else:
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} has no sedimentation device to prevent clogging",
            )


@rule_check
def check_test_holes(ctx: CheckContext, out: Findings) -> None:
    """Check SW209: deep test holes and percolation tests at the device, witnessed and logged."""
    if no_devices(ctx):
        return
    rows = DeviceRows(ctx, out, math.nan, unit="", spatial=False)
    for i, value in enumerate(rows.devices["test_hole_logged"]):
        name = rows.name(i)
        if not pd.isna(value) and bool(value):
            rows.set(i, Outcome.PASS, f"{name} has a logged deep test hole and percolation test")
        else:
            state = "is not given" if pd.isna(value) else "is false"
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name}: test_hole_logged {state}; deep test holes witnessed by the Town "
                "Engineer and percolation tests at the device must be logged on the SWPPP",
            )
