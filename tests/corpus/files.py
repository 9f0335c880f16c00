"""Files: missing, empty, truncated, not geodata, shapefile parts missing, folders for files.

Unwritable and full output folders need a mount and live in the test module
(:mod:`test_corpus`), which builds them with these inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import rasterio
from rasterio.transform import from_origin

from corpus import (
    X0,
    Y0,
    Fails,
    Inputs,
    Works,
    case,
    every,
    manifest,
    proposal_frames,
    town_frames,
    write_town,
)

VALIDATE_CHECK_SITING = ("validate", "check", "siting")


def _parcels_shapefile(folder: Path) -> Inputs:
    """The good town with parcels as a Shapefile named in a manifest."""
    good = write_town(folder)
    frames = town_frames()
    frames["parcels"].to_file(folder / "parcels.shp", engine="pyogrio")
    tables = {kind: {"path": "town.gpkg", "layer": kind} for kind in frames if kind != "parcels"}
    path = manifest(folder, {"parcels": {"path": "parcels.shp"}, **tables})
    return Inputs(path, good.proposals)


@case(
    "layers-file-missing",
    **{c: Fails(("nothing.toml", "no such file or folder")) for c in VALIDATE_CHECK_SITING},
    batch=Fails(("nothing.toml", "does not exist")),
)
def layers_missing(folder: Path) -> Inputs:
    good = write_town(folder)
    return Inputs(folder / "nothing.toml", good.proposals)


@case(
    "proposals-file-missing",
    validate=Fails(("nothing.gpkg", "no such proposals file")),
    check=Fails(("nothing.gpkg", "no such proposals file")),
    batch=Fails(("nothing.gpkg", "does not exist")),
)
def proposals_missing(folder: Path) -> Inputs:
    good = write_town(folder)
    return Inputs(good.layers, folder / "nothing.gpkg")


@case("layers-gpkg-empty-file", **every(Fails(("town.gpkg", "not a readable GeoPackage"))))
def layers_empty(folder: Path) -> Inputs:
    good = write_town(folder)
    good.layers.write_bytes(b"")
    return good


@case(
    "proposals-gpkg-empty-file",
    validate=Fails(("proposals.gpkg", "not a readable GeoPackage")),
    check=Fails(("proposals.gpkg", "not a readable GeoPackage")),
    batch=Fails(("proposals.gpkg", "not a readable GeoPackage")),
)
def proposals_empty(folder: Path) -> Inputs:
    good = write_town(folder)
    good.proposals.write_bytes(b"")
    return good


@case("layers-manifest-empty-file", **every(Fails(("parcels", "required layer is not provided"))))
def manifest_empty(folder: Path) -> Inputs:
    good = write_town(folder)
    path = folder / "layers.toml"
    path.write_bytes(b"")
    return Inputs(path, good.proposals)


@case("layers-gpkg-truncated", **every(Fails(("town.gpkg",))))
def layers_truncated(folder: Path) -> Inputs:
    good = write_town(folder)
    data = good.layers.read_bytes()
    good.layers.write_bytes(data[: len(data) // 3])
    return good


@case("parcels-shp-truncated", **every(Fails(("parcels.shp",))))
def shapefile_truncated(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    shp = folder / "parcels.shp"
    data = shp.read_bytes()
    shp.write_bytes(data[: len(data) - 40])
    return inputs


@case(
    "proposals-geojson-truncated",
    validate=Fails(("proposals.geojson",)),
    check=Fails(("proposals.geojson",)),
    batch=Fails(("proposals.geojson",)),
)
def geojson_truncated(folder: Path) -> Inputs:
    good = write_town(folder)
    path = folder / "proposals.geojson"
    proposal_frames()["disturbance"].to_file(path, driver="GeoJSON", engine="pyogrio")
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    return Inputs(good.layers, path)


@case("layers-gpkg-is-text", **every(Fails(("town.gpkg", "not a readable GeoPackage"))))
def layers_not_geodata(folder: Path) -> Inputs:
    good = write_town(folder)
    good.layers.write_text("parcel_id,zone\nA,R-10\n", encoding="utf-8")
    return good


@case("layers-source-is-csv", **every(Fails(("town.csv", "not a layers source"))))
def layers_csv(folder: Path) -> Inputs:
    good = write_town(folder)
    path = folder / "town.csv"
    path.write_text("parcel_id,zone\nA,R-10\n", encoding="utf-8")
    return Inputs(path, good.proposals)


@case("layers-manifest-not-toml", **every(Fails(("layers.toml", "not valid TOML"))))
def manifest_garbage(folder: Path) -> Inputs:
    good = write_town(folder)
    path = folder / "layers.toml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n[parcels\npath = ")
    return Inputs(path, good.proposals)


@case("parcels-shp-is-png", **every(Fails(("parcels.shp",))))
def shapefile_png(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    for suffix in (".shx", ".dbf", ".prj", ".cpg"):
        (folder / f"parcels{suffix}").unlink(missing_ok=True)
    (folder / "parcels.shp").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    return inputs


@case(
    "proposals-is-csv",
    validate=Fails(("proposals.csv",)),
    check=Fails(("proposals.csv",)),
    batch=Fails(("proposals.csv",)),
)
def proposals_csv(folder: Path) -> Inputs:
    good = write_town(folder)
    path = folder / "proposals.csv"
    path.write_text("proposal_id,area\nP-1,134\n", encoding="utf-8")
    return Inputs(good.layers, path)


@case("parcels-shp-without-dbf", **every(Fails(("parcels.shp",))))
def shapefile_no_dbf(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    (folder / "parcels.dbf").unlink()
    return inputs


@case("parcels-shp-without-shx", **every(Fails(("parcels.shp",))))
def shapefile_no_shx(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    (folder / "parcels.shx").unlink()
    return inputs


@case("parcels-shp-without-prj", **every(Fails(("parcels.shp", "has no CRS"))))
def shapefile_no_prj(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    (folder / "parcels.prj").unlink()
    return inputs


@case(
    "parcels-shp-without-prj-crs-in-manifest",
    validate=Works(output=("parcels: ok", "Result: every layer is valid.")),
    check=Works(same_as_base=True),
)
def shapefile_no_prj_manifest_crs(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    (folder / "parcels.prj").unlink()
    text = inputs.layers.read_text(encoding="utf-8")
    inputs.layers.write_text(
        text.replace("[parcels]\n", '[parcels]\ncrs = "EPSG:2260"\n'), encoding="utf-8"
    )
    return inputs


@case("parcels-path-is-a-folder", **every(Fails(("parcels.shp",))))
def shapefile_folder(folder: Path) -> Inputs:
    inputs = _parcels_shapefile(folder)
    for suffix in (".shp", ".shx", ".dbf", ".prj", ".cpg"):
        (folder / f"parcels{suffix}").unlink(missing_ok=True)
    (folder / "parcels.shp").mkdir()
    return inputs


@case("layers-folder-without-manifest", **every(Fails(("without layers.toml",))))
def layers_folder(folder: Path) -> Inputs:
    good = write_town(folder)
    empty = folder / "town"
    empty.mkdir()
    return Inputs(empty, good.proposals)


@case(
    "proposals-path-is-a-folder",
    validate=Fails(("proposals.gpkg",)),
    check=Fails(("proposals.gpkg",)),
    batch=Fails(("proposals.gpkg", "is a directory")),
)
def proposals_folder(folder: Path) -> Inputs:
    good = write_town(folder)
    good.proposals.unlink()
    good.proposals.mkdir()
    return good


@case(
    "layers-gpkg-without-required-layers",
    **every(Fails(("zoning", "required layer is not provided"))),
)
def layers_without_zoning(folder: Path) -> Inputs:
    frames = town_frames()
    del frames["zoning"]
    return write_town(folder, town=frames)


@case("wetlands-unreadable-not-dropped", **every(Fails(("wetlands.geojson", "wetlands"))))
def wetlands_unreadable(folder: Path) -> Inputs:
    """An optional layer that cannot be read stops the run: dropping it would pass SW106."""
    inputs = write_town(folder)
    (folder / "wetlands.geojson").write_text('{"type": "FeatureCollection", "feat', "utf-8")
    tables = {k: {"path": "town.gpkg", "layer": k} for k in town_frames() if k != "wetlands"}
    path = manifest(folder, {**tables, "wetlands": {"path": "wetlands.geojson"}})
    return Inputs(path, inputs.proposals)


@case("dem-tif-truncated", **every(Fails(("dem.tif", "not a readable raster", "Fix:"))))
def dem_truncated(folder: Path) -> Inputs:
    """A GeoTIFF cut short, beside the town GeoPackage."""
    inputs = write_town(folder)
    header = b"II*\x00\x08\x00\x00\x00" + bytes(64)
    (folder / "dem.tif").write_bytes(header)
    return inputs


@case(
    "proposals-gpkg-truncated",
    validate=Fails(("proposals.gpkg",)),
    check=Fails(("proposals.gpkg",)),
    batch=Fails(("proposals.gpkg",)),
)
def proposals_truncated(folder: Path) -> Inputs:
    inputs = write_town(folder)
    data = inputs.proposals.read_bytes()
    inputs.proposals.write_bytes(data[: len(data) // 2])
    return inputs


@case("dem-tif-without-crs", **every(Fails(("dem.tif", "CRS"))))
def dem_without_crs(folder: Path) -> Inputs:
    """A 4 x 4 DEM over the town with no CRS in the GeoTIFF."""
    inputs = write_town(folder)
    profile = {
        "driver": "GTiff",
        "width": 4,
        "height": 4,
        "count": 1,
        "dtype": "float32",
        "transform": from_origin(X0 - 50, Y0 + 150, 100, 100),
    }
    with rasterio.open(folder / "dem.tif", "w", **profile) as dst:
        dst.write(np.full((1, 4, 4), 300.0, dtype="float32"))
    return inputs
