"""Proposals: no disturbance, disturbance or device outside every parcel, end before start."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd
import shapely

from corpus import (
    CRS,
    X0,
    Y0,
    Fails,
    Inputs,
    Works,
    box,
    case,
    proposal_frames,
    proposals_with,
    write_town,
)


@case(
    "proposal-no-disturbance-layer",
    validate=Fails(("proposals.gpkg", "no 'disturbance' layer")),
    check=Fails(("proposals.gpkg", "no 'disturbance' layer")),
    batch=Fails(("proposals.gpkg", "no 'disturbance' layer")),
)
def no_disturbance_layer(folder: Path) -> Inputs:
    return proposals_with(folder, disturbance=None)


@case(
    "proposal-disturbance-layer-empty",
    validate=Fails(("disturbance", "has no features")),
    check=Fails(("disturbance", "has no features")),
    batch=Fails(("disturbance", "has no features")),
)
def empty_disturbance(folder: Path) -> Inputs:
    return proposals_with(folder, disturbance=proposal_frames()["disturbance"].iloc[:0])


@case(
    "proposal-disturbance-outside-every-parcel",
    validate=Works(output=("disturbance: ok",)),
    check=Works(
        findings={("SW101", "P-1"): "review", ("SW105", "P-1"): "review", ("SW101", "P-2"): "pass"}
    ),
)
def disturbance_outside(folder: Path) -> Inputs:
    """P-1 drawn 1,000 ft south of the town, on no parcel and in no zone."""
    d = proposal_frames()["disturbance"]
    geoms = [box(0, -1000, 13.4, 10), d.geometry[1]]
    return proposals_with(folder, disturbance=d.set_geometry(gpd.GeoSeries(geoms, crs=CRS)))


@case(
    "proposal-device-outside-every-parcel",
    validate=Works(output=("devices: ok",)),
    check=Works(findings={("SW101", "P-1"): "required", ("SW205", "D-1"): "review"}),
)
def device_outside(folder: Path) -> Inputs:
    devices = proposal_frames()["devices"]
    far = [shapely.Point(X0 + 50, Y0 - 500)]
    return proposals_with(folder, devices=devices.set_geometry(gpd.GeoSeries(far, crs=CRS)))


@case(
    "proposal-end-before-start",
    validate=Fails(("disturbance", "end_date is before start_date", "disturbance_id L-2")),
    check=Fails(("disturbance", "end_date is before start_date", "disturbance_id L-2")),
    batch=Fails(("disturbance", "end_date is before start_date", "disturbance_id L-2")),
)
def end_before_start(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"]
    d.loc[1, "end_date"] = "2026-04-01"
    return proposals_with(folder, disturbance=d)


@case(
    "proposal-construction-end-before-start",
    validate=Fails(("proposals", "construction_end is before construction_start", "P-2")),
    check=Fails(("proposals", "construction_end is before construction_start", "P-2")),
)
def construction_end_before_start(folder: Path) -> Inputs:
    attributes = proposal_frames()["proposals"].assign(
        construction_start=["2026-05-01", "2026-06-01"],
        construction_end=["2026-09-01", "2026-05-15"],
    )
    return proposals_with(folder, proposals=attributes)


@case("siting-unknown-parcel", siting=Fails(("ZZZ",)))
def unknown_parcel(folder: Path) -> Inputs:
    inputs = write_town(folder)
    return Inputs(inputs.layers, inputs.proposals, parcel="ZZZ")


@case(
    "proposal-listed-without-disturbance",
    validate=Fails(("proposals", "have no disturbance feature: P-9", "fix: draw")),
    check=Fails(("proposals", "have no disturbance feature: P-9")),
    batch=Fails(("proposals", "have no disturbance feature: P-9")),
)
def listed_without_disturbance(folder: Path) -> Inputs:
    """P-9 in the proposals table but not drawn: it would pass SW102-SW106 at 0 sq ft."""
    attributes = proposal_frames()["proposals"]
    extra = attributes.iloc[[0]].assign(proposal_id="P-9", name="Not drawn")
    both = gpd.GeoDataFrame(pd.concat([attributes, extra], ignore_index=True))
    return proposals_with(folder, proposals=both)
