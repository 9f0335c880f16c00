"""Reading proposals: a GeoPackage with its attribute table, or one disturbance file."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely

from gis_sw.errors import LayerError
from gis_sw.layers.read import read_proposals
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS_FT = "EPSG:2260"

pytestmark = pytest.mark.filterwarnings("ignore:'crs' was not provided:UserWarning")


def disturbance_frame() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {
            "proposal_id": ["addition", "subdivision", "subdivision"],
            "phase": [None, "1", "2"],
            "start_date": ["2026-04-01", "2026-05-01", "2026-09-01"],
            "end_date": ["2026-06-30", "2026-08-31", "2027-03-31"],
        },
        geometry=[
            shapely.box(X0, Y0, X0 + 10, Y0 + 12),  # 120 sq ft
            shapely.box(X0 + 100, Y0, X0 + 300, Y0 + 200),  # 40,000 sq ft
            shapely.box(X0 + 300, Y0, X0 + 461.5, Y0 + 200),  # 32,300 sq ft
        ],
        crs=CRS_FT,
    )


def proposals_gpkg(folder: Path, *, attributes: pd.DataFrame | None = None) -> Path:
    path = folder / "proposals.gpkg"
    disturbance_frame().to_file(path, layer="disturbance", engine="pyogrio")
    devices = gpd.GeoDataFrame(
        {
            "device_id": ["DW-1", "DW-2"],
            "proposal_id": ["subdivision", "subdivision"],
            "device_type": ["drywell", "trench"],
            "serves_vehicle_traffic": ["no", "yes"],
            "bottom_elevation_ft": [301.5, None],
            "depth_ft": [None, 4.0],
            "has_sedimentation_device": [1, 0],
        },
        geometry=[shapely.Point(X0 + 150, Y0 + 50), shapely.box(X0 + 200, Y0, X0 + 210, Y0 + 40)],
        crs=CRS_FT,
    )
    devices.to_file(path, layer="devices", engine="pyogrio")
    gpd.GeoDataFrame(
        {"proposal_id": ["addition"], "surface": ["roof"]},
        geometry=[shapely.box(X0, Y0, X0 + 10, Y0 + 12)],
        crs=CRS_FT,
    ).to_file(path, layer="impervious", engine="pyogrio")
    if attributes is None:
        attributes = pd.DataFrame(
            {
                "proposal_id": ["addition", "subdivision"],
                "land_use": ["single_family", "other"],
                "exemption": [None, ""],
                "approved_swppp": ["no", "yes"],
                "part_of_larger_plan": [False, True],
                "construction_cost_usd": [25_000.0, 1_200_000.0],
            }
        )
    pyogrio.write_dataframe(attributes, path, layer="proposals", driver="GPKG")
    return path


def test_geopackage_proposals(tmp_path: Path, ruleset: Ruleset) -> None:
    proposals = read_proposals(proposals_gpkg(tmp_path), ruleset=ruleset)
    assert proposals.ids == ["addition", "subdivision"]
    dist = proposals.disturbance
    assert dist.area.round(2).tolist() == [120.0, 40_000.0, 32_300.0]
    assert dist["disturbance_id"].tolist() == ["addition-d1", "subdivision-d1", "subdivision-d2"]
    assert dist["start_date"].dt.strftime("%Y-%m-%d").tolist() == [
        "2026-04-01",
        "2026-05-01",
        "2026-09-01",
    ]
    devices = proposals.devices.set_index("device_id")
    assert devices["serves_vehicle_traffic"].tolist() == [False, True]
    assert devices["has_sedimentation_device"].tolist() == [True, False]
    assert devices.loc["DW-1", "bottom_elevation_ft"] == 301.5
    assert np.isnan(devices.loc["DW-1", "depth_ft"])
    assert devices["test_hole_logged"].isna().all()
    attrs = proposals.attributes
    assert attrs.loc["subdivision", "approved_swppp"]
    assert attrs.loc["subdivision", "construction_cost_usd"] == 1_200_000.0
    assert attrs.loc["addition", "land_use"] == "single_family"
    assert pd.isna(attrs.loc["addition", "discharges_to_impaired_water"])
    assert proposals.impervious is not None
    assert proposals.impervious["surface"].tolist() == ["roof"]
    assert set(proposals.reports) == {"disturbance", "devices", "impervious"}


def test_bad_attribute_values_and_domains(tmp_path: Path, ruleset: Ruleset) -> None:
    attributes = pd.DataFrame(
        {
            "proposal_id": ["addition", "subdivision", "addition"],
            "land_use": ["house", "other", "other"],
            "exemption": ["Z", "a", None],
            "approved_swppp": ["perhaps", "yes", "no"],
        }
    )
    with pytest.raises(LayerError) as info:
        read_proposals(proposals_gpkg(tmp_path, attributes=attributes), ruleset=ruleset)
    messages = [p.message for p in info.value.problems]
    assert messages == [
        "duplicate proposal_id: 'addition' (2 times).",
        "column 'approved_swppp' has values that are not yes/no: proposal_id addition = 'perhaps'.",
        (
            "land_use is not one of single_family, agricultural, other: "
            "proposal_id addition = 'house'."
        ),
        "exemption is not a letter of the ruleset's exemptions: proposal_id addition = 'Z'.",
    ]


def test_end_before_start_names_the_feature(tmp_path: Path, ruleset: Ruleset) -> None:
    frame = disturbance_frame()
    frame["disturbance_id"] = ["A-1", "S-1", "S-2"]
    frame.loc[2, "end_date"] = "2026-08-31"  # before its start of 2026-09-01
    frame.loc[1, "end_date"] = "2026-05-01"  # same day as its start: allowed
    path = tmp_path / "disturbance.geojson"
    frame.to_file(path, driver="GeoJSON", engine="pyogrio")
    with pytest.raises(LayerError) as info:
        read_proposals(path, ruleset=ruleset)
    (problem,) = info.value.problems
    assert problem.message == (
        "end_date is before start_date: disturbance_id S-2 (2026-09-01 to 2026-08-31)."
    )


def test_single_geojson_with_attribute_columns(tmp_path: Path, ruleset: Ruleset) -> None:
    frame = disturbance_frame().to_crs("EPSG:4326")
    frame["land_use"] = ["single_family", "other", None]
    frame["construction_cost_usd"] = [25_000.0, None, 900_000.0]
    path = tmp_path / "applications.geojson"
    frame.to_file(path, driver="GeoJSON", engine="pyogrio")
    proposals = read_proposals(path, ruleset=ruleset)
    assert proposals.ids == ["addition", "subdivision"]
    np.testing.assert_allclose(
        proposals.disturbance.area.to_numpy(), [120.0, 40_000.0, 32_300.0], rtol=0.001
    )
    attrs = proposals.attributes
    assert attrs["land_use"].tolist() == ["single_family", "other"]
    assert attrs["construction_cost_usd"].tolist() == [25_000.0, 900_000.0]
    assert "land_use" not in proposals.disturbance.columns
    assert len(proposals.devices) == 0


def test_conflicting_attributes_on_one_proposal(tmp_path: Path, ruleset: Ruleset) -> None:
    frame = disturbance_frame()
    frame["land_use"] = ["single_family", "other", "agricultural"]
    path = tmp_path / "applications.fgb"
    frame.to_file(path, driver="FlatGeobuf", engine="pyogrio")
    with pytest.raises(LayerError, match=r"proposal 'subdivision' has different land_use"):
        read_proposals(path, ruleset=ruleset)


def test_shapefile_without_proposal_id_takes_file_stem(tmp_path: Path, ruleset: Ruleset) -> None:
    frame = gpd.GeoDataFrame(
        {"note": ["patio"]}, geometry=[shapely.box(X0, Y0, X0 + 20, Y0 + 12)], crs=CRS_FT
    )
    path = tmp_path / "patio_240.shp"
    frame.to_file(path, engine="pyogrio")
    proposals = read_proposals(path, ruleset=ruleset)
    assert proposals.ids == ["patio_240"]
    assert proposals.disturbance["disturbance_id"].tolist() == ["patio_240-d1"]
    assert round(float(proposals.disturbance.area.iloc[0]), 2) == 240.0


def test_dxf_limits_of_disturbance_need_a_crs(tmp_path: Path, ruleset: Ruleset) -> None:
    ring = shapely.box(X0, Y0, X0 + 25, Y0 + 12).exterior  # 300 sq ft
    path = tmp_path / "patio_300.dxf"
    pyogrio.write_dataframe(gpd.GeoDataFrame(geometry=[ring], crs=None), path, driver="DXF")
    with pytest.raises(ValueError, match=r"patio_300\.dxf has no CRS"):
        read_proposals(path, ruleset=ruleset)
    proposals = read_proposals(path, ruleset=ruleset, crs="EPSG:2260")
    assert proposals.ids == ["patio_300"]
    assert proposals.disturbance.geom_type.tolist() == ["Polygon"]
    assert round(float(proposals.disturbance.area.iloc[0]), 2) == 300.0


def test_dxf_open_polyline_is_wrong_geometry(tmp_path: Path, ruleset: Ruleset) -> None:
    line = shapely.LineString([(X0, Y0), (X0 + 25, Y0), (X0 + 25, Y0 + 12)])
    path = tmp_path / "lod.dxf"
    pyogrio.write_dataframe(gpd.GeoDataFrame(geometry=[line], crs=None), path, driver="DXF")
    with pytest.raises(LayerError, match=r"1 feature\(s\) are LineString, not polygon: row 1"):
        read_proposals(path, ruleset=ruleset, crs="EPSG:2260")


def test_geopackage_without_disturbance(tmp_path: Path, ruleset: Ruleset) -> None:
    path = tmp_path / "p.gpkg"
    disturbance_frame().to_file(path, layer="limits", engine="pyogrio")
    with pytest.raises(FileNotFoundError, match=r"has no 'disturbance' layer \(it has limits\)"):
        read_proposals(path, ruleset=ruleset)


def test_devices_missing_columns_and_duplicate_ids(tmp_path: Path, ruleset: Ruleset) -> None:
    path = tmp_path / "proposals.gpkg"
    disturbance_frame().to_file(path, layer="disturbance", engine="pyogrio")
    gpd.GeoDataFrame(
        {"device_id": ["DW-1", "DW-1"], "serves_vehicle_traffic": ["no", "often"]},
        geometry=[shapely.Point(X0, Y0), shapely.Point(X0 + 1, Y0)],
        crs=CRS_FT,
    ).to_file(path, layer="devices", engine="pyogrio")
    with pytest.raises(LayerError) as info:
        read_proposals(path, ruleset=ruleset)
    messages = [p.message for p in info.value.problems]
    assert messages == [
        (
            "required column 'proposal_id' is missing (columns present: device_id, "
            "serves_vehicle_traffic)."
        ),
        "duplicate device_id: 'DW-1' (2 times).",
        (
            "column 'serves_vehicle_traffic' has values that are not yes/no: "
            "device_id DW-1 = 'often'."
        ),
    ]


def test_dxf_cad_layer_selected_by_manifest_layer_key(tmp_path: Path, ruleset: Ruleset) -> None:
    """``layer`` picks a CAD layer of a DXF: limits of disturbance drawn on layer LOD."""
    from gis_sw.layers.vector import read_vector

    rings = gpd.GeoDataFrame(
        {"Layer": ["LOD", "TREES", "LOD"]},
        geometry=[
            shapely.box(X0, Y0, X0 + 20, Y0 + 12).exterior,
            shapely.box(X0 + 50, Y0, X0 + 60, Y0 + 10).exterior,
            shapely.box(X0 + 100, Y0, X0 + 110, Y0 + 10).exterior,
        ],
        crs=None,
    )
    path = tmp_path / "site.dxf"
    pyogrio.write_dataframe(rings, path, driver="DXF")
    frame, crs, _ = read_vector(path, layer="LOD", crs=ruleset.working_crs)
    assert crs.equals(ruleset.working_crs)
    assert frame["Layer"].tolist() == ["LOD", "LOD"]
    assert frame.area.round(2).tolist() == [240.0, 100.0]
    with pytest.raises(
        FileNotFoundError, match=r"no entities on CAD layer 'ROADS' \(layers: LOD, TREES\)"
    ):
        read_vector(path, layer="ROADS", crs=ruleset.working_crs)
