"""CRS: none, geographic, projected in metres, mismatched between layers, far from New York."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import shapely

from corpus import (
    Fails,
    Inputs,
    Works,
    case,
    every,
    proposal_frames,
    proposals_with,
    town_frames,
    town_with,
    write_town,
)

SAME = {
    "validate": Works(output=("Result: every layer is valid.",)),
    "check": Works(same_as_base=True),
}
"""A correctly labelled layer in another CRS changes nothing."""
SAME_EVERYWHERE = SAME | {
    "siting": Works(siting={"A": ("review", 6400.0)}),
    "batch": Works(same_as_base=True),
}
"""The same through siting and batch (run for one case only: batch takes seconds)."""


def _no_crs(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    return frame.set_crs(None, allow_override=True)


@case("crs-none-parcels-gpkg", **every(Fails(("town.gpkg:parcels", "has no CRS"))))
def parcels_no_crs(folder: Path) -> Inputs:
    return town_with(folder, parcels=_no_crs(town_frames()["parcels"]))


@case(
    "crs-none-proposals-gpkg",
    validate=Fails(("proposals.gpkg:disturbance", "has no CRS")),
    check=Fails(("proposals.gpkg:disturbance", "has no CRS")),
    batch=Fails(("proposals.gpkg:disturbance", "has no CRS")),
)
def proposals_no_crs(folder: Path) -> Inputs:
    frames = proposal_frames()
    return proposals_with(
        folder, disturbance=_no_crs(frames["disturbance"]), devices=_no_crs(frames["devices"])
    )


@case("crs-geographic-proposals", **SAME)
def proposals_wgs84(folder: Path) -> Inputs:
    frames = proposal_frames()
    return proposals_with(
        folder,
        disturbance=frames["disturbance"].to_crs(4326),
        devices=frames["devices"].to_crs(4326),
    )


@case(
    "crs-geographic-parcels-geojson",
    **SAME
    | {
        "check": Works(same_as_base=True),
    },
)
def parcels_geojson(folder: Path) -> Inputs:
    inputs = write_town(folder)
    frames = town_frames()
    frames["parcels"].to_crs(4326).to_file(folder / "parcels.geojson", engine="pyogrio")
    lines = ['[parcels]\npath = "parcels.geojson"\n']
    lines += [f'[{k}]\npath = "town.gpkg"\nlayer = "{k}"\n' for k in frames if k != "parcels"]
    path = folder / "layers.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return Inputs(path, inputs.proposals)


@case("crs-utm-metres-zoning", **SAME)
def zoning_utm(folder: Path) -> Inputs:
    return town_with(folder, zoning=town_frames()["zoning"].to_crs(32618))


@case("crs-mismatched-every-layer", **SAME_EVERYWHERE)
def every_layer_its_own(folder: Path) -> Inputs:
    town = town_frames()
    crs = {"parcels": 32618, "zoning": 2263, "wetlands": 4326, "water_bodies": 26918}
    mixed = {k: v.to_crs(crs[k]) if k in crs else v for k, v in town.items()}
    props = proposal_frames()
    props["disturbance"] = props["disturbance"].to_crs(3857)
    props["devices"] = props["devices"].to_crs(4269)
    return write_town(folder, town=mixed, proposals=props)


@case(
    "crs-degrees-labelled-feet",
    **every(Fails(("town.gpkg:wetlands", "outside"))),
)
def wetlands_degrees_in_feet(folder: Path) -> Inputs:
    """Wetlands in lon/lat but labelled EPSG:2260: 'far away', a silent pass if believed."""
    wet = town_frames()["wetlands"]
    wgs = wet.to_crs(4326)
    mislabelled = wgs.set_crs(2260, allow_override=True)
    return town_with(folder, wetlands=mislabelled)


@case("crs-far-outside-new-york", **every(Fails(("town.gpkg:parcels", "outside"))))
def parcels_in_paris(folder: Path) -> Inputs:
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["A", "B"]},
        geometry=[
            shapely.box(2.35, 48.85, 2.351, 48.851),
            shapely.box(2.351, 48.85, 2.352, 48.851),
        ],
        crs=4326,
    )
    return town_with(folder, parcels=parcels)


@case(
    "crs-proposals-far-outside-new-york",
    validate=Fails(("proposals.gpkg:disturbance", "outside")),
    check=Fails(("proposals.gpkg:disturbance", "outside")),
    batch=Fails(("proposals.gpkg:disturbance", "outside")),
)
def proposals_origin(folder: Path) -> Inputs:
    """A disturbance drawn at the CRS origin (CAD drawing coordinates, not state plane)."""
    frames = proposal_frames()
    disturbance = frames["disturbance"].copy()
    disturbance["geometry"] = [shapely.box(0, 0, 13.4, 10), shapely.box(50, 0, 70, 10)]
    return proposals_with(folder, disturbance=disturbance)
