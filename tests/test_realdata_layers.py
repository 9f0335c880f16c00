"""Issue 12 cases 2, 3, 5, 6, 8: real, messy, partial town layers read right, never a silent pass.

One small town is written as real exports are: a Shapefile of parcels with right-of-way
placeholders (``---`` twice, ``ROAD``, ``--R``), a feature with no geometry, one with no id,
a retired duplicate filtered out by ``where``, two condominium units on one lot; zoning
with unnamed slivers; a state-plane GeoJSON of wetlands without a ``crs`` member whose two
parts share one wetland id; a buildings layer that maps one lot only; and no wells at all
(``[wells] none = true``).  Coordinates are EPSG:2260 (US survey feet) near Mount Pleasant.
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import pytest
import shapely
from click.testing import CliRunner

from gis_sw.analysis.engine import run_rules
from gis_sw.batch.run import RunOptions, screen_layers
from gis_sw.cli import cli
from gis_sw.errors import LayerError
from gis_sw.layers.build import make_proposals
from gis_sw.layers.read import inspect_layers, read_layers
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS = "EPSG:2260"

pytestmark = pytest.mark.filterwarnings("ignore:'crs' was not provided:UserWarning")


def lot(i: int) -> shapely.Polygon:
    """Lot ``i`` (0-based): 100 x 100 ft, in a row along x."""
    return shapely.box(X0 + 100 * i, Y0, X0 + 100 * (i + 1), Y0 + 100)


def write_parcels(folder: Path) -> None:
    road = shapely.box(X0, Y0 - 30, X0 + 500, Y0)  # the street in front of the lots
    rows = [
        ("1.1-1-1", "ACTIVE", lot(0)),
        ("1.1-1-2", "ACTIVE", lot(1)),
        ("1.1-1-3", "ACTIVE", lot(2)),
        ("1.1-1-4", "ACTIVE", lot(3)),
        ("1.1-1-5.C1", "ACTIVE", lot(4)),  # two condominium units on one lot
        ("1.1-1-5.C2", "ACTIVE", lot(4)),
        ("1.1-1-1", "RETIRED", lot(0)),  # an old record: a duplicate id unless filtered
        ("---", "ACTIVE", road),
        ("---", "ACTIVE", shapely.box(X0 + 500, Y0 - 30, X0 + 530, Y0 + 100)),
        ("ROAD", "ACTIVE", shapely.box(X0 - 30, Y0 - 30, X0, Y0 + 100)),
        ("--R", "ACTIVE", shapely.box(X0, Y0 + 100, X0 + 500, Y0 + 110)),
        ("1.1-1-9", "ACTIVE", None),  # no geometry
        (None, "ACTIVE", shapely.box(X0, Y0 + 110, X0 + 50, Y0 + 160)),  # no id
    ]
    frame = gpd.GeoDataFrame(
        {"SBL": [r[0] for r in rows], "STATUS": [r[1] for r in rows]},
        geometry=[r[2] for r in rows],
        crs=CRS,
    )
    pyogrio.write_dataframe(frame, folder / "parcels.shp")


def write_zoning(folder: Path) -> None:
    slivers = [shapely.box(X0 + 600 + 20 * i, Y0, X0 + 605 + 20 * i, Y0 + 2) for i in range(3)]
    frame = gpd.GeoDataFrame(
        {"ZONE_TYPE": ["R-20", None, None, None]},
        geometry=[shapely.box(X0 - 50, Y0 - 50, X0 + 560, Y0 + 200), *slivers],
        crs=CRS,
    )
    pyogrio.write_dataframe(frame, folder / "zoning.gpkg")


def write_wetlands(folder: Path) -> None:
    """A state-plane GeoJSON with no ``crs`` member (GDAL reads it as EPSG:4326)."""

    def ring(x: float, y: float, w: float, h: float) -> list[list[float]]:
        return [[x, y], [x + w, y], [x + w, y + h], [x, y + h], [x, y]]

    features = [
        {
            "type": "Feature",
            "properties": {"WETID": "W-1"},
            "geometry": {"type": "Polygon", "coordinates": [ring(X0 + 200, Y0 + 400, 80, 50)]},
        },
        {
            "type": "Feature",
            "properties": {"WETID": "W-1"},  # the same wetland system, a second part
            "geometry": {"type": "Polygon", "coordinates": [ring(X0 + 300, Y0 + 400, 80, 50)]},
        },
    ]
    text = json.dumps({"type": "FeatureCollection", "features": features})
    (folder / "wetlands.geojson").write_text(text, encoding="utf-8")


def write_buildings(folder: Path) -> None:
    frame = gpd.GeoDataFrame(
        {"building_id": ["B-1"], "habitable_basement": ["yes"]},
        geometry=[shapely.box(X0 + 20, Y0 + 20, X0 + 60, Y0 + 60)],  # on lot 1.1-1-1
        crs=CRS,
    )
    pyogrio.write_dataframe(frame, folder / "buildings.gpkg")


MANIFEST = """\
[manifest]
name = "Messy town"

[parcels]
path = "parcels.shp"
columns = {{ parcel_id = "SBL" }}
where = "STATUS <> 'RETIRED'"
{parcels_extra}

[zoning]
path = "zoning.gpkg"
columns = {{ zone = "ZONE_TYPE" }}
{zoning_extra}

[wetlands]
path = "wetlands.geojson"
crs = "EPSG:2260"
columns = {{ wetland_id = "WETID" }}

[buildings]
path = "buildings.gpkg"
{buildings_extra}

[wells]
none = true
"""


def write_town(
    folder: Path,
    *,
    parcels_extra: str = 'on_bad_feature = "skip"',
    zoning_extra: str = 'on_bad_feature = "skip"',
    buildings_extra: str = 'coverage = "extent"',
) -> Path:
    write_parcels(folder)
    write_zoning(folder)
    write_wetlands(folder)
    write_buildings(folder)
    path = folder / "layers.toml"
    path.write_text(
        MANIFEST.format(
            parcels_extra=parcels_extra,
            zoning_extra=zoning_extra,
            buildings_extra=buildings_extra,
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def town(tmp_path: Path) -> Path:
    return write_town(tmp_path)


# -- case 3: messy layers -------------------------------------------------------------------


def test_skip_drops_placeholders_null_geometry_and_null_id_with_reasons(
    town: Path, ruleset: Ruleset
) -> None:
    layers = read_layers(town, ruleset=ruleset)
    parcels = layers.get("parcels")
    assert parcels is not None
    assert sorted(parcels["parcel_id"]) == [
        "1.1-1-1",
        "1.1-1-2",
        "1.1-1-3",
        "1.1-1-4",
        "1.1-1-5.C1",
        "1.1-1-5.C2",
    ]
    reasons = {(d.feature, d.reason) for d in layers.dropped("parcels")}
    # rows are numbered as read (after the where filter dropped the RETIRED record)
    assert reasons == {
        ("row 7 (parcel_id ---)", "placeholder parcel_id '---' (not a real feature)"),
        ("row 8 (parcel_id ---)", "placeholder parcel_id '---' (not a real feature)"),
        ("row 9 (parcel_id ROAD)", "placeholder parcel_id 'ROAD' (not a real feature)"),
        ("row 10 (parcel_id --R)", "placeholder parcel_id '--R' (not a real feature)"),
        ("row 11 (parcel_id 1.1-1-9)", "no geometry"),
        ("row 12", "no parcel_id (empty)"),
    }
    assert len(layers.dropped("parcels")) == 6  # '---' twice
    assert sum(d.reason.startswith("placeholder parcel_id '---'") for d in layers.dropped()) == 2


def test_unnamed_zoning_slivers_are_skipped_under_the_area_limit(
    town: Path, ruleset: Ruleset
) -> None:
    layers = read_layers(town, ruleset=ruleset)
    zoning = layers.get("zoning")
    assert zoning is not None
    assert list(zoning["zone"]) == ["R-20"]
    slivers = layers.dropped("zoning")
    assert [d.reason for d in slivers] == [
        "unnamed zoning sliver of 10.00 sq ft (under 100.00)"
    ] * 3


def test_unnamed_zoning_at_the_sliver_limit_is_still_an_error(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    """10 sq ft slivers with max_sliver_sqft = 10: not under the limit, so refused."""
    town = write_town(tmp_path, zoning_extra='on_bad_feature = "skip"\nmax_sliver_sqft = 10')
    with pytest.raises(LayerError, match=r"required column 'zone' is empty for 3 feature"):
        read_layers(town, ruleset=ruleset)
    town = write_town(tmp_path, zoning_extra='on_bad_feature = "skip"\nmax_sliver_sqft = 10.01')
    assert len(read_layers(town, ruleset=ruleset).dropped("zoning")) == 3


def test_without_skip_the_messy_layer_is_refused_naming_each_feature(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    town = write_town(tmp_path, parcels_extra="", zoning_extra="")
    with pytest.raises(LayerError) as info:
        read_layers(town, ruleset=ruleset)
    text = str(info.value)
    assert "1 feature(s) have no geometry: parcel_id 1.1-1-9" in text
    assert "duplicate parcel_id: '---' (2 times)" in text
    assert "required column 'zone' is empty for 3 feature(s)" in text


def test_where_is_pushed_down_and_a_bad_filter_names_itself(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    town = write_town(tmp_path)
    report = read_layers(town, ruleset=ruleset).reports["parcels"]
    assert "filter: where STATUS <> 'RETIRED' (12 features kept)." in report.warnings
    text = town.read_text(encoding="utf-8").replace("STATUS <>", "STATUZ <>")
    town.write_text(text, encoding="utf-8")
    with pytest.raises(LayerError, match=r"the filter where = \"STATUZ <> 'RETIRED'\" failed"):
        read_layers(town, ruleset=ruleset)


def test_repeated_wetland_label_is_not_a_duplicate_id(town: Path, ruleset: Ruleset) -> None:
    wetlands = read_layers(town, ruleset=ruleset).get("wetlands")
    assert wetlands is not None
    assert list(wetlands["wetland_id"]) == ["W-1", "W-1"]


def test_identical_parcel_geometries_are_reported_together(town: Path, ruleset: Ruleset) -> None:
    layers = read_layers(town, ruleset=ruleset)
    assert layers.duplicate_geometries("parcels") == (("1.1-1-5.C1", "1.1-1-5.C2"),)


# -- case 5: CRS override -------------------------------------------------------------------


def test_layer_crs_overrides_a_geojson_without_crs_member(town: Path, ruleset: Ruleset) -> None:
    layers = read_layers(town, ruleset=ruleset)
    wetlands = layers.get("wetlands")
    assert wetlands is not None
    assert wetlands.area.round(2).tolist() == [4000.0, 4000.0]
    assert wetlands.total_bounds.tolist() == [X0 + 200, Y0 + 400, X0 + 380, Y0 + 450]
    assert (
        "CRS EPSG:2260 from the manifest replaces the file's own EPSG:4326."
        in layers.reports["wetlands"].warnings
    )


def test_without_the_override_the_geojson_is_refused_naming_the_crs(
    town: Path, ruleset: Ruleset
) -> None:
    text = town.read_text(encoding="utf-8").replace(
        'path = "wetlands.geojson"\ncrs = "EPSG:2260"\n', 'path = "wetlands.geojson"\n'
    )
    town.write_text(text, encoding="utf-8")
    with pytest.raises(LayerError, match=r"EPSG:4326"):
        read_layers(town, ruleset=ruleset)


# -- case 6: the area-of-use fix names --ruleset ---------------------------------------------


def test_outside_area_of_use_fix_names_ruleset_and_readme(tmp_path: Path, ruleset: Ruleset) -> None:
    town = write_town(tmp_path)
    # the same lots, in EPSG:26986 (Massachusetts, metres): outside EPSG:2260's area
    frame = gpd.GeoDataFrame(
        {"building_id": ["B-1"]},
        geometry=[shapely.box(230_000, 900_000, 230_040, 900_040)],
        crs="EPSG:26986",
    )
    pyogrio.write_dataframe(frame, tmp_path / "buildings.gpkg")
    with pytest.raises(LayerError) as info:
        read_layers(town, ruleset=ruleset)
    text = str(info.value)
    assert "outside the area of use of EPSG:2260" in text
    assert "--ruleset my_town.toml whose working_crs is the town's projected CRS" in text
    assert '"A ruleset for another town"' in text


# -- case 8: declared absences --------------------------------------------------------------


def test_declared_none_is_an_empty_layer_not_a_missing_one(town: Path, ruleset: Ruleset) -> None:
    layers = read_layers(town, ruleset=ruleset)
    assert layers.declared_none == ("wells",)
    wells = layers.get("wells")
    assert wells is not None
    assert len(wells) == 0
    assert "well_id" in wells.columns
    assert "wells" not in layers.missing
    assert "septic_fields" in layers.missing


def test_declared_none_with_a_path_or_for_parcels_is_refused(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    town = write_town(tmp_path)
    text = town.read_text(encoding="utf-8").replace(
        "[wells]\nnone = true\n", '[wells]\nnone = true\npath = "wells.shp"\n\n[dem]\nnone = true\n'
    )
    town.write_text(text, encoding="utf-8")
    with pytest.raises(LayerError) as info:
        read_layers(town, ruleset=ruleset)
    text = str(info.value)
    assert "none = true declares the layer absent, so path cannot be given with it" in text
    assert "dem cannot be declared none" in text


# -- case 2: coverage -----------------------------------------------------------------------


def proposals_on(layers_crs: str) -> object:
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P-1", "P-4"]},
        geometry=[shapely.box(X0 + 70, Y0 + 70, X0 + 95, Y0 + 95), lot(3).buffer(-20)],
        crs=layers_crs,
    )
    devices = gpd.GeoDataFrame(
        {
            "device_id": ["D-1", "D-4"],
            "proposal_id": ["P-1", "P-4"],
            "serves_vehicle_traffic": [True, True],
        },
        geometry=[shapely.Point(X0 + 80, Y0 + 80), shapely.Point(X0 + 350, Y0 + 50)],
        crs=layers_crs,
    )
    return make_proposals(layers_crs, disturbance, devices)


def test_device_outside_a_partial_buildings_layer_is_review_not_pass(
    town: Path, ruleset: Ruleset
) -> None:
    layers = read_layers(town, ruleset=ruleset)
    coverage = layers.covers("buildings")
    assert coverage is not None
    # the footprint's extent grown by the largest setback (100 ft, the state well advisory)
    assert shapely.bounds(coverage).tolist() == [X0 - 80, Y0 - 80, X0 + 160, Y0 + 160]
    findings = run_rules(layers, proposals_on(CRS), ruleset, select=["SW206", "SW210"])
    by = findings.set_index(["rule_id", "subject_id"])
    inside = by.loc[("SW206", "D-1")]
    assert inside["outcome"] == "pass"  # 28.28 ft from B-1's corner, inside the coverage
    assert float(inside["measured"]) == pytest.approx(28.28, abs=0.005)
    outside = by.loc[("SW206", "D-4")]
    assert outside["outcome"] == "review"
    assert outside["message"].startswith(
        "Buildings cover only part of the town; this device is outside it"
    )
    # wells declared none: the advisory passes and says why
    well = by.loc[("SW210", "D-4")]
    assert well["outcome"] == "pass"
    assert well["message"].endswith("(wells declared none in the layers manifest.)")


def test_default_town_coverage_keeps_the_pass(tmp_path: Path, ruleset: Ruleset) -> None:
    """Without a declared coverage the layer is taken to map the whole town (validate warns)."""
    town = write_town(tmp_path, buildings_extra="")
    layers = read_layers(town, ruleset=ruleset)
    assert layers.covers("buildings") is None
    findings = run_rules(layers, proposals_on(CRS), ruleset, select=["SW206"])
    assert findings.set_index("subject_id").loc["D-4", "outcome"] == "pass"


def test_batch_never_calls_a_parcel_outside_coverage_clear(town: Path, ruleset: Ruleset) -> None:
    layers = read_layers(town, ruleset=ruleset)
    rows = screen_layers(layers, ruleset, options=RunOptions(chunk_size=10_000, workers=1)).rows
    by = rows.set_index("parcel_id")
    # lot 1.1-1-1 lies inside the buildings coverage (X0-80 .. X0+160); the others do not
    assert "buildings cover only part of the town" not in str(by.loc["1.1-1-1", "notes"])
    for pid in ("1.1-1-2", "1.1-1-3", "1.1-1-4"):
        assert by.loc[pid, "screen"] == "review"
        assert "buildings cover only part of the town; this parcel is outside it" in str(
            by.loc[pid, "notes"]
        )


# -- validate: one report a planner can act on -----------------------------------------------


def test_validate_reports_everything_and_exits_0(town: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--layers", str(town)])
    out = result.output
    assert result.exit_code == 0, out
    assert "parcels: ok" in out
    assert 'skipped:  6 feature(s) (on_bad_feature = "skip"):' in out
    assert (
        "- 2 x placeholder parcel_id '---' (not a real feature): row 7 (parcel_id ---), "
        "row 8 (parcel_id ---)"
    ) in out
    assert "- 1 x no geometry: row 11 (parcel_id 1.1-1-9)" in out
    assert "1 geometry carries 2 different parcel_id values" in out
    assert "- 3 x unnamed zoning sliver of 10.00 sq ft (under 100.00)" in out
    assert "1.1-1-5.C1 = 1.1-1-5.C2" in out
    assert "CRS EPSG:2260 from the manifest replaces the file's own EPSG:4326." in out
    assert "coverage: extent" in out
    assert "wells: declared none" in out
    assert "Declared none: wells" in out
    assert "Result: every layer is valid (9 feature(s) skipped with a reason; 1 layer(s) " in out


def test_validate_warns_of_a_layer_covering_part_of_the_parcels(tmp_path: Path) -> None:
    town = write_town(tmp_path, buildings_extra="")
    result = CliRunner().invoke(cli, ["validate", "--layers", str(town)])
    assert result.exit_code == 0, result.output
    assert "warning: its extent covers only 3% of the parcels' extent." in result.output
    assert 'coverage = "extent"' in result.output


def test_inspection_lists_dropped_features_for_problems_csv(town: Path, ruleset: Ruleset) -> None:
    inspection = inspect_layers(town, ruleset=ruleset)
    assert inspection.ok
    kinds = [d.kind for d in inspection.dropped]
    assert kinds.count("parcels") == 6
    assert kinds.count("zoning") == 3


# -- manifest: every new key checked before anything is read --------------------------------


def test_bad_new_manifest_keys_are_all_reported(tmp_path: Path, ruleset: Ruleset) -> None:
    town = write_town(tmp_path)
    text = town.read_text(encoding="utf-8")
    text = text.replace(
        'on_bad_feature = "skip"\n\n[zoning]', 'on_bad_feature = "drop"\n\n[zoning]'
    )
    text = text.replace('coverage = "extent"', 'coverage = "flown_area.gpkg"\nmax_sliver_sqft = 5')
    text = text.replace(
        "[wells]\nnone = true\n",
        "[wells]\nnone = false\n\n[floodplain]\n"
        'postgis = "postgresql://gis@db/town"\nquery = "SELECT * FROM fema"\nwhere = "1=1"\n',
    )
    town.write_text(text, encoding="utf-8")
    with pytest.raises(LayerError) as info:
        read_layers(town, ruleset=ruleset)
    messages = [p.message for p in info.value.problems]
    assert "on_bad_feature = 'drop' is not an action." in messages
    assert any(
        m.startswith("coverage = 'flown_area.gpkg': neither town, extent nor") for m in messages
    )
    assert "max_sliver_sqft applies to zoning only." in messages
    assert any(m.startswith("none = False: only none = true has a meaning") for m in messages)
    assert "where applies to files; a PostGIS layer filters in its query." in messages
    assert len(messages) == 5


def test_coverage_from_a_polygon_file(tmp_path: Path, ruleset: Ruleset) -> None:
    """The flown area as a polygon in another CRS (EPSG:2263): lots 1 and 2 only."""
    town = write_town(tmp_path, buildings_extra='coverage = "flown_area.gpkg"')
    area = gpd.GeoDataFrame(
        geometry=[shapely.box(X0 - 10, Y0 - 10, X0 + 200, Y0 + 110)], crs=CRS
    ).to_crs("EPSG:2263")
    area.to_file(tmp_path / "flown_area.gpkg")
    layers = read_layers(town, ruleset=ruleset)
    coverage = layers.covers("buildings")
    assert coverage is not None
    assert shapely.area(coverage) == pytest.approx(210 * 120, abs=0.01)
    findings = run_rules(layers, proposals_on(CRS), ruleset, select=["SW206"])
    outcomes = findings.set_index("subject_id")["outcome"].to_dict()
    assert outcomes == {"D-1": "pass", "D-4": "review"}
    assert layers.reports["buildings"].coverage == str(tmp_path / "flown_area.gpkg")


def test_check_names_condominium_units_on_one_lot_together(town: Path, ruleset: Ruleset) -> None:
    layers = read_layers(town, ruleset=ruleset)
    disturbance = gpd.GeoDataFrame({"proposal_id": ["P-5"]}, geometry=[lot(4).buffer(-30)], crs=CRS)
    devices = gpd.GeoDataFrame(
        {"device_id": ["D-5"], "proposal_id": ["P-5"]},
        geometry=[shapely.Point(X0 + 450, Y0 + 50)],  # the centre of lot 5: 50.00 ft from its lines
        crs=CRS,
    )
    findings = run_rules(
        layers, make_proposals(CRS, disturbance, devices), ruleset, select=["SW205"]
    )
    row = findings.set_index("subject_id").loc["D-5"]
    assert row["outcome"] == "pass"
    assert float(row["measured"]) == pytest.approx(50.0, abs=0.005)
    assert row["message"].endswith(
        "(Parcel 1.1-1-5.C1 is the same lot as 1.1-1-5.C2: one geometry, several ids, such as "
        "condominium units.)"
    )


def test_after_skipping_a_remaining_problem_names_its_row_in_the_source(
    tmp_path: Path, ruleset: Ruleset
) -> None:
    """Slivers at rows 2-4 are skipped; the line at row 5 is still named row 5."""
    town = write_town(tmp_path)
    zoning = pyogrio.read_dataframe(tmp_path / "zoning.gpkg")
    line = gpd.GeoDataFrame(
        {"ZONE_TYPE": ["R-20"]},
        geometry=[shapely.LineString([(X0, Y0), (X0 + 5, Y0)])],
        crs=CRS,
    )
    frame = gpd.GeoDataFrame(
        pd.concat([zoning, line], ignore_index=True), geometry="geometry", crs=CRS
    )
    pyogrio.write_dataframe(frame, tmp_path / "zoning.gpkg", geometry_type="Unknown")
    with pytest.raises(LayerError) as info:
        read_layers(town, ruleset=ruleset)
    assert "1 feature(s) are LineString, not polygon: row 5." in str(info.value)


@pytest.mark.parametrize(
    ("inside_ft", "outcome"),
    [(19.99, "review"), (20.0, "pass"), (20.01, "pass")],
    ids=["19.99-ft-inside-the-flown-area", "20.00-ft-inside", "20.01-ft-inside"],
)
def test_a_pass_needs_the_rules_whole_reach_inside_the_coverage(
    tmp_path: Path, ruleset: Ruleset, inside_ft: float, outcome: str
) -> None:
    """SW206 looks 20 ft around a device: a device 19.99 ft inside the flown area's edge has
    not shown that no basement lies within 20 ft, outside it."""
    town = write_town(tmp_path, buildings_extra='coverage = "flown_area.gpkg"')
    edge_x = X0 + 200.0
    area = gpd.GeoDataFrame(geometry=[shapely.box(X0 - 10, Y0 - 10, edge_x, Y0 + 110)], crs=CRS)
    area.to_file(tmp_path / "flown_area.gpkg")
    layers = read_layers(town, ruleset=ruleset)
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P-7"]},
        geometry=[shapely.box(X0 + 150, Y0 + 40, X0 + 170, Y0 + 60)],
        crs=CRS,
    )
    devices = gpd.GeoDataFrame(
        {"device_id": ["D-7"], "proposal_id": ["P-7"]},
        geometry=[shapely.Point(edge_x - inside_ft, Y0 + 50)],  # B-1 is 120 ft away and more
        crs=CRS,
    )
    findings = run_rules(
        layers, make_proposals(CRS, disturbance, devices), ruleset, select=["SW206"]
    )
    row = findings.set_index("subject_id").loc["D-7"]
    assert row["outcome"] == outcome
