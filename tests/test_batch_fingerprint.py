"""What the resume manifest records of a run's inputs, and which differences it calls a change."""

from __future__ import annotations

import copy
import hashlib
import os
from pathlib import Path
from typing import Any

import geopandas as gpd
import pytest
import shapely

from gis_sw.batch.fingerprint import describe_change, input_files, layer_hash, run_fingerprint
from gis_sw.errors import OutputError
from gis_sw.layers.build import make_layerset
from gis_sw.layers.manifest import LayerEntry, Manifest
from gis_sw.outputs.atomic import input_identities, refuse_inputs
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def parcels(ids: list[str]) -> gpd.GeoDataFrame:
    boxes = [shapely.box(i * 100, 0, i * 100 + 100, 100) for i in range(len(ids))]
    return gpd.GeoDataFrame({"parcel_id": ids}, geometry=boxes, crs=CRS)


def test_layer_hash_sees_ids_geometry_dtype_and_missing_geometry() -> None:
    base = parcels(["A", "B"])
    same = parcels(["A", "B"])
    assert layer_hash(base) == layer_hash(same)
    rekeyed = parcels(["A", "C"])
    moved = base.set_geometry(base.translate(0.01, 0))
    none = base.copy()
    none.loc[1, "geometry"] = None
    empty = base.copy()
    empty.loc[1, "geometry"] = shapely.Polygon()
    typed = base.assign(parcel_id=base["parcel_id"].astype("string"))
    hashes = {layer_hash(f) for f in (base, rekeyed, moved, none, empty, typed)}
    assert len(hashes) == 6


@pytest.fixture
def town_files(tmp_path: Path) -> tuple[Manifest, Path]:
    for name in ("town.gpkg", "parcels.shp", "parcels.dbf", "parcels.shx", "parcels.prj"):
        (tmp_path / name).write_bytes(b"data " + name.encode())
    (tmp_path / "dem.tif").write_bytes(b"raster")
    (tmp_path / "layers.toml").write_text("[parcels]\n", encoding="utf-8")
    (tmp_path / "proposals.gpkg").write_bytes(b"proposals")
    entries = {
        "parcels": LayerEntry(kind="parcels", path=tmp_path / "parcels.shp"),
        "zoning": LayerEntry(kind="zoning", path=tmp_path / "town.gpkg", layer="zoning"),
        "wetlands": LayerEntry(kind="wetlands", path=tmp_path / "town.gpkg", layer="wetlands"),
        "dem": LayerEntry(kind="dem", path=tmp_path / "dem.tif"),
        "soils": LayerEntry(kind="soils", postgis="postgresql://u@h/db", table="soils"),
    }
    return Manifest(source=tmp_path / "layers.toml", name="t", entries=entries), tmp_path


def test_input_files_name_every_file_a_run_reads(
    town_files: tuple[Manifest, Path], ruleset: Ruleset
) -> None:
    manifest, folder = town_files
    files = input_files(manifest, ruleset=ruleset, proposals=folder / "proposals.gpkg")
    assert files == {
        "the layers manifest (layers.toml)": folder / "layers.toml",
        "the parcels layer (parcels.shp)": folder / "parcels.shp",
        "the parcels layer (parcels.dbf)": folder / "parcels.dbf",
        "the parcels layer (parcels.shx)": folder / "parcels.shx",
        "the parcels layer (parcels.prj)": folder / "parcels.prj",
        "the zoning, wetlands layers (town.gpkg)": folder / "town.gpkg",
        "the dem raster (dem.tif)": folder / "dem.tif",
        "the proposals file (proposals.gpkg)": folder / "proposals.gpkg",
    }
    only_batch = input_files(manifest, ruleset=ruleset, proposals=None, kinds=("parcels",))
    assert set(only_batch) == {
        "the layers manifest (layers.toml)",
        *(f"the parcels layer (parcels.{s})" for s in ("shp", "dbf", "shx", "prj")),
    }


def test_a_hard_link_to_a_shapefile_sidecar_is_refused(
    town_files: tuple[Manifest, Path], ruleset: Ruleset, tmp_path: Path
) -> None:
    manifest, folder = town_files
    out = tmp_path / "out"
    out.mkdir()
    os.link(folder / "parcels.dbf", out / "problems.csv")
    identities = input_identities(input_files(manifest, ruleset=ruleset, proposals=None))
    with pytest.raises(OutputError, match=r"is the parcels layer \(parcels.dbf\), an input"):
        refuse_inputs([out / "summary.csv", out / "problems.csv"], identities)
    refuse_inputs([out / "summary.csv"], identities)  # a new name is fine


@pytest.fixture
def fingerprint(town_files: tuple[Manifest, Path], ruleset: Ruleset) -> dict[str, Any]:
    manifest, folder = town_files
    layers = make_layerset(CRS, {"parcels": parcels(["A", "B"])})
    return run_fingerprint(
        layers,
        ruleset,
        files=input_files(manifest, ruleset=ruleset, proposals=folder / "proposals.gpkg"),
        proposals=folder / "proposals.gpkg",
        chunk_size=100,
        quick=False,
        halo_ft=100.0,
        chunks=("abc",),
    )


def test_the_fingerprint_records_hashes_of_what_was_read(fingerprint: dict[str, Any]) -> None:
    files = fingerprint["files"]
    toml = files["the layers manifest (layers.toml)"]
    assert toml["sha256"] == hashlib.sha256(b"[parcels]\n").hexdigest()
    assert toml["size"] == 10
    assert "sha256" not in files["the dem raster (dem.tif)"]  # big binaries: size and time
    assert fingerprint["proposals"] == hashlib.sha256(b"proposals").hexdigest()
    as_read = make_layerset(CRS, {"parcels": parcels(["A", "B"])}).vectors["parcels"]
    assert fingerprint["layers"] == {"parcels": layer_hash(as_read)}


def _changed(fingerprint: dict[str, Any], what: str, key: str, value: object) -> dict[str, Any]:
    new = copy.deepcopy(fingerprint)
    new["files"][what][key] = value
    return new


def test_touching_a_layer_file_is_no_change_but_touching_a_raster_is(
    fingerprint: dict[str, Any],
) -> None:
    assert describe_change(fingerprint, copy.deepcopy(fingerprint)) is None
    layer = "the zoning, wetlands layers (town.gpkg)"
    raster = "the dem raster (dem.tif)"
    assert describe_change(fingerprint, _changed(fingerprint, layer, "mtime_ns", 1)) is None
    assert describe_change(fingerprint, _changed(fingerprint, raster, "mtime_ns", 1)) == raster
    assert describe_change(fingerprint, _changed(fingerprint, layer, "size", 1)) == layer
    manifest = "the layers manifest (layers.toml)"
    assert describe_change(fingerprint, _changed(fingerprint, manifest, "sha256", "0")) == manifest
    moved = _changed(fingerprint, layer, "path", "/elsewhere/town.gpkg")
    assert describe_change(fingerprint, moved) is None  # the same files in a moved folder


def test_every_other_difference_is_named(fingerprint: dict[str, Any]) -> None:
    for key, said in (
        ("proposals", "the proposals file"),
        ("parcels", "the parcels (or their chunk plan)"),
        ("gis_sw", f"gis-sw changed ({fingerprint['gis_sw']} then, X now)"),
    ):
        new = copy.deepcopy(fingerprint)
        new[key] = "X"
        assert describe_change(fingerprint, new) == said
    new = copy.deepcopy(fingerprint)
    new["options"]["quick"] = True
    assert describe_change(fingerprint, new) == "--quick changed (False then, True now)"
    new = copy.deepcopy(fingerprint)
    new["layers"]["wells"] = "h"
    assert describe_change(fingerprint, new) == "the wells layer was added"
    assert describe_change(new, fingerprint) == "the wells layer is no longer given"
