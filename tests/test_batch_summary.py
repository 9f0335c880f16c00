"""Batch summary: identical parcel geometries screened once; missing layers named with the fix.

Issue 12: a condominium stack (one lot drawn once per unit, each with its own id) was
counted three times; a town on public water and sewer got 100% review with nothing saying
how to declare that it has no wells.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd
import shapely
from click.testing import CliRunner

from gis_sw.batch.run import RunOptions, rows_equal, screen_layers
from gis_sw.batch.synthetic import synthetic_frames
from gis_sw.cli import cli
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def stacked_frames(n: int = 60) -> tuple[dict[str, gpd.GeoDataFrame], gpd.GeoDataFrame]:
    """A synthetic town whose parcel 5 is drawn three times (ids P0000005, U-2, U-3; the
    last copy's ring starts at another vertex and runs the other way)."""
    frames = synthetic_frames(n, seed=2)
    parcels = frames["parcels"]
    lot = parcels.geometry.iloc[5]
    turned = shapely.Polygon(shapely.get_coordinates(shapely.reverse(lot))[1:].tolist())
    extra = gpd.GeoDataFrame({"parcel_id": ["U-2", "U-3"]}, geometry=[lot, turned], crs=CRS)
    frames["parcels"] = gpd.GeoDataFrame(
        pd.concat([parcels, extra], ignore_index=True), geometry="geometry", crs=CRS
    )
    return frames, parcels


def test_identical_geometries_are_screened_once_with_every_id(ruleset: Ruleset) -> None:
    frames, plain = stacked_frames()
    assert frames["parcels"].geometry.iloc[-1].equals(plain.geometry.iloc[5])
    stacked = screen_layers(make_layerset(CRS, frames), ruleset, options=RunOptions(chunk_size=7))
    alone = screen_layers(
        make_layerset(CRS, frames | {"parcels": plain}), ruleset, options=RunOptions(chunk_size=7)
    )
    rows = stacked.rows
    assert len(rows) == len(plain)  # not two more
    assert rows["parcel_id"].tolist() == plain["parcel_id"].tolist()
    lot = rows.set_index("parcel_id").loc["P0000005"]
    assert lot["parcel_ids"] == "P0000005;U-2;U-3"
    assert "same geometry as parcel(s) U-2, U-3: screened once" in lot["notes"]
    others = rows[rows["parcel_id"] != "P0000005"]
    assert (others["parcel_ids"] == others["parcel_id"]).all()
    figures = [c for c in rows.columns if c not in ("parcel_ids", "notes")]
    assert rows_equal(rows[figures], alone.rows[figures])  # the same answer, counted once
    problems = stacked.prepared.problems
    same = problems[problems["problem"] == "same geometry as another parcel"]
    assert same["parcel_id"].tolist() == ["U-2", "U-3"]
    assert same["row"].tolist() == [len(plain), len(plain) + 1]
    assert same["value"].tolist() == ["row 5, parcel_id P0000005"] * 2


def test_cli_counts_a_stack_once_in_the_summary(tmp_path: Path) -> None:
    frames, plain = stacked_frames(30)
    town = tmp_path / "town.gpkg"
    for kind, layer in frames.items():
        layer.to_file(town, layer=kind, driver="GPKG", engine="pyogrio")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["batch", "--layers", str(town), "--out", str(out), "--no-map", "--quick"]
    )
    assert result.exit_code == 0, result.output
    summary = pd.read_csv(out / "summary.csv")
    assert summary.loc[summary["table"] == "parcels", "count"].sum() == len(plain)
    assert len(gpd.read_parquet(out / "parcels.parquet")) == len(plain)
    assert "2 parcel(s) with same geometry as another parcel (U-2, U-3)" in result.output


def test_missing_layers_are_named_with_how_to_declare_them(tmp_path: Path) -> None:
    frames = synthetic_frames(30, seed=2)
    del frames["wells"], frames["septic_fields"]
    n = len(frames["parcels"])
    town = tmp_path / "town.gpkg"
    for kind, layer in frames.items():
        layer.to_file(town, layer=kind, driver="GPKG", engine="pyogrio")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["batch", "--layers", str(town), "--out", str(out), "--no-map", "--quick"]
    )
    assert result.exit_code == 0, result.output
    rows = gpd.read_parquet(out / "parcels.parquet")
    reviewed = int((rows["screen"] == "review").sum())
    assert reviewed == n  # every parcel: a layer its screening reads is missing
    assert (
        f"{n} parcel(s) are review because these layers were not provided: wells, "
        "septic_fields." in result.output
    )
    assert "[wells]\n  none = true    # the town has no private wells (public water)" in (
        result.output
    )
    assert "[septic_fields]\n  none = true" in result.output
    summary = pd.read_csv(out / "summary.csv")
    missing = summary[summary["table"] == "missing_layer"]
    assert missing["screen"].tolist() == ["septic_fields", "wells"]
    assert missing["outcome"].tolist() == ["review", "review"]
    assert missing["count"].tolist() == [n, n]
    assert summary.loc[summary["table"] == "parcels", "count"].sum() == n


def test_no_missing_layer_note_when_every_layer_is_given(tmp_path: Path) -> None:
    town = tmp_path / "town.gpkg"
    for kind, layer in synthetic_frames(30, seed=2).items():
        layer.to_file(town, layer=kind, driver="GPKG", engine="pyogrio")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["batch", "--layers", str(town), "--out", str(out), "--no-map", "--quick"]
    )
    assert result.exit_code == 0, result.output
    assert "were not provided" not in result.output
    summary = pd.read_csv(out / "summary.csv")
    assert "missing_layer" not in set(summary["table"])
