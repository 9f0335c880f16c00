"""Proposal files as exports write them: names, ids, dates, numbers, attributes in one way.

Issue 12 item 4 and issue 14's proposal-reading wrong answers and tracebacks; the CLI-level
cases are in ``tests/corpus/proposal_inputs.py``.
"""

from __future__ import annotations

import json
import os
import warnings
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from click.testing import CliRunner

from gis_sw.cli import cli
from gis_sw.errors import CRSError, InputFileError, LayerError
from gis_sw.layers.proposal_columns import edit_distance, resolve_columns
from gis_sw.layers.proposal_values import id_strings, normalise_dates
from gis_sw.layers.rainfall import read_rainfall
from gis_sw.layers.read import read_proposals
from gis_sw.layers.specs import PROPOSAL_LAYERS
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS_FT = "EPSG:2260"

pytestmark = pytest.mark.filterwarnings("ignore:'crs' was not provided:UserWarning")


def lots(n: int) -> list[shapely.Polygon]:
    """``n`` boxes of 10 x 12 ft (120 sq ft), 50 ft apart."""
    return [shapely.box(X0 + 50 * i, Y0, X0 + 50 * i + 10, Y0 + 12) for i in range(n)]


def disturbance(**columns: object) -> gpd.GeoDataFrame:
    n = len(next(iter(columns.values())))  # type: ignore[arg-type]
    return gpd.GeoDataFrame(columns, geometry=lots(n), crs=CRS_FT)


def gpkg(path: Path, table: pd.DataFrame | None = None, **layers: gpd.GeoDataFrame) -> Path:
    for name, frame in layers.items():
        frame.to_file(path, layer=name, engine="pyogrio")
    if table is not None:
        pyogrio.write_dataframe(table, path, layer="proposals", driver="GPKG")
    return path


DEVICE_KNOWN = list({**PROPOSAL_LAYERS["devices"].required, **PROPOSAL_LAYERS["devices"].optional})


# --- column names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [("landuse", "land_use", 1), ("proposal_id", "propsoal_id", 1), ("phase", "phase", 0)],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance


def test_device_columns_cut_by_a_shapefile_are_read_and_said() -> None:
    plan = resolve_columns(
        ["device_id", "proposal_i", "serves_veh", "bottom_ele", "has_sedime", "device_typ"],
        DEVICE_KNOWN,
        required=["device_id", "proposal_id"],
    )
    assert dict(plan.rename) == {
        "proposal_i": "proposal_id",
        "serves_veh": "serves_vehicle_traffic",
        "bottom_ele": "bottom_elevation_ft",
        "has_sedime": "has_sedimentation_device",
        "device_typ": "device_type",
    }
    assert len(plan.notes) == 5
    assert not plan.errors
    assert "a Shapefile keeps 10 characters" in plan.notes[0]


def test_test_hole_cut_is_ambiguous_and_refused_with_the_fix() -> None:
    plan = resolve_columns(["device_id", "proposal_id", "test_hole_"], DEVICE_KNOWN)
    assert not plan.rename
    (message, fix), *_ = plan.errors
    assert "'test_hole_'" in message
    assert "test_hole_logged" in message
    assert "test_hole_groundwater_elevation_ft" in message
    assert "GeoPackage" in fix


def test_case_variants_read_near_misses_warned_required_near_miss_refused() -> None:
    known = list({**PROPOSAL_LAYERS["proposals"].required, **PROPOSAL_LAYERS["proposals"].optional})
    plan = resolve_columns(
        ["proposal_ID", "approved_SWPPP", "landuse", "note", "fid"], known, ignore=["fid"]
    )
    assert dict(plan.rename) == {"proposal_ID": "proposal_id", "approved_SWPPP": "approved_swppp"}
    assert plan.notes[-1] == (
        "column 'landuse' is not read: did you mean 'land_use'? (it was ignored; rename it to "
        "'land_use' to use it)."
    )
    assert len(plan.notes) == 3  # 'note' is not taken for 'name'
    refused = resolve_columns(["propsal_id"], known, required=["proposal_id"])
    assert refused.errors[0][1] == "rename column 'propsal_id' to 'proposal_id'."


def test_two_columns_read_as_one_are_refused() -> None:
    plan = resolve_columns(["proposal_id", "PROPOSAL_ID"], ["proposal_id"])
    assert not plan.rename
    assert (
        plan.errors[0][0]
        == "columns 'PROPOSAL_ID', 'proposal_id' would all be read as 'proposal_id'."
    )


def test_shapefile_with_cut_id_is_two_proposals_not_one(tmp_path: Path, ruleset: Ruleset) -> None:
    path = tmp_path / "lod.shp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        disturbance(proposal_id=["101", "102"], approved_swppp=["yes", "no"]).to_file(
            path, engine="pyogrio"
        )
    assert "proposal_i" in pyogrio.read_info(path)["fields"]
    proposals = read_proposals(path, ruleset=ruleset)
    assert proposals.ids == ["101", "102"]  # not one proposal 'lod' of 240 sq ft
    assert proposals.attributes["approved_swppp"].tolist() == [True, False]
    notes = proposals.reports["disturbance"].warnings  # type: ignore[attr-defined]
    assert "column 'proposal_i' read as 'proposal_id' (a Shapefile keeps 10" in notes[0]


# --- ids ---------------------------------------------------------------------------------------


def test_id_strings_normalise_integral_floats_only() -> None:
    got = id_strings(pd.Series([101.0, 101.5, np.nan, -3.0]))
    assert got.tolist() == ["101", "101.5", None, "-3"]
    assert id_strings(pd.Series([101, 102], dtype="int64")).tolist() == ["101", "102"]
    assert id_strings(pd.Series(["A-1", None, 7.0], dtype=object)).tolist() == ["A-1", None, "7"]


def test_float_ids_in_table_and_layers_are_one_proposal(tmp_path: Path, ruleset: Ruleset) -> None:
    devices = gpd.GeoDataFrame(
        {"device_id": [1.0], "proposal_id": [101.0]},
        geometry=[shapely.Point(X0 + 5, Y0 + 5)],
        crs=CRS_FT,
    )
    table = pd.DataFrame({"proposal_id": [101.0, 102.0], "land_use": ["other", "single_family"]})
    path = gpkg(
        tmp_path / "p.gpkg", table, disturbance=disturbance(proposal_id=[101, 102]), devices=devices
    )
    proposals = read_proposals(path, ruleset=ruleset)
    assert proposals.ids == ["101", "102"]
    assert proposals.attributes.loc["101", "land_use"] == "other"
    assert proposals.devices["device_id"].tolist() == ["1"]


# --- attributes in one way ---------------------------------------------------------------------


def test_gpkg_disturbance_columns_are_read_and_the_table_wins(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    layer = disturbance(
        proposal_id=["A", "B", "C"],
        approved_swppp=["yes", "no", None],
        land_use=["other", "other", "single_family"],
    )
    table = pd.DataFrame(
        {"proposal_id": ["A", "B", "C"], "approved_swppp": ["true", None, "no"], "name": "x"}
    )
    proposals = read_proposals(gpkg(tmp_path / "p.gpkg", table, disturbance=layer), ruleset=ruleset)
    attrs = proposals.attributes
    assert attrs["approved_swppp"].tolist() == [True, False, False]  # agree, layer, table
    assert attrs["land_use"].tolist() == ["other", "other", "single_family"]  # layer only
    assert "approved_swppp" not in proposals.disturbance.columns


def test_conflict_between_layer_and_table_is_one_error(tmp_path: Path, ruleset: Ruleset) -> None:
    layer = disturbance(proposal_id=["A", "B"], construction_cost_usd=[100.0, 200.0])
    table = pd.DataFrame({"proposal_id": ["A", "B"], "construction_cost_usd": [100.0, 250.0]})
    with pytest.raises(LayerError) as caught:
        read_proposals(gpkg(tmp_path / "p.gpkg", table, disturbance=layer), ruleset=ruleset)
    assert len(caught.value.problems) == 1
    assert "B construction_cost_usd = 200.0 on disturbance, 250.0 in the table" in str(caught.value)


def test_device_of_no_drawn_proposal_names_it_and_the_ids(tmp_path: Path, ruleset: Ruleset) -> None:
    devices = gpd.GeoDataFrame(
        {"device_id": ["DW-1", "DW-2"], "proposal_id": ["A", "Z"]},
        geometry=[shapely.Point(X0 + 5, Y0 + 5), shapely.Point(X0 + 60, Y0 + 5)],
        crs=CRS_FT,
    )
    path = gpkg(
        tmp_path / "p.gpkg", disturbance=disturbance(proposal_id=["A", "B"]), devices=devices
    )
    with pytest.raises(
        LayerError, match=r"device_id DW-2 \(proposal_id 'Z'\); the proposals drawn are A, B"
    ):
        read_proposals(path, ruleset=ruleset)


# --- numbers and dates -------------------------------------------------------------------------


def test_negative_depth_and_infinite_elevation_refused(tmp_path: Path, ruleset: Ruleset) -> None:
    devices = gpd.GeoDataFrame(
        {
            "device_id": ["DW-1", "DW-2"],
            "proposal_id": ["A", "A"],
            "depth_ft": [-4.0, 3.0],
            "bottom_elevation_ft": [300.0, float("inf")],
        },
        geometry=[shapely.Point(X0 + 5, Y0 + 5), shapely.Point(X0 + 6, Y0 + 5)],
        crs=CRS_FT,
    )
    path = gpkg(tmp_path / "p.gpkg", disturbance=disturbance(proposal_id=["A"]), devices=devices)
    with pytest.raises(LayerError) as caught:
        read_proposals(path, ruleset=ruleset)
    text = str(caught.value)
    assert "column 'depth_ft' has negative values: device_id DW-1 = -4.0" in text
    assert "column 'bottom_elevation_ft' has infinite values: device_id DW-2 = inf" in text


def test_dates_tz_aware_z_and_mixed_offsets_read_in_utc() -> None:
    aware = pd.Series(pd.to_datetime(["2026-05-01T04:00:00Z", None], utc=True))
    got, far = normalise_dates(aware)
    assert got.dtype == "datetime64[ns]"
    assert not far.any()
    assert got.iloc[0] == pd.Timestamp("2026-05-01T04:00:00")
    text = pd.Series(["2026-05-01T00:00:00Z", "2026-05-01T00:00:00-04:00", "2026-05-02", None])
    got, far = normalise_dates(text)
    assert got.tolist()[:3] == [
        pd.Timestamp("2026-05-01T00:00:00"),
        pd.Timestamp("2026-05-01T04:00:00"),
        pd.Timestamp("2026-05-02"),
    ]
    assert pd.isna(got.iloc[3])


def test_dates_pandas_cannot_hold_are_named(tmp_path: Path, ruleset: Ruleset) -> None:
    millis = pd.Series(np.array(["2026-05-01", "2300-01-01"], dtype="datetime64[ms]"))
    _, far = normalise_dates(millis)
    assert far.tolist() == [False, True]
    table = pd.DataFrame(
        {
            "proposal_id": ["A"],
            "construction_start": ["2026-05-01"],
            "construction_end": ["3026-05-01"],
        }
    )
    path = gpkg(tmp_path / "p.gpkg", table, disturbance=disturbance(proposal_id=["A"]))
    with pytest.raises(
        LayerError, match=r"'construction_end' has dates outside .*proposal_id A = '3026-05-01'"
    ):
        read_proposals(path, ruleset=ruleset)


def test_gpkg_datetime_utc_fields_read(tmp_path: Path, ruleset: Ruleset) -> None:
    layer = disturbance(
        proposal_id=["A", "A"],
        start_date=pd.to_datetime(["2026-05-01T04:00:00Z", "2026-06-01T04:00:00Z"]),
        end_date=pd.to_datetime(["2026-07-01T04:00:00Z", "2026-08-01T04:00:00Z"]),
    )
    proposals = read_proposals(gpkg(tmp_path / "p.gpkg", disturbance=layer), ruleset=ruleset)
    starts = proposals.disturbance["start_date"]
    assert starts.dtype == "datetime64[ns]"
    assert [d.date().isoformat() for d in starts] == ["2026-05-01", "2026-06-01"]


# --- files -------------------------------------------------------------------------------------


def test_named_pipe_refused_at_once(tmp_path: Path, ruleset: Ruleset) -> None:
    pipe = tmp_path / "lod.geojson"
    os.mkfifo(pipe)
    with pytest.raises(InputFileError, match=r"lod\.geojson: is a named pipe \(FIFO\), not a file"):
        read_proposals(pipe, ruleset=ruleset)


def test_crs_override_reads_state_plane_geojson_without_crs_member(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    ring = [[X0, Y0], [X0 + 10, Y0], [X0 + 10, Y0 + 12], [X0, Y0 + 12], [X0, Y0]]
    feature = {"type": "Feature", "properties": {"proposal_id": "A"}}
    feature["geometry"] = {"type": "Polygon", "coordinates": [ring]}
    path = tmp_path / "lod.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [feature]}))
    with pytest.raises(CRSError):
        read_proposals(path, ruleset=ruleset)  # GDAL says EPSG:4326: far outside the town
    proposals = read_proposals(path, ruleset=ruleset, crs="EPSG:2260")
    assert round(float(proposals.disturbance.area.iloc[0]), 2) == 120.0
    report = proposals.reports["disturbance"]
    assert report.source_crs == "EPSG:2260"  # type: ignore[attr-defined]
    assert "the file says EPSG:4326; --crs EPSG:2260 was used instead." in report.warnings  # type: ignore[attr-defined]


# --- rainfall CSV ------------------------------------------------------------------------------


def test_utf16_rainfall_read_tab_separated_too(tmp_path: Path) -> None:
    path = tmp_path / "rain.csv"
    path.write_text("date,inches\n2026-05-03,0.75\n2026-05-04,0\n", encoding="utf-16")
    assert path.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    assert read_rainfall(path) == {
        pd.Timestamp("2026-05-03").date(): 0.75,
        pd.Timestamp("2026-05-04").date(): 0.0,
    }
    tabbed = tmp_path / "rain.txt"
    tabbed.write_text("date\tinches\n2026-05-03\t0.5\n", encoding="utf-16")
    assert list(read_rainfall(tabbed).values()) == [0.5]


def test_rainfall_utf16_without_bom_read_latin1_refused_with_fix(tmp_path: Path) -> None:
    path = tmp_path / "rain.csv"
    path.write_bytes("date,inches\n2026-05-03,0.75\n".encode("utf-16-le"))
    assert list(read_rainfall(path).values()) == [0.75]
    path.write_bytes("date,inches,note\n2026-05-03,0.75,d\xe9j\xe0\n".encode("latin-1"))
    with pytest.raises(
        InputFileError, match=r"rain\.csv is not UTF-8 text .* Fix: save it as CSV UTF-8"
    ):
        read_rainfall(path)
    pipe = tmp_path / "rain.fifo"
    os.mkfifo(pipe)
    with pytest.raises(InputFileError, match="named pipe"):
        read_rainfall(pipe)


# --- CLI -------------------------------------------------------------------------------------


def test_verbose_keeps_exit_2_and_shows_the_traceback(tmp_path: Path) -> None:
    args = ["check", str(tmp_path / "none.gpkg"), "--layers", str(tmp_path)]
    quiet = CliRunner().invoke(cli, args)
    verbose = CliRunner().invoke(cli, ["-v", *args])
    assert quiet.exit_code == 2
    assert verbose.exit_code == 2
    assert "Traceback" not in quiet.stderr
    assert "Traceback" in verbose.stderr
    assert verbose.stderr.splitlines()[-1] == quiet.stderr.splitlines()[-1]


def test_zipped_shapefile_by_vsizip_path(tmp_path: Path, ruleset: Ruleset) -> None:
    shp = tmp_path / "lod.shp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        disturbance(proposal_id=["A", "B"], has_sedimentation_device=["y", "n"]).to_file(
            shp, engine="pyogrio"
        )
    archive = tmp_path / "lod.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for part in tmp_path.glob("lod.*"):
            if part.suffix != ".zip":
                zipped.write(part, part.name)
    proposals = read_proposals(f"/vsizip/{archive}/lod.shp", ruleset=ruleset)
    assert proposals.ids == ["A", "B"]
    assert [round(a, 2) for a in proposals.disturbance.area] == [120.0, 120.0]
