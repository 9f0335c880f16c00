"""A tiny town built in code for the map and web-map tests (EPSG:2260, feet).

Six by four lots of 100 ft x 100 ft; the west half zoned R-10, the east half R-20; a wetland,
a pond, a floodplain strip, a well, a septic field and two houses (one with a habitable
basement).  Proposal ``P-1`` disturbs part of lot 1-2 and has a drywell 9 ft from its lot line;
``P-BIG`` is 500 ft wide (fits ANSI B at 1" = 50' only); ``P-HUGE`` is 1,500 ft wide (a map
book).
"""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import shapely

from gis_sw.analysis.engine import complete_findings
from gis_sw.analysis.findings import make_findings
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

X0, Y0 = 687_000.0, 830_000.0
CRS = "EPSG:2260"
EVIL = "<script>window.__pwned = 1</script>"


def town() -> LayerSet:
    lots = []
    ids = []
    owners = []
    for row in range(4):
        for col in range(6):
            x, y = X0 + col * 100, Y0 + row * 100
            lots.append(shapely.box(x, y, x + 100, y + 100))
            ids.append(f"{row + 1}-{col + 1}")
            owners.append(EVIL if (row, col) == (0, 1) else f"Owner {row}{col}")
    parcels = gpd.GeoDataFrame({"parcel_id": ids, "owner": owners}, geometry=lots, crs=CRS)
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-10", "R-20"]},
        geometry=[
            shapely.box(X0, Y0, X0 + 300, Y0 + 400),
            shapely.box(X0 + 300, Y0, X0 + 600, Y0 + 400),
        ],
        crs=CRS,
    )
    wetlands = gpd.GeoDataFrame(
        {"wetland_id": ["W1"], "name": ["Saw Mill fen"]},
        geometry=[shapely.box(X0 + 420, Y0 + 250, X0 + 520, Y0 + 330)],
        crs=CRS,
    )
    water = gpd.GeoDataFrame(
        {"water_id": ["POND1"], "name": ["Mill pond"]},
        geometry=[shapely.Point(X0 + 470, Y0 + 60).buffer(30)],
        crs=CRS,
    )
    flood = gpd.GeoDataFrame(
        {"flood_zone": ["AE"]}, geometry=[shapely.box(X0 + 400, Y0, X0 + 600, Y0 + 120)], crs=CRS
    )
    wells = gpd.GeoDataFrame(
        {"well_id": ["WELL1"]}, geometry=[shapely.Point(X0 + 250, Y0 + 160)], crs=CRS
    )
    septic = gpd.GeoDataFrame(
        {"septic_id": ["S1"]}, geometry=[shapely.box(X0 + 210, Y0 + 20, X0 + 250, Y0 + 50)], crs=CRS
    )
    buildings = gpd.GeoDataFrame(
        {"building_id": ["B1", "B2"], "habitable_basement": [True, False]},
        geometry=[
            shapely.box(X0 + 130, Y0 + 55, X0 + 170, Y0 + 85),
            shapely.box(X0 + 20, Y0 + 120, X0 + 60, Y0 + 150),
        ],
        crs=CRS,
    )
    return make_layerset(
        CRS,
        {
            "parcels": parcels,
            "zoning": zoning,
            "wetlands": wetlands,
            "water_bodies": water,
            "floodplain": flood,
            "wells": wells,
            "septic_fields": septic,
            "buildings": buildings,
        },
    )


def proposals() -> Proposals:
    disturbance = gpd.GeoDataFrame(
        {
            "proposal_id": ["P-1", "P-1", "P-BIG", "P-HUGE"],
            "phase": ["1", "2", None, None],
        },
        geometry=[
            shapely.box(X0 + 105, Y0 + 10, X0 + 190, Y0 + 50),
            shapely.box(X0 + 150, Y0 + 10, X0 + 195, Y0 + 95),
            shapely.box(X0 + 50, Y0 + 50, X0 + 550, Y0 + 350),
            shapely.box(X0 - 450, Y0 - 100, X0 + 1050, Y0 + 500),
        ],
        crs=CRS,
    )
    devices = gpd.GeoDataFrame(
        {
            "device_id": ["DW-1", "DW-2"],
            "proposal_id": ["P-1", "P-1"],
            "serves_vehicle_traffic": [False, True],
        },
        geometry=[shapely.Point(X0 + 191, Y0 + 30), shapely.Point(X0 + 120, Y0 + 30)],
        crs=CRS,
    )
    attributes = pd.DataFrame(
        {"proposal_id": ["P-1", "P-BIG", "P-HUGE"], "name": [EVIL, "Big lot", "Subdivision"]}
    )
    return make_proposals(CRS, disturbance, devices, attributes)


def findings(ruleset: Ruleset) -> gpd.GeoDataFrame:
    rows = [
        make_findings(
            "SW205",
            ruleset.working_crs,
            proposal_id="P-1",
            subject_id="DW-1",
            outcome="fail",
            message="Device DW-1 is 9.0 ft from the property line; the law asks for 10 ft.",
            measured=9.0,
            threshold=10.0,
            unit="ft",
            geometry=shapely.LineString([(X0 + 191, Y0 + 30), (X0 + 200, Y0 + 30)]),
        ),
        make_findings(
            "SW206",
            ruleset.working_crs,
            proposal_id="P-1",
            subject_id="DW-2",
            outcome="fail",
            message="Device DW-2 is 15.0 ft from building B1 with a habitable basement.",
            measured=15.0,
            threshold=20.0,
            unit="ft",
            geometry=shapely.LineString([(X0 + 120, Y0 + 30), (X0 + 130, Y0 + 41.18)]),
        ),
        make_findings(
            "SW201",
            ruleset.working_crs,
            proposal_id="P-1",
            subject_id="DW-2",
            outcome="review",
            message="No DEM: whether DW-2 is up-gradient of septic field S1 cannot be told.",
            geometry=shapely.Point(X0 + 120, Y0 + 30),
        ),
        make_findings(
            "SW207",
            ruleset.working_crs,
            proposal_id="P-1",
            subject_id="DW-1",
            outcome="fail",
            message="Device DW-1 has no sedimentation device.",
        ),
        make_findings(
            "SW101",
            ruleset.working_crs,
            proposal_id="P-1",
            subject_id="P-1",
            outcome="required",
            message="A stormwater management control permit is required.",
            measured=5225.0,
            threshold=250.0,
            unit="sq ft",
            geometry=shapely.box(X0 + 105, Y0 + 10, X0 + 195, Y0 + 95),
        ),
    ]
    frame = gpd.GeoDataFrame(pd.concat(rows, ignore_index=True), crs=ruleset.working_crs)
    return complete_findings(frame, ruleset)
