"""Attributes: missing required columns, wrong types, other date formats, duplicate ids,
nulls, Latin-1 text, markup in names."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd

from corpus import (
    CRS,
    Fails,
    Inputs,
    Works,
    box,
    case,
    every,
    manifest,
    proposal_frames,
    proposals_with,
    town_frames,
    town_with,
    write_town,
)

PROPOSAL_COMMANDS = ("validate", "check", "batch")


def proposals_fail(*names: str) -> dict[str, Fails]:
    return {c: Fails(names) for c in PROPOSAL_COMMANDS}


@case("attr-parcels-missing-id-column", **every(Fails(("parcels", "'parcel_id' is missing"))))
def parcels_no_id(folder: Path) -> Inputs:
    return town_with(folder, parcels=town_frames()["parcels"].drop(columns="parcel_id"))


@case("attr-zoning-missing-zone-column", **every(Fails(("zoning", "'zone' is missing"))))
def zoning_no_zone(folder: Path) -> Inputs:
    zoning = town_frames()["zoning"].rename(columns={"zone": "ZONE_TYPE"})
    return town_with(folder, zoning=zoning)


@case(
    "attr-zoning-column-mapped",
    validate=Works(output=("zoning: ok", "Result: every layer is valid.")),
    check=Works(same_as_base=True),
)
def zoning_mapped(folder: Path) -> Inputs:
    inputs = town_with(folder, zoning=town_frames()["zoning"].rename(columns={"zone": "ZONE"}))
    tables: dict[str, dict[str, str]] = {
        k: {"path": "town.gpkg", "layer": k} for k in town_frames()
    }
    path = manifest(folder, tables)
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            'layer = "zoning"', 'layer = "zoning"\ncolumns = { zone = "ZONE" }'
        ),
        encoding="utf-8",
    )
    return Inputs(path, inputs.proposals)


@case(
    "attr-devices-missing-proposal-id",
    **proposals_fail("devices", "'proposal_id' is missing"),
)
def devices_no_proposal(folder: Path) -> Inputs:
    return proposals_with(folder, devices=proposal_frames()["devices"].drop(columns="proposal_id"))


def _devices(**values: object) -> gpd.GeoDataFrame:
    devices = proposal_frames()["devices"]
    return devices.assign(**values)


@case(
    "attr-bool-yes-and-y",
    validate=Works(output=("devices: ok",)),
    check=Works(findings={("SW101", "P-1"): "required"}),
)
def bool_words(folder: Path) -> Inputs:
    return proposals_with(
        folder, devices=_devices(serves_vehicle_traffic="Y", test_hole_logged="yes")
    )


@case(
    "attr-bool-maybe",
    **proposals_fail("devices", "serves_vehicle_traffic", "device_id D-1 = 'maybe'"),
)
def bool_maybe(folder: Path) -> Inputs:
    return proposals_with(folder, devices=_devices(serves_vehicle_traffic="maybe"))


@case(
    "attr-buildings-basement-maybe",
    **every(Fails(("buildings", "habitable_basement", "building_id H-1 = 'maybe'"))),
)
def basement_maybe(folder: Path) -> Inputs:
    buildings = gpd.GeoDataFrame(
        {"building_id": ["H-1"], "habitable_basement": ["maybe"]},
        geometry=[box(30, 30, 30, 30)],
        crs=CRS,
    )
    return town_with(folder, buildings=buildings)


@case(
    "attr-number-as-text",
    **proposals_fail("proposals", "construction_cost_usd", "proposal_id P-1 = '20k'"),
)
def cost_text(folder: Path) -> Inputs:
    attributes = proposal_frames()["proposals"].astype({"construction_cost_usd": object})
    attributes.loc[0, "construction_cost_usd"] = "20k"
    return proposals_with(folder, proposals=attributes)


@case(
    "attr-date-us-format",
    **proposals_fail("disturbance", "start_date", "05/01/2026", "YYYY-MM-DD"),
)
def us_date(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"]
    d.loc[0, "start_date"] = "05/01/2026"
    return proposals_with(folder, disturbance=d)


@case(
    "attr-date-words",
    **proposals_fail("proposals", "construction_start", "1 May 2026", "YYYY-MM-DD"),
)
def word_date(folder: Path) -> Inputs:
    attributes = proposal_frames()["proposals"].assign(construction_start=["1 May 2026", None])
    return proposals_with(folder, proposals=attributes)


@case(
    "attr-date-iso-with-time",
    validate=Works(output=("disturbance: ok",)),
    check=Works(findings={("SW101", "P-1"): "required"}),
)
def iso_time(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"]
    d.loc[0, "start_date"] = "2026-05-01T08:00:00"
    return proposals_with(folder, disturbance=d)


@case("attr-duplicate-parcel-ids", **every(Fails(("parcels", "duplicate parcel_id", "'A'"))))
def duplicate_parcels(folder: Path) -> Inputs:
    return town_with(folder, parcels=town_frames()["parcels"].assign(parcel_id=["A", "A"]))


@case(
    "attr-duplicate-device-ids",
    **proposals_fail("devices", "duplicate device_id", "'D-1' (2 times)"),
)
def duplicate_devices(folder: Path) -> Inputs:
    devices = proposal_frames()["devices"]
    two = gpd.GeoDataFrame(pd.concat([devices, devices], ignore_index=True), crs=CRS)
    return proposals_with(folder, devices=two)


@case(
    "attr-duplicate-proposal-rows",
    **proposals_fail("proposals", "duplicate proposal_id", "'P-1'"),
)
def duplicate_proposals(folder: Path) -> Inputs:
    attributes = proposal_frames()["proposals"].assign(proposal_id=["P-1", "P-1"])
    return proposals_with(folder, proposals=attributes)


@case("attr-null-parcel-id", **every(Fails(("parcels", "'parcel_id' is empty", "row 2"))))
def null_parcel_id(folder: Path) -> Inputs:
    return town_with(folder, parcels=town_frames()["parcels"].assign(parcel_id=["A", None]))


@case("attr-blank-zone", **every(Fails(("zoning", "'zone' is empty", "row 1"))))
def blank_zone(folder: Path) -> Inputs:
    return town_with(folder, zoning=town_frames()["zoning"].assign(zone=["  ", "R-20"]))


@case(
    "attr-null-optional-values",
    validate=Works(output=("devices: ok",)),
    check=Works(findings={("SW101", "P-1"): "required", ("SW101", "P-2"): "pass"}),
)
def null_optionals(folder: Path) -> Inputs:
    attributes = proposal_frames()["proposals"].assign(
        land_use=[None, None], part_of_larger_plan=[None, None], construction_cost_usd=[None, None]
    )
    return proposals_with(
        folder,
        devices=_devices(serves_vehicle_traffic=None, device_type=None),
        proposals=attributes,
    )


@case(
    "attr-latin1-shapefile-without-cpg",
    validate=Works(output=("parcels: ok", "owner is not UTF-8 and was read as Latin-1")),
    check=Works(same_as_base=True),
)
def latin1(folder: Path) -> Inputs:
    """Owner names in Latin-1 (Müller, Peña) in a Shapefile whose .cpg was lost."""
    inputs = write_town(folder)
    parcels = town_frames()["parcels"].assign(owner=["Jürgen Müller", "Inés Peña"])
    parcels.to_file(folder / "parcels.shp", engine="pyogrio", encoding="ISO-8859-1")
    (folder / "parcels.cpg").unlink(missing_ok=True)
    assert "Müller".encode("latin-1") in (folder / "parcels.dbf").read_bytes()
    tables = {k: {"path": "town.gpkg", "layer": k} for k in town_frames() if k != "parcels"}
    return Inputs(
        manifest(folder, {"parcels": {"path": "parcels.shp"}, **tables}), inputs.proposals
    )


@case(
    "attr-latin1-geojson",
    validate=Works(output=("is not UTF-8 and was read as Latin-1",)),
    check=Works(findings={("SW101", "P-1"): "required", ("SW101", "P-2"): "pass"}),
)
def latin1_geojson(folder: Path) -> Inputs:
    """A GeoJSON file (UTF-8 by definition) holding Latin-1 bytes."""
    inputs = write_town(folder)
    path = folder / "proposals.geojson"
    d = proposal_frames()["disturbance"].assign(name=["Café Müller", "Peña"])
    d.to_file(path, driver="GeoJSON", engine="pyogrio")
    text = path.read_text(encoding="utf-8")
    path.write_bytes(text.encode("latin-1"))
    return Inputs(inputs.layers, path)


MARKUP = '<script>alert("x")</script><b>Smith</b> & Sons'


@case(
    "attr-markup-in-names",
    validate=Works(output=("proposals: 2",)),
    check=Works(same_as_base=True),
)
def markup(folder: Path) -> Inputs:
    parcels = town_frames()["parcels"].assign(owner=[MARKUP, "<img src=x onerror=alert(1)>"])
    props = proposal_frames()
    props["proposals"] = props["proposals"].assign(name=[MARKUP, "<i>patio</i>"])
    return write_town(folder, town=town_frames() | {"parcels": parcels}, proposals=props)


@case("attr-parcels-layer-empty", **every(Fails(("parcels", "has no features"))))
def parcels_empty(folder: Path) -> Inputs:
    return town_with(folder, parcels=town_frames()["parcels"].iloc[:0])


@case(
    "attr-integer-ids-join-text-ids",
    validate=Works(output=("proposals: 2 (101, 102)",)),
    check=Works(
        findings={("SW101", "101"): "required", ("SW102", "101"): "pass", ("SW105", "102"): "pass"}
    ),
)
def integer_ids(folder: Path) -> Inputs:
    """Layers export proposal_id as integers, the attribute table as text: they still join
    (a failed join would leave SW102 and SW105 at review for want of attributes)."""
    frames = proposal_frames()
    frames["disturbance"]["proposal_id"] = [101, 102]
    frames["devices"]["proposal_id"] = [101]
    frames["proposals"]["proposal_id"] = ["101", "102"]
    return proposals_with(folder, **frames)


@case(
    "attr-zone-padded-with-blanks",
    validate=Works(output=("zoning: ok",)),
    check=Works(findings={("SW101", "P-1"): "required", ("SW101", "P-2"): "pass"}),
)
def zone_padded(folder: Path) -> Inputs:
    """'R-10 ' as a fixed-width export writes it is zone R-10 (was: 250 sq ft, a pass)."""
    return town_with(folder, zoning=town_frames()["zoning"].assign(zone=["R-10 ", " R-20"]))


@case("attr-duplicate-ids-padded", **every(Fails(("parcels", "duplicate parcel_id", "'A'"))))
def duplicate_padded(folder: Path) -> Inputs:
    return town_with(folder, parcels=town_frames()["parcels"].assign(parcel_id=["A", "A  "]))


@case(
    "attr-zone-spelled-r10",
    validate=Works(output=("zoning: ok",)),
    check=Works(findings={("SW101", "P-1"): "required"}),
)
def zone_spelling(folder: Path) -> Inputs:
    return town_with(folder, zoning=town_frames()["zoning"].assign(zone=["r10", "R-20"]))
