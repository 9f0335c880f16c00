"""SW103 Condition A over a DEM read in a window: a flow path that leaves the window, where
the file goes on, has not left the DEM, so it is ``review``, never ``pass``.

A county DEM is read only over the area the other layers need (the town's extent grown by
the largest distance); before this, a path crossing the window's edge counted as leaving the
DEM, and a site whose runoff runs 600 ft south to a brook beyond the window passed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rasterio
from affine import Affine
from pyproj import CRS as PROJ_CRS

from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.rasters_io import read_raster
from gis_sw.ruleset import Ruleset
from tests.test_lawpermits_condition_a import (
    CELL_FT,
    CRS,
    DEM_COLS,
    DEM_ROWS,
    DEM_X0,
    DEM_Y1,
    condition_a,
    context,
    dem,
    impaired,
)

WINDOW_NOTE = (
    "leave the part of the DEM that was read (the area the other layers need), where the file "
    "goes on beyond it"
)


def _with_extent(layer: RasterLayer, extent: tuple[float, float, float, float] | None):
    return RasterLayer(
        layer.kind, layer.values, layer.transform, layer.crs, layer.mode, layer.source, extent
    )


def _ctx_with(ruleset: Ruleset, layer: RasterLayer):
    ctx = context(ruleset, water=impaired(), surface="away")
    ctx.layers.rasters["dem"] = layer
    return ctx


def test_window_edge_where_the_file_goes_on_is_review(ruleset: Ruleset) -> None:
    # "away" falls south off the grid's south edge (y = 800); the file goes on to y = 0
    layer = _with_extent(dem("away"), (DEM_X0, 0.0, DEM_X0 + DEM_COLS * CELL_FT, DEM_Y1))
    found = condition_a(_ctx_with(ruleset, layer))
    assert found["outcome"] == "review"
    assert f"3,540 {WINDOW_NOTE}" in found["message"]


def test_window_edge_that_is_the_file_edge_passes(ruleset: Ruleset) -> None:
    # the window's south edge is the file's: the path does leave the DEM there
    layer = _with_extent(dem("away"), (DEM_X0, 800.0, DEM_X0 + DEM_COLS * CELL_FT, 3000.0))
    found = condition_a(_ctx_with(ruleset, layer))
    assert found["outcome"] == "pass"
    assert "leaves the DEM at its edge" in found["message"]


@pytest.mark.parametrize(
    ("south_ft", "outcome"),
    [
        pytest.param(800.0 - CELL_FT, "review", id="one-more-file-row-is-review"),
        pytest.param(800.0, "pass", id="no-more-file-rows-passes"),
    ],
)
def test_one_cell_of_file_beyond_the_window(ruleset: Ruleset, south_ft: float, outcome: str):
    # the exit cells' centres lie 2.5 ft north of the grid's south edge (y = 802.50): with
    # one more file row beyond that edge they are more than a cell inside the file's extent
    extent = (DEM_X0 - 1000.0, south_ft - 0.01, DEM_X0 + 2000.0, DEM_Y1 + 1000.0)
    found = condition_a(_ctx_with(ruleset, _with_extent(dem("away"), extent)))
    assert found["outcome"] == outcome


def _county_dem(path: Path) -> None:
    """A 'county' DEM: 5-ft cells, x 0-4000, y 0-3000, rising northwards (runoff runs south)."""
    cols, rows = 800, 600
    y = 3000.0 - (np.arange(rows) + 0.5) * CELL_FT
    z = np.repeat((100.0 + 0.02 * y)[:, None], cols, axis=1).astype("float32")
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=cols,
        height=rows,
        count=1,
        dtype="float32",
        crs=CRS,
        transform=Affine(CELL_FT, 0.0, 0.0, 0.0, -CELL_FT, 3000.0),
        nodata=-9999.0,
    ) as dst:
        dst.write(z, 1)
        dst.update_tags(units="ft")


def test_county_dem_read_in_a_window_keeps_the_file_extent(tmp_path: Path, ruleset) -> None:
    path = tmp_path / "county_dem.tif"
    _county_dem(path)
    working = PROJ_CRS.from_user_input(CRS)
    area = (DEM_X0, DEM_Y1 - DEM_ROWS * CELL_FT, DEM_X0 + DEM_COLS * CELL_FT, DEM_Y1)
    layer, _ = read_raster(path, kind="dem", working_crs=working, units="ft", area=area)
    assert layer.file_extent == (0.0, 0.0, 4000.0, 3000.0)
    assert layer.bounds[1] > 0.0  # only a window was read
    found = condition_a(_ctx_with(ruleset, layer))
    assert found["outcome"] == "review"
    assert WINDOW_NOTE in found["message"]
    whole, _ = read_raster(path, kind="dem", working_crs=working, units="ft")
    assert whole.file_extent is None
    assert condition_a(_ctx_with(ruleset, whole))["outcome"] == "pass"


def test_impaired_water_without_geometry_is_review_not_a_crash(ruleset: Ruleset) -> None:
    import geopandas as gpd
    import pandas as pd

    from gis_sw.analysis.engine import run_rules

    waters = pd.concat([impaired(), impaired(None)], ignore_index=True)
    waters = gpd.GeoDataFrame(waters, geometry="geometry", crs=CRS)
    ctx = context(ruleset, water=waters, surface="away")
    found = condition_a(ctx)  # the check alone reads the located brook: flows away
    assert found["outcome"] == "pass"
    findings = run_rules(ctx.layers, ctx.proposals, ruleset, select=["SW103"])
    row = findings[findings["subject_id"] == "P-1:condition-A"].iloc[0]
    assert row["outcome"] == "review"  # the engine: a feature of the layer has no location
    assert "no geometry" in row["message"]
