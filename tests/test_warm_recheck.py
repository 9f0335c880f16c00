"""A warm re-check in a long-lived `gis_sw.Town` gives the findings of a cold check.

On a generated town (not the committed sample), proposals near a wetland, across a wetland's
edge, beside a well (a vehicle-traffic device inside the 50 ft and 100 ft distances), on the
town's edge, with a new roof, and one dragged 0.37 ft at a time, are screened again and
again in one `Town` (so every cache it keeps is used: the layers' cuts, the nearest
features, the flow grid, the wetland bands), in an order that mixes them.  Every re-check
must equal the first screening of that proposal on a fresh `Town` exactly, and the whole
town's `run_rules` as tests/test_api.py compares them.
"""

from __future__ import annotations

import dataclasses

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from gis_sw.analysis.engine import run_rules
from gis_sw.api import Town
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset, load_ruleset
from gis_sw.sample import build_town

CRS = "EPSG:2260"


@pytest.fixture(scope="module")
def rules() -> Ruleset:
    return load_ruleset(None)


@pytest.fixture(scope="module")
def generated():
    return build_town(parcels=400, seed=7)


def _layers(generated):
    """The generated town with a second impaired water, a pond beyond its DEM's west edge.

    So that which impaired water is nearest, and how far, differs between proposals.
    """
    vectors = dict(generated.vectors)
    minx, miny, _, _ = generated.rasters["dem"].bounds
    pond = shapely.box(minx - 300.0, miny + 150.0, minx - 240.0, miny + 200.0)
    waters = vectors["impaired_waters"]
    row = gpd.GeoDataFrame(
        {c: [None] * 1 for c in waters.columns if c != "geometry"}, geometry=[pond], crs=CRS
    )
    row["name"], row["listing"] = "Corner Pond", "303(d)"
    vectors["impaired_waters"] = pd.concat([waters, row], ignore_index=True)
    return make_layerset(CRS, vectors, generated.rasters, source="<generated town>")


def _box(point: shapely.Point, dx: float = 5.0, dy: float = 6.0) -> shapely.Polygon:
    """A 10 x 12 ft addition centred on ``point``."""
    return shapely.box(point.x - dx, point.y - dy, point.x + dx, point.y + dy)


def _proposal(pid: str, addition: shapely.Geometry, devices=(), roof=None) -> Proposals:
    disturbance = gpd.GeoDataFrame({"proposal_id": [pid]}, geometry=[addition], crs=CRS)
    frame = None
    if devices:
        frame = gpd.GeoDataFrame(
            {
                "proposal_id": [pid] * len(devices),
                "device_id": [f"{pid}-D{i + 1}" for i in range(len(devices))],
                "device_type": ["drywell"] * len(devices),
                "serves_vehicle_traffic": [True] * len(devices),
                "bottom_elevation_ft": [100.0] * len(devices),
                "has_sedimentation_device": [True] * len(devices),
            },
            geometry=list(devices),
            crs=CRS,
        )
    impervious = None
    if roof is not None:
        impervious = gpd.GeoDataFrame(
            {"proposal_id": [pid], "surface": ["roof"]}, geometry=[roof], crs=CRS
        )
    return make_proposals(CRS, disturbance, frame, impervious=impervious)


def _cases(generated) -> dict[str, Proposals]:
    """The proposals, by what they are near."""
    parcels = generated.vectors["parcels"]
    minx, miny, maxx, maxy = parcels.total_bounds
    dem_minx, dem_miny, _, _ = generated.rasters["dem"].bounds
    centre = shapely.Point((minx + maxx) / 2, (miny + maxy) / 2)
    # far apart, so each neighbourhood is another part of the town
    wetlands = generated.vectors["wetlands"].geometry
    wetland = wetlands.iloc[int(np.argmax(wetlands.distance(centre)))]
    wells = generated.vectors["wells"].geometry
    well = wells.iloc[int(np.argmin(wells.distance(shapely.Point(maxx, maxy))))]
    lot = parcels.geometry.iloc[int(np.argmin(parcels.distance(centre)))]
    middle = lot.representative_point()
    # 30 ft outside the wetland: in its adjacent area, not in it
    ring = shapely.buffer(wetland, 30.0).exterior
    band_point = next(
        p
        for p in (ring.interpolate(f / 20, normalized=True) for f in range(20))
        if not shapely.intersects(_box(p), wetlands.to_numpy()).any()
    )
    edge_point = wetland.exterior.interpolate(0.6, normalized=True)
    corner = shapely.Point(dem_minx - 30.0, dem_miny + 175.0)  # beyond the DEM, by the pond
    return {
        "middle": _proposal("MIDDLE", _box(middle)),
        "wetland-band": _proposal("BAND", _box(band_point)),
        "wetland-edge": _proposal("EDGE", _box(edge_point)),
        "well": _proposal(
            "WELL",
            _box(shapely.Point(well.x + 30.0, well.y)),
            devices=[shapely.Point(well.x + 30.0, well.y), shapely.Point(well.x + 45.0, well.y)],
        ),
        "town-edge": _proposal("CORNER", _box(corner, 12.0, 12.0)),
        "south-edge": _proposal("SOUTH", _box(shapely.Point(dem_minx + 1500.0, dem_miny - 9.0))),
        "new-roof": _proposal(
            "ROOF",
            _box(middle, 20.0, 20.0),
            roof=_box(middle, 8.0, 10.0),
            devices=[shapely.Point(middle.x + 15.0, middle.y + 15.0)],
        ),
    }


def _moved(proposals: Proposals, by_ft: float) -> Proposals:
    """The proposals with every geometry moved ``by_ft`` east and north (a drag)."""

    def shift(frame: gpd.GeoDataFrame | None) -> gpd.GeoDataFrame | None:
        if frame is None or not len(frame):
            return frame
        out = frame.copy()
        out.geometry = shapely.transform(frame.geometry.to_numpy(), lambda xy: xy + by_ft)
        return out

    return dataclasses.replace(
        proposals,
        disturbance=shift(proposals.disturbance),
        devices=shift(proposals.devices),
        impervious=shift(proposals.impervious),
    )


def _equal(warm: pd.DataFrame, cold: pd.DataFrame) -> None:
    """Equal findings, every column and every geometry exactly."""
    warm, cold = warm.reset_index(drop=True), cold.reset_index(drop=True)
    columns = [c for c in cold.columns if c != "geometry"]
    pd.testing.assert_frame_equal(warm[columns], cold[columns], check_exact=True)
    assert list(shapely.to_wkb(warm.geometry.to_numpy())) == list(
        shapely.to_wkb(cold.geometry.to_numpy())
    )


def test_warm_rechecks_equal_cold_checks_near_wetlands_wells_and_the_edge(generated, rules):
    layers = _layers(generated)
    cases = _cases(generated)
    drag = [_moved(cases["middle"], 0.37 * k) for k in range(1, 4)]
    drag += [_moved(cases["well"], 0.37 * k) for k in range(1, 3)]
    order = [*cases.values(), *drag, *reversed(list(cases.values())), drag[0], *cases.values()]
    town = Town(layers, rules)
    cold: dict[int, pd.DataFrame] = {}
    for proposals in order:
        key = id(proposals)
        if key not in cold:
            cold[key] = Town(layers, rules).screen(proposals, siting=False).findings
        _equal(town.screen(proposals, siting=False).findings, cold[key])
    # what each case is there for (so a change of the generated town cannot empty the test)
    outcome = {
        (f["proposal_id"], f["subject_id"]): f["outcome"]
        for _, f in pd.concat(list(cold.values())).iterrows()
    }
    assert outcome[("BAND", "BAND:wetland_adjacent_area")] == "required"
    assert outcome[("BAND", "BAND:wetlands")] == "pass"
    assert outcome[("EDGE", "EDGE:wetlands")] == "required"
    assert outcome[("WELL", "WELL-D1")] in {"fail", "review"}
    assert outcome[("CORNER", "CORNER:condition-A")] == "review"
    assert outcome[("SOUTH", "SOUTH:condition-A")] == "review"
    assert any(sid.startswith("ROOF:building") for _, sid in outcome)
    said = {
        f["proposal_id"]: f["message"]
        for _, f in pd.concat(list(cold.values())).iterrows()
        if f["rule_id"] == "SW103" and f["subject_id"].endswith(":condition-A")
    }
    waters = layers.vectors["impaired_waters"]
    for pid in ("CORNER", "SOUTH"):  # off the DEM: the nearest impaired water, measured here
        (addition,) = cases["town-edge" if pid == "CORNER" else "south-edge"].disturbance.geometry
        gaps = shapely.distance(addition, waters.geometry.to_numpy())
        assert "outside the DEM" in said[pid]
        assert f"({waters['name'].iloc[int(np.argmin(gaps))]})" in said[pid]
        gap = float(shapely.distance(addition, shapely.union_all(waters.geometry.to_numpy())))
        assert f"is {gap:,.2f} ft away" in said[pid]
    assert "(Corner Pond)" in said["CORNER"]


def test_warm_rechecks_equal_the_whole_town(generated, rules):
    layers = _layers(generated)
    town = Town(layers, rules)
    for proposals in [*_cases(generated).values(), *_cases(generated).values()]:
        whole = run_rules(layers, proposals, rules)
        warm = town.screen(proposals, siting=False).findings
        _equal_but_ties(warm, whole)


def _equal_but_ties(warm: pd.DataFrame, whole: pd.DataFrame) -> None:
    """As tests/test_api.py: a tie for the nearest feature may name either of equals."""
    warm, whole = warm.reset_index(drop=True), whole.reset_index(drop=True)
    columns = [c for c in whole.columns if c not in ("message", "geometry")]
    pd.testing.assert_frame_equal(warm[columns], whole[columns])
    for rule, a, b in zip(whole["rule_id"], warm["message"], whole["message"], strict=True):
        assert a == b or rule in {"SW201", "SW208"}, (a, b)


def test_a_well_without_a_location_makes_the_warm_recheck_review(rules):
    """No index finds a feature without geometry: `Town.local` must keep it, or SW210 passed."""
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["A", "B"]},
        geometry=[shapely.box(0, 0, 200, 200), shapely.box(200, 0, 400, 200)],
        crs=CRS,
    )
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-40"]}, geometry=[shapely.box(-99, -99, 2e3, 2e3)], crs=CRS
    )
    wells = gpd.GeoDataFrame(
        {"well_id": ["W1", "W2"]}, geometry=[shapely.Point(1500, 1500), None], crs=CRS
    )
    layers = make_layerset(CRS, {"parcels": parcels, "zoning": zoning, "wells": wells})
    proposals = _proposal("P", shapely.box(50, 50, 150, 150), devices=[shapely.Point(100, 100)])
    select = ["SW208", "SW210"]
    whole = run_rules(layers, proposals, rules, select=select)
    town = Town(layers, rules)
    for _ in range(2):
        warm = town.screen(proposals, siting=False, select=select).findings
        assert warm["outcome"].tolist() == ["review", "review"]
        assert warm["message"].tolist() == whole["message"].tolist()
        assert "wells: W2 (no geometry)" in warm["message"].iloc[1]
