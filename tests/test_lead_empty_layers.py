"""An optional town layer with no features is refused, never a silent pass (issue 14).

An empty wells export (or one whose ``where`` keeps nothing, or whose every feature was
dropped as bad) would let SW202/SW210 pass "no well" on no data.  It is a clear error
naming the layer and the fix (declare ``none = true``); a window that finds nothing of a
layer that has features elsewhere is fine.  Data generated here, shaped like a county
GeoPackage export.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely

import gis_sw
from gis_sw.errors import LayerError
from gis_sw.layers.build import make_proposals
from gis_sw.layers.proposals import Proposals

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0
LOT_FT = 100.0
COLS = 20


def write_town(folder: Path, wells: gpd.GeoDataFrame) -> Path:
    """Write parcels, zoning and ``wells`` to one GeoPackage; return its path."""
    i = np.arange(COLS * COLS)
    x, y = X0 + (i % COLS) * LOT_FT, Y0 + (i // COLS) * LOT_FT
    parcels = gpd.GeoDataFrame(
        {"parcel_id": [f"1.{k}" for k in i]},
        geometry=shapely.box(x, y, x + LOT_FT, y + LOT_FT),
        crs=CRS,
    )
    side = COLS * LOT_FT
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-20"]}, geometry=[shapely.box(X0, Y0, X0 + side, Y0 + side)], crs=CRS
    )
    path = folder / "town.gpkg"
    for layer, frame in (("parcels", parcels), ("zoning", zoning), ("wells", wells)):
        pyogrio.write_dataframe(frame, path, layer=layer, driver="GPKG", geometry_type="Unknown")
    return path


def wells_at(*points: tuple[float, float]) -> gpd.GeoDataFrame:
    """Return a wells layer with one well at each (x, y)."""
    return gpd.GeoDataFrame(
        {"well_id": [f"W-{k}" for k in range(len(points))]},
        geometry=[shapely.Point(p) for p in points],
        crs=CRS,
    )


def manifest(folder: Path, wells_table: str) -> Path:
    """Write a layers manifest for the town with ``wells_table`` as its [wells] table."""
    path = folder / "layers.toml"
    path.write_text(
        f'[manifest]\ncrs = "{CRS}"\n\n[parcels]\npath = "town.gpkg"\nlayer = "parcels"\n\n'
        f'[zoning]\npath = "town.gpkg"\nlayer = "zoning"\n\n[wells]\n{wells_table}\n',
        encoding="utf-8",
    )
    return path


def addition() -> Proposals:
    """A 10 x 12 ft addition near the town's south-west corner."""
    box = shapely.box(X0 + 40, Y0 + 40, X0 + 50, Y0 + 52)
    return make_proposals(CRS, gpd.GeoDataFrame({"proposal_id": ["ADD1"]}, geometry=[box], crs=CRS))


def only_problem(error: pytest.ExceptionInfo[LayerError]) -> tuple[str, str, str]:
    (problem,) = error.value.problems
    return problem.layer, problem.message, problem.fix


@pytest.mark.parametrize("around", [None, "addition"])
def test_an_empty_wells_layer_is_refused_whole_and_by_window(
    tmp_path: Path, around: str | None
) -> None:
    path = write_town(tmp_path, wells_at()[:0])
    with pytest.raises(LayerError) as error:
        gis_sw.read_town(path, around=addition() if around else None)
    layer, message, fix = only_problem(error)
    assert layer == f"wells [{path}:wells]"
    assert message == "has no features, so the rules that rely on it could pass on no data."
    assert "([wells] none = true)" in fix


def test_a_window_with_no_well_near_reads_a_layer_that_has_wells(tmp_path: Path) -> None:
    far = (X0 + 1_950.0, Y0 + 1_950.0)  # 2,700 ft from the addition
    path = write_town(tmp_path, wells_at(far))
    town = gis_sw.read_town(path, around=addition())  # its window holds no well
    assert len(town.layers.get("wells")) == 1  # read again whole for the nearest (SW208)


def test_a_where_that_keeps_no_well_is_refused(tmp_path: Path) -> None:
    write_town(tmp_path, wells_at((X0 + 500.0, Y0 + 500.0)))
    layers = manifest(tmp_path, 'path = "town.gpkg"\nlayer = "wells"\nwhere = "well_id = \'X\'"')
    with pytest.raises(LayerError) as error:
        gis_sw.read_town(layers)
    _, message, _ = only_problem(error)
    assert message == (
        "has no features (where well_id = 'X' kept none), so the rules that rely on it could "
        "pass on no data."
    )


def test_wells_all_dropped_as_bad_are_refused(tmp_path: Path) -> None:
    wells = wells_at((X0 + 500.0, Y0 + 500.0), (X0 + 700.0, Y0 + 500.0))
    wells.loc[:, "geometry"] = None  # exported without their points
    write_town(tmp_path, wells)
    layers = manifest(tmp_path, 'path = "town.gpkg"\nlayer = "wells"\non_bad_feature = "skip"')
    with pytest.raises(LayerError) as error:
        gis_sw.read_town(layers)
    _, message, _ = only_problem(error)
    assert message.startswith("has no features left: all 2 were dropped as bad")


def test_wells_declared_none_are_read_and_said(tmp_path: Path) -> None:
    write_town(tmp_path, wells_at()[:0])
    town = gis_sw.read_town(manifest(tmp_path, "none = true"))
    assert town.layers.declared_none == ("wells",)
    assert len(town.layers.get("wells")) == 0
