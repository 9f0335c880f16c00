"""Proposal files as real exports write them (issue 12 item 4, issue 14).

Shapefile column cuts and zipped Shapefiles, attributes on the disturbance layer and in the
table, float ids, devices of no proposal, negative and infinite costs, time-zone dates,
dates pandas cannot hold, a named pipe, a 300-character id.
"""

from __future__ import annotations

import os
import warnings
import zipfile
from pathlib import Path

import geopandas as gpd
import pandas as pd

from corpus import Fails, Inputs, Works, case, proposal_frames, proposals_with, write_town

PROPOSAL_COMMANDS = ("validate", "check", "batch")
BASE_SW101 = {("SW101", "P-1"): "required", ("SW101", "P-2"): "pass"}


def fail(*names: str) -> dict[str, Fails]:
    return {c: Fails(names) for c in PROPOSAL_COMMANDS}


def _shapefile(folder: Path, frame: gpd.GeoDataFrame, name: str = "lod") -> Path:
    """``frame`` as a Shapefile: GDAL cuts column names to 10 characters."""
    path = folder / f"{name}.shp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Normalized/laundered field name"
        frame.to_file(path, engine="pyogrio")
    return path


def _with_proposals(folder: Path, proposals: Path) -> Inputs:
    town = write_town(folder)
    return Inputs(town.layers, proposals)


@case(
    "proposals-shapefile-cut-names",
    validate=Works(output=("column 'proposal_i' read as 'proposal_id'", "proposals: 2")),
    check=Works(findings=BASE_SW101 | {("SW102", "P-1"): "pass", ("SW102", "P-2"): "pass"}),
)
def shapefile_cut(folder: Path) -> Inputs:
    """``proposal_i`` and ``part_of_la``: read as proposal_id and part_of_larger_plan
    (before, the whole file became one proposal named 'lod' at 334 sq ft)."""
    d = proposal_frames()["disturbance"].assign(part_of_larger_plan=["no", "no"])
    return _with_proposals(folder, _shapefile(folder, d))


@case(
    "proposals-zipped-shapefile-cut-names",
    validate=Works(output=("column 'proposal_i' read as 'proposal_id'", "proposals: 2")),
    check=Works(findings=BASE_SW101),
)
def zipped_shapefile(folder: Path) -> Inputs:
    shp = _shapefile(folder, proposal_frames()["disturbance"])
    archive = folder / "lod.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for part in sorted(folder.glob("lod.*")):
            if part.suffix != ".zip":
                zipped.write(part, part.name)
    for part in folder.glob("lod.*"):
        if part.suffix != ".zip":
            part.unlink()
    assert not shp.exists()
    return _with_proposals(folder, archive)


@case(
    "proposals-shapefile-ambiguous-cut",
    **fail("constructi", "construc_1", "construction_start", "construction_end", "GeoPackage"),
)
def shapefile_ambiguous(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"].assign(
        construction_start=["2026-05-01"] * 2, construction_end=["2026-08-01"] * 2
    )
    return _with_proposals(folder, _shapefile(folder, d))


@case(
    "proposals-id-column-misspelt",
    **fail("required column 'proposal_id' is missing", "'propsal_id'", "rename"),
)
def misspelt_id(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"].rename(columns={"proposal_id": "propsal_id"})
    path = folder / "lod.geojson"
    d.to_file(path, engine="pyogrio")
    return _with_proposals(folder, path)


@case(
    "proposals-device-of-no-proposal",
    **fail("devices", "device_id D-1 (proposal_id 'P-9')", "the proposals drawn are P-1, P-2"),
)
def orphan_device(folder: Path) -> Inputs:
    """Before: a phantom proposal P-9 with SW2xx findings, exit 0."""
    return proposals_with(folder, devices=proposal_frames()["devices"].assign(proposal_id="P-9"))


@case(
    "proposals-float-ids-in-table",
    validate=Works(output=("proposals: 2 (101, 102)",)),
    check=Works(findings={("SW102", "101"): "pass", ("SW105", "102"): "pass"}),
)
def float_ids(folder: Path) -> Inputs:
    """Layers give 101 (integer), the table 101.0 (float): one proposal, attributes joined
    (split, 101.0 would be a proposal of its own and 101's SW102/SW105 review)."""
    frames = proposal_frames()
    frames["disturbance"]["proposal_id"] = [101, 102]
    frames["devices"]["proposal_id"] = [101.0]
    frames["proposals"]["proposal_id"] = [101.0, 102.0]
    return proposals_with(folder, **frames)


@case(
    "proposals-attributes-on-disturbance-layer",
    validate=Works(output=("proposals: 2",)),
    check=Works(same_as_base=True),
)
def attributes_on_layer(folder: Path) -> Inputs:
    """No proposals table: its columns on the GeoPackage's disturbance layer are read
    (before, they were ignored and SW102/SW103/SW105 went to review)."""
    frames = proposal_frames()
    table = frames["proposals"].drop(columns="geometry").set_index("proposal_id")
    d = frames["disturbance"].join(table, on="proposal_id")
    return proposals_with(folder, disturbance=d, proposals=None)


@case(
    "proposals-attributes-conflict",
    **fail("P-1 part_of_larger_plan = 'yes' on disturbance, 'no' in the table"),
)
def attributes_conflict(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"].assign(part_of_larger_plan=["yes", "no"])
    return proposals_with(folder, disturbance=d)


@case(
    "proposals-negative-cost",
    **fail("construction_cost_usd", "negative", "proposal_id P-1 = -20000.0"),
)
def negative_cost(folder: Path) -> Inputs:
    table = proposal_frames()["proposals"].assign(construction_cost_usd=[-20_000.0, 5_000.0])
    return proposals_with(folder, proposals=table)


@case(
    "proposals-infinite-cost",
    **fail("construction_cost_usd", "infinite", "proposal_id P-2 = inf"),
)
def infinite_cost(folder: Path) -> Inputs:
    table = proposal_frames()["proposals"].assign(construction_cost_usd=[20_000.0, float("inf")])
    return proposals_with(folder, proposals=table)


@case(
    "proposals-datetime-utc",
    validate=Works(output=("disturbance: ok",)),
    check=Works(findings=BASE_SW101 | {("SW301", "P-1"): "pass"}),
)
def datetime_utc(folder: Path) -> Inputs:
    """GeoPackage DATETIME fields in UTC, as QGIS and ArcGIS write them (a tz-aware dtype)."""
    d = proposal_frames()["disturbance"]
    d["start_date"] = pd.to_datetime(["2026-05-01T04:00:00Z"] * 2)
    d["end_date"] = pd.to_datetime(["2026-08-01T04:00:00Z"] * 2)
    assert isinstance(d["start_date"].dtype, pd.DatetimeTZDtype)
    return proposals_with(folder, disturbance=d)


@case(
    "proposals-text-dates-z-and-offsets",
    validate=Works(output=("proposals: 2",)),
    check=Works(findings=BASE_SW101),
)
def text_dates_offsets(folder: Path) -> Inputs:
    table = proposal_frames()["proposals"].assign(
        construction_start=["2026-05-01T00:00:00Z", "2026-05-01T00:00:00-04:00"],
        construction_end=["2026-08-01T00:00:00+02:00", "2026-08-01T12:00:00-05:00"],
    )
    return proposals_with(folder, proposals=table)


@case(
    "proposals-date-beyond-2262",
    **fail("end_date", "disturbance_id L-2 = '2300-01-01'", "1677-09-22 to 2262-04-11"),
)
def far_date(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"]
    d["end_date"] = ["2026-08-01", "2300-01-01"]
    return proposals_with(folder, disturbance=d)


@case(
    "proposals-named-pipe",
    validate=Fails(("lod.gpkg", "is a named pipe")),
    check=Fails(("lod.gpkg", "is a named pipe")),
)
def named_pipe(folder: Path) -> Inputs:
    """A FIFO nobody writes to: reading it would hang for ever."""
    pipe = folder / "lod.gpkg"
    os.mkfifo(pipe)
    return _with_proposals(folder, pipe)


LONG_ID = "P-" + "x" * 298


@case(
    "proposals-300-character-id",
    validate=Works(output=("proposals: 2",)),
    check=Works(findings={("SW101", LONG_ID): "required", ("SW101", "P-2"): "pass"}),
)
def long_id(folder: Path) -> Inputs:
    frames = proposal_frames()
    for kind in ("disturbance", "devices", "proposals"):
        frames[kind]["proposal_id"] = frames[kind]["proposal_id"].replace("P-1", LONG_ID)
    assert len(LONG_ID) == 300
    return proposals_with(folder, **frames)
