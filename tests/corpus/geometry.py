"""Geometry: null, empty, invalid (bow-tie, self-touching ring, spike), Z and M, multi-part,
GeometryCollection, a point in a polygon layer, a 1e-6 sq ft polygon, 50,000 vertices."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
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
    every,
    manifest,
    proposal_frames,
    proposals_with,
    town_frames,
    town_with,
    write_town,
)


def ring(*points: tuple[float, float]) -> shapely.Polygon:
    """A polygon from points relative to the town's corner, not repaired."""
    return shapely.Polygon([(X0 + x, Y0 + y) for x, y in points])


def parcels_with(b: shapely.Geometry | None = None, a: shapely.Geometry | None = None) -> dict:
    parcels = town_frames()["parcels"]
    geoms = list(parcels.geometry)
    if a is not None:
        geoms[0] = a
    if b is not None:
        geoms[1] = b
    return {"parcels": parcels.set_geometry(gpd.GeoSeries(geoms, crs=CRS))}


def _none_b() -> dict:
    parcels = town_frames()["parcels"]
    return {"parcels": parcels.set_geometry(gpd.GeoSeries([parcels.geometry[0], None], crs=CRS))}


@case("geometry-null-parcel", **every(Fails(("parcels", "no geometry", "parcel_id B"))))
def null_parcel(folder: Path) -> Inputs:
    return town_with(folder, **_none_b())


@case("geometry-empty-parcel", **every(Fails(("parcels", "no geometry", "parcel_id B"))))
def empty_parcel(folder: Path) -> Inputs:
    return town_with(folder, **parcels_with(b=shapely.Polygon()))


@case(
    "geometry-null-disturbance",
    validate=Fails(("disturbance", "no geometry", "row 2")),
    check=Fails(("disturbance", "no geometry", "row 2")),
    batch=Fails(("disturbance", "no geometry", "row 2")),
)
def null_disturbance(folder: Path) -> Inputs:
    frames = proposal_frames()
    d = frames["disturbance"]
    d = d.set_geometry(gpd.GeoSeries([d.geometry[0], None], crs=CRS))
    return proposals_with(folder, disturbance=d)


BOWTIE = ring((100, 0), (300, 100), (300, 0), (100, 100), (100, 0))


@case(
    "geometry-bowtie-parcel-repaired",
    validate=Works(output=("repaired: 1 invalid geometries with make_valid: parcel_id B",)),
    check=Works(findings={("SW101", "P-2"): "pass", ("SW101", "P-1"): "required"}),
    siting=Works(siting={"A": ("review", 6400.0)}),
    batch=Works(findings={("SW101", "P-2"): "pass", ("SW101", "P-1"): "required"}),
)
def bowtie(folder: Path) -> Inputs:
    return town_with(folder, **parcels_with(b=BOWTIE))


@case(
    "geometry-bowtie-parcel-strict",
    validate=Fails(("parcels", "invalid geometr", "parcel_id B", "Self-intersection")),
)
def bowtie_strict(folder: Path) -> Inputs:
    inputs = town_with(folder, **parcels_with(b=BOWTIE))
    return Inputs(inputs.layers, inputs.proposals, strict=True)


@case(
    "geometry-self-touching-ring-repaired",
    validate=Works(output=("repaired: 1 invalid geometries with make_valid: parcel_id A",)),
    # the cut-out stays cut out (issue 14): its base line is 10.00 ft from device D-1, and
    # the siting polygon is the 80 x 80 inner square less the points within 10 ft of the
    # triangle, 5,049.96 sq ft by hand (tests/test_lawdev_siting.py)
    check=Works(findings={("SW205", "D-1"): "pass"}),
    siting=Works(siting={"A": ("review", 5049.96)}),
)
def self_touching(folder: Path) -> Inputs:
    """Parcel A's ring touches itself at (50, 100), cutting out a 400 sq ft triangle."""
    shell = ring(
        (0, 0), (100, 0), (100, 100), (50, 100), (40, 60), (60, 60), (50, 100), (0, 100), (0, 0)
    )
    assert not shell.is_valid
    return town_with(folder, **parcels_with(a=shell))


@case(
    "geometry-spike-repaired",
    validate=Works(output=("repaired: 1 invalid geometries with make_valid: parcel_id A",)),
    check=Works(same_as_base=True),
    siting=Works(siting={"A": ("review", 6400.0)}),
)
def spike(folder: Path) -> Inputs:
    """Parcel A with a zero-width spike 50 ft out of its east side."""
    spiked = ring((0, 0), (100, 0), (100, 50), (150, 50), (100, 50), (100, 100), (0, 100))
    assert not spiked.is_valid
    return town_with(folder, **parcels_with(a=spiked))


@case(
    "geometry-z-values",
    validate=Works(output=("Z/M values dropped", "Result: every layer is valid.")),
    check=Works(same_as_base=True),
)
def z_values(folder: Path) -> Inputs:
    parcels = town_frames()["parcels"]
    z = shapely.force_3d(parcels.geometry.to_numpy(), z=412.5)
    props = proposal_frames()
    d = props["disturbance"]
    d = d.set_geometry(gpd.GeoSeries(shapely.force_3d(d.geometry.to_numpy(), 400.0), crs=CRS))
    return write_town(
        folder,
        town=town_frames() | {"parcels": parcels.set_geometry(gpd.GeoSeries(z, crs=CRS))},
        proposals=props | {"disturbance": d},
    )


@case(
    "geometry-m-values-csv-wkt",
    validate=Works(output=("Z/M values dropped", "Result: every layer is valid.")),
    check=Works(same_as_base=True),
)
def m_values(folder: Path) -> Inputs:
    """Parcels as CSV with WKT ``POLYGON M`` (GDAL's writers refuse M from geopandas)."""
    inputs = write_town(folder)
    parcels = town_frames()["parcels"]
    wkt = [
        g.wkt.replace("POLYGON ((", "POLYGON M ((").replace(", ", " 7, ").replace("))", " 7))")
        for g in parcels.geometry
    ]
    pd.DataFrame({"WKT": wkt, "parcel_id": parcels["parcel_id"]}).to_csv(
        folder / "parcels.csv", index=False
    )
    tables: dict[str, dict[str, str]] = {"parcels": {"path": "parcels.csv", "crs": CRS}}
    for kind in town_frames():
        if kind != "parcels":
            tables[kind] = {"path": "town.gpkg", "layer": kind}
    return Inputs(manifest(folder, tables), inputs.proposals)


@case(
    "geometry-multi-part",
    validate=Works(output=("Result: every layer is valid.",)),
    check=Works(same_as_base=True),
    siting=Works(siting={"B": ("review", None)}),
)
def multi_part(folder: Path) -> Inputs:
    """Parcel B in two parts; P-1's disturbance in two parts of the same 134 sq ft."""
    b = shapely.MultiPolygon([box(100, 0, 100, 100), box(200, 0, 100, 100)])
    props = proposal_frames()
    d = props["disturbance"]
    p1 = shapely.MultiPolygon([box(86.6, 0, 13.4, 5), box(86.6, 5, 13.4, 5)])
    d = d.set_geometry(gpd.GeoSeries([p1, d.geometry[1]], crs=CRS))
    inputs = write_town(
        folder, town=town_frames() | parcels_with(b=b), proposals=props | {"disturbance": d}
    )
    return Inputs(inputs.layers, inputs.proposals, parcel="B")


@case(
    "geometry-collection-parcel",
    **every(Fails(("parcels", "GeometryCollection", "parcel_id B"))),
)
def collection(folder: Path) -> Inputs:
    gc = shapely.GeometryCollection([box(100, 0, 200, 100), shapely.Point(X0 + 150, Y0 + 50)])
    return town_with(folder, **parcels_with(b=gc))


@case("geometry-point-in-zoning", **every(Fails(("zoning", "Point", "row 2", "polygon"))))
def point_in_polygon_layer(folder: Path) -> Inputs:
    zoning = town_frames()["zoning"]
    geoms = [zoning.geometry[0], shapely.Point(X0 + 200, Y0 + 50)]
    return town_with(folder, zoning=zoning.set_geometry(gpd.GeoSeries(geoms, crs=CRS)))


@case(
    "geometry-line-as-disturbance",
    validate=Fails(("disturbance", "LineString", "row 1")),
    check=Fails(("disturbance", "LineString", "row 1")),
)
def line_disturbance(folder: Path) -> Inputs:
    d = proposal_frames()["disturbance"]
    line = shapely.LineString([(X0 + 86.6, Y0), (X0 + 100, Y0 + 10)])
    return proposals_with(
        folder, disturbance=d.set_geometry(gpd.GeoSeries([line, d.geometry[1]], crs=CRS))
    )


@case(
    "geometry-tiny-1e-6-sqft",
    validate=Works(output=("parcels: ok", "  features: 3\n")),
    check=Works(findings={("SW101", "P-3"): "pass", ("SW101", "P-1"): "required"}),
    siting=Works(siting={"C": ("fail", 0.0)}),
    batch=Works(findings={("SW101", "P-3"): "pass", ("SW101", "P-1"): "required"}),
)
def tiny(folder: Path) -> Inputs:
    """Parcel C and proposal P-3 of 0.001 x 0.001 ft (1e-6 sq ft)."""
    town = town_frames()
    c = box(400, 0, 0.001, 0.001)
    parcels = pd.concat(
        [town["parcels"], gpd.GeoDataFrame({"parcel_id": ["C"]}, geometry=[c], crs=CRS)],
        ignore_index=True,
    )
    props = proposal_frames()
    d = props["disturbance"]
    tiny_d = gpd.GeoDataFrame(
        {"proposal_id": ["P-3"], "disturbance_id": ["L-3"]}, geometry=[box(50, 50, 0.001, 0.001)]
    ).set_crs(CRS)
    attributes = props["proposals"]
    row = attributes.iloc[[0]].assign(proposal_id="P-3", name="Tiny")
    inputs = write_town(
        folder,
        town=town | {"parcels": gpd.GeoDataFrame(parcels, crs=CRS)},
        proposals=props
        | {
            "disturbance": gpd.GeoDataFrame(pd.concat([d, tiny_d], ignore_index=True), crs=CRS),
            "proposals": gpd.GeoDataFrame(pd.concat([attributes, row], ignore_index=True)),
        },
    )
    return Inputs(inputs.layers, inputs.proposals, parcel="C")


@case(
    "geometry-50000-vertices",
    validate=Works(output=("parcels: ok", "Result: every layer is valid.")),
    check=Works(same_as_base=True),
)
def many_vertices(folder: Path) -> Inputs:
    """Parcel B (200 x 100 ft) drawn with 50,000 vertices along its edges.

    ``siting`` is left out: it takes 20 s on this parcel (a 128-segment negative buffer of
    50,000 vertices) and gives 14,397.8 sq ft for 14,400 (conservative, by 2.2 sq ft).
    """
    n = 12_500
    t = np.linspace(0.0, 1.0, n, endpoint=False)
    x0, y0 = X0 + 100.0, Y0
    xs = np.concatenate([x0 + 200 * t, np.full(n, x0 + 200), x0 + 200 * (1 - t), np.full(n, x0)])
    ys = np.concatenate([np.full(n, y0), y0 + 100 * t, np.full(n, y0 + 100), y0 + 100 * (1 - t)])
    b = shapely.Polygon(np.column_stack([xs, ys]))
    assert len(b.exterior.coords) == 50_001
    inputs = town_with(folder, **parcels_with(b=b))
    return Inputs(inputs.layers, inputs.proposals, parcel="B")
