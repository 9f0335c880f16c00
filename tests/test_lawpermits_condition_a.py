"""SW103 Condition A by discharge (issue 13 item 3): watersheds by overlap, water bodies by
where the runoff goes (D8 over the DEM), the applicant's attribute deciding when given."""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from affine import Affine
from pyproj import CRS as PROJ_CRS
from shapely.geometry import box

from gis_sw.analysis import permits
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.flow import FlowEnd, FlowGrid
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
ACRE = 43_560.0
CELL_FT = 5.0
# DEM: x 800-1800, y 800-1500, 5-ft cells (200 columns, 140 rows), north up
DEM_X0, DEM_Y1, DEM_COLS, DEM_ROWS = 800.0, 1500.0, 200, 140
# a 2-acre site: 290.4 x 300 ft = 87,120 sq ft, its north edge at y = 1300
SITE = box(1000.0, 1000.0, 1290.4, 1300.0)
# the brook: 20 ft wide, its south bank 10.00 ft north of the site
BROOK = box(900.0, 1310.0, 1600.0, 1330.0)


def dem(kind: str) -> RasterLayer:
    """Elevation, ft, at the cell centres: planes, a bowl or a flat."""
    cols = np.arange(DEM_COLS)
    rows = np.arange(DEM_ROWS)
    x = DEM_X0 + (cols + 0.5) * CELL_FT
    y = DEM_Y1 - (rows + 0.5) * CELL_FT
    xx, yy = np.meshgrid(x, y)
    if kind == "to-brook":  # rises 2 ft per 100 ft southwards: runoff runs north to the brook
        z = 100.0 + 0.02 * (DEM_Y1 - yy)
    elif kind == "away":  # rises northwards: runoff runs south, off the DEM's south edge
        z = 100.0 + 0.02 * (yy - 800.0)
    elif kind == "west":  # rises eastwards: runoff runs west, off the DEM's west edge
        z = 100.0 + 0.02 * (xx - 800.0)
    elif kind == "bowl":  # a closed depression centred on the site
        z = 100.0 + 0.001 * ((xx - 1147.5) ** 2 + (yy - 1152.5) ** 2)
    else:
        z = np.full(xx.shape, 100.0)
    transform = Affine(CELL_FT, 0.0, DEM_X0, 0.0, -CELL_FT, DEM_Y1)
    return RasterLayer("dem", z.astype("float64"), transform, PROJ_CRS.from_user_input(CRS))


def impaired(geom: Any = BROOK, listing: str | None = "303(d)") -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"name": ["Sample Brook"], "pollutant": ["phosphorus"], "listing": [listing]},
        geometry=[geom],
        crs=CRS,
    )


def context(
    ruleset: Ruleset,
    *,
    site: Any = SITE,
    water: gpd.GeoDataFrame | None = None,
    surface: str | None = None,
    flag: bool | None = None,
    larger_plan: bool | None = False,
) -> CheckContext:
    disturbance = gpd.GeoDataFrame({"proposal_id": ["P-1"]}, geometry=[site], crs=CRS)
    attrs = pd.DataFrame(
        {
            "proposal_id": ["P-1"],
            "discharges_to_impaired_water": [flag],
            "part_of_larger_plan": [larger_plan],
            "land_use": ["other"],
        }
    )
    vectors = {} if water is None else {"impaired_waters": water}
    rasters = {} if surface is None else {"dem": dem(surface)}
    return CheckContext(
        layers=make_layerset(CRS, vectors, rasters),
        proposals=make_proposals(CRS, disturbance, attributes=attrs),
        ruleset=ruleset,
    )


def condition_a(ctx: CheckContext) -> pd.Series:
    found = permits.check_post_construction(ctx)
    return found[found["subject_id"] == "P-1:condition-A"].iloc[0]


def test_site_is_two_acres_ten_feet_from_the_brook() -> None:
    assert SITE.area == pytest.approx(2 * ACRE)
    assert shapely.distance(SITE, BROOK) == pytest.approx(10.0)


def test_dem_sloping_to_the_brook_is_required(ruleset: Ruleset) -> None:
    found = condition_a(context(ruleset, water=impaired(), surface="to-brook"))
    assert found["outcome"] == "required"
    # the site's 59 x 60 cells all drain north; the top row's centres (y 1297.5) step
    # 1302.5, 1307.5 and enter the brook's first cell row (1310-1315) at 1312.5: 15.00 ft
    assert "into the impaired water body (Sample Brook)" in found["message"]
    assert "3,540 of the 3,540 DEM cells of the disturbance drain to it" in found["message"]
    assert "the shortest path 15.00 ft long" in found["message"]
    assert found["geometry"].geom_type == "LineString"
    assert found["geometry"].length == pytest.approx(15.0)
    assert shapely.intersects(found["geometry"], BROOK)


def test_dem_sloping_away_passes(ruleset: Ruleset) -> None:
    found = condition_a(context(ruleset, water=impaired(), surface="away"))
    assert found["outcome"] == "pass"
    assert (
        "every flow path from the 3,540 DEM cells of the disturbance leaves the DEM"
        in (found["message"])
    )
    assert "the nearest (Sample Brook) is 10.00 ft away" in found["message"]


def test_no_dem_is_review(ruleset: Ruleset) -> None:
    found = condition_a(context(ruleset, water=impaired()))
    assert found["outcome"] == "review"
    assert "is 10.00 ft away and no DEM was provided" in found["message"]


@pytest.mark.parametrize(
    ("surface", "what"),
    [
        pytest.param("bowl", "end in a closed depression (pit)", id="pit-is-review"),
        pytest.param("flat", "end in a flat area", id="flat-is-review"),
    ],
)
def test_pits_and_flats_are_review(ruleset: Ruleset, surface: str, what: str) -> None:
    found = condition_a(context(ruleset, water=impaired(), surface=surface))
    assert found["outcome"] == "review"
    assert what in found["message"]


def test_leaving_the_dem_next_to_where_the_water_runs_on_is_review(ruleset: Ruleset) -> None:
    # the brook runs on west beyond the DEM (x < 800); runoff leaves the DEM's west edge
    # 10 ft south of it, within edge_review_ft (500 ft): not shown to miss it
    brook = box(700.0, 1310.0, 1600.0, 1330.0)
    found = condition_a(context(ruleset, water=impaired(brook), surface="west"))
    assert found["outcome"] == "review"
    assert (
        "leave the DEM within 500 ft of where an impaired water body runs on" in (found["message"])
    )
    # the same DEM with the brook wholly inside it: every path leaves far from it
    found = condition_a(context(ruleset, water=impaired(), surface="west"))
    assert found["outcome"] == "pass"


def test_site_partly_outside_the_dem_is_review(ruleset: Ruleset) -> None:
    site = box(700.0, 1000.0, 990.4, 1300.0)  # its west 100 ft lie beyond x = 800
    found = condition_a(context(ruleset, site=site, water=impaired(), surface="away"))
    assert found["outcome"] == "review"
    assert "lies partly outside the DEM" in found["message"]


def test_water_cells_without_elevation_still_take_the_runoff(ruleset: Ruleset) -> None:
    raster = dem("to-brook")
    values = raster.values.copy()
    values[int((DEM_Y1 - 1330.0) / CELL_FT) : int((DEM_Y1 - 1310.0) / CELL_FT), :] = np.nan
    blank = RasterLayer("dem", values, raster.transform, raster.crs)
    grid = FlowGrid(blank, [BROOK])
    rows, cols = grid.cells_of(SITE)
    assert set(grid.trace(rows, cols).end.tolist()) == {FlowEnd.WATER}


@pytest.mark.parametrize(
    ("flag", "surface", "outcome"),
    [
        pytest.param(False, "to-brook", "pass", id="attribute-no-wins-over-DEM-to-brook"),
        pytest.param(True, "away", "required", id="attribute-yes-wins-over-DEM-away"),
    ],
)
def test_the_attribute_wins(ruleset: Ruleset, flag: bool, surface: str, outcome: str) -> None:
    found = condition_a(context(ruleset, water=impaired(), surface=surface, flag=flag))
    assert found["outcome"] == outcome
    assert "which decides over the layers" in found["message"]


@pytest.mark.parametrize(
    ("gap_ft", "outcome"),
    [
        pytest.param(0.0, "required", id="touching-a-TMDL-watershed"),
        pytest.param(0.01, "pass", id="0.01-ft-outside-a-TMDL-watershed"),
        pytest.param(-0.01, "required", id="0.01-ft-inside-a-TMDL-watershed"),
    ],
)
def test_watersheds_are_judged_by_overlap(ruleset: Ruleset, gap_ft: float, outcome: str) -> None:
    shed = box(1290.4 + gap_ft, 900.0, 1700.0, 1400.0)
    found = condition_a(context(ruleset, water=impaired(shed, "TMDL watershed")))
    assert found["outcome"] == outcome  # no DEM needed for a watershed


def test_water_body_overlapped_is_required_without_dem(ruleset: Ruleset) -> None:
    brook = box(1280.4, 900.0, 1300.4, 1400.0)  # 10 ft of the site's width lies in it
    found = condition_a(context(ruleset, water=impaired(brook)))
    assert found["outcome"] == "required"
    assert found["geometry"].area == pytest.approx(10.0 * 300.0)


def test_flow_east_of_the_brooks_end_runs_past_it_off_the_dem() -> None:
    # on the DEM sloping north, cells east of the brook's east end (x 1600) run due north
    # past it and leave the DEM's north edge; the site's cells all enter the brook
    grid = FlowGrid(dem("to-brook"), [BROOK])
    rows, cols = grid.cells_of(box(1650.0, 900.0, 1700.0, 950.0))
    result = grid.trace(rows, cols)
    assert set(result.end.tolist()) == {FlowEnd.EDGE}
    assert set(result.end_row.tolist()) == {0}  # the last cell inside is on the top row
    rows, cols = grid.cells_of(SITE)
    assert set(grid.trace(rows, cols).end.tolist()) == {FlowEnd.WATER}


@pytest.mark.parametrize(
    ("gap_ft", "outcome"),
    [
        pytest.param(0.0, "required", id="touching-an-impaired-water-body"),
        pytest.param(0.01, "review", id="0.01-ft-from-it-without-DEM-is-review"),
    ],
)
def test_water_body_touching_or_not(ruleset: Ruleset, gap_ft: float, outcome: str) -> None:
    brook = box(1290.4 + gap_ft, 900.0, 1310.4, 1400.0)
    assert condition_a(context(ruleset, water=impaired(brook)))["outcome"] == outcome


@pytest.mark.parametrize(
    ("south_bank_y", "outcome"),
    [
        # the site's top-row cell centres (y 1297.5) are where its runoff leaves the west edge;
        # a brook wholly beyond the DEM's north edge lies (y - 1297.5) ft from them
        pytest.param(1797.49, "review", id="leaves-499.99-ft-from-water-beyond-the-edge"),
        pytest.param(1797.5, "review", id="leaves-500.00-ft-from-water-beyond-the-edge"),
        pytest.param(1797.51, "pass", id="leaves-500.01-ft-from-water-beyond-the-edge"),
    ],
)
def test_edge_review_distance(ruleset: Ruleset, south_bank_y: float, outcome: str) -> None:
    brook = box(700.0, south_bank_y, 1600.0, south_bank_y + 20.0)
    found = condition_a(context(ruleset, water=impaired(brook), surface="west"))
    assert found["outcome"] == outcome


def _naive_ends(z: np.ndarray, water: np.ndarray, cell_ft: float) -> dict[tuple[int, int], Any]:
    """One cell at a time, in plain Python: the reading of the module docstring."""
    rows, cols = z.shape
    order = [(-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1)]

    def height(i: int, j: int) -> float:
        if 0 <= i < rows and 0 <= j < cols:
            return float(z[i, j])
        ii, jj = min(max(i, 0), rows - 1), min(max(j, 0), cols - 1)  # odd reflection
        if i != ii:
            return 2 * height(ii, j) - height(2 * ii - i, j)
        return 2 * float(z[ii, jj]) - float(z[ii, 2 * jj - j])

    out = {}
    for i0 in range(rows):
        for j0 in range(cols):
            i, j, n = i0, j0, 0
            while True:
                drops = [
                    (height(i, j) - height(i + di, j + dj)) / (cell_ft * np.hypot(di, dj))
                    for di, dj in order
                ]
                k = int(np.argmax(drops))
                if drops[k] <= 0:
                    out[i0, j0] = ("flat" if 0.0 in drops else "pit", i, j, n)
                    break
                ni, nj = i + order[k][0], j + order[k][1]
                if not (0 <= ni < rows and 0 <= nj < cols):
                    out[i0, j0] = ("edge", i, j, n)
                    break
                i, j, n = ni, nj, n + 1
                if water[i, j]:
                    out[i0, j0] = ("water", i, j, n)
                    break
    return out


def test_merged_paths_end_where_each_path_alone_ends() -> None:
    rng = np.random.default_rng(183)
    z = rng.integers(0, 6, size=(24, 30)).astype("float64") + np.linspace(0, 3, 30)[None, :]
    raster = RasterLayer("dem", z, Affine(10, 0, 0, 0, -10, 240), PROJ_CRS.from_user_input(CRS))
    brook = box(0, 100, 60, 110)  # cells of row 13, columns 0-5
    grid = FlowGrid(raster, [brook])
    rows, cols = np.nonzero(np.ones(z.shape, dtype=bool))
    result = grid.trace(rows, cols)
    naive = _naive_ends(z, grid.target, 10.0)
    names = {FlowEnd.WATER: "water", FlowEnd.EDGE: "edge", FlowEnd.PIT: "pit", FlowEnd.FLAT: "flat"}
    got = {
        (int(i), int(j)): (names[FlowEnd(e)], int(ei), int(ej), int(n))
        for i, j, e, ei, ej, n in zip(
            rows, cols, result.end, result.end_row, result.end_col, result.steps, strict=True
        )
    }
    assert got == naive
    assert {v[0] for v in naive.values()} >= {"water", "edge", "pit"}
