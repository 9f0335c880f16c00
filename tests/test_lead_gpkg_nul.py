"""findings.gpkg keeps what follows a NUL in a text value (GDAL would cut the value there)."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pandas as pd
import pyogrio
import shapely

from gis_sw.outputs.geopackage import NUL_STANDIN, gdal_text, write_findings_geopackage


def _findings() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {
            "finding_id": pd.Series(["f1", "f2", "f3"], dtype="str"),
            "proposal_id": pd.Series(["a\x00b", "plain", None], dtype="str"),
            "message": pd.Series(["x", "tail \x00 after\x00", "y"], dtype=object),
            "outcome": ["fail", "pass", "review"],
        },
        geometry=[shapely.box(0, 0, 10, 10), shapely.Point(1, 1), None],
        crs="EPSG:2260",
    )


def test_nul_is_written_as_its_symbol_and_nothing_after_it_is_lost(tmp_path: Path) -> None:
    path = write_findings_geopackage(tmp_path / "findings.gpkg", _findings())
    table = pyogrio.read_dataframe(path, layer="findings")
    assert table["proposal_id"].tolist()[:2] == [f"a{NUL_STANDIN}b", "plain"]
    assert table["proposal_id"].isna().tolist() == [False, False, True]
    assert table["message"].tolist() == ["x", f"tail {NUL_STANDIN} after{NUL_STANDIN}", "y"]
    polygons = pyogrio.read_dataframe(path, layer="findings_polygons")
    assert polygons["proposal_id"].tolist() == [f"a{NUL_STANDIN}b"]
    points = pyogrio.read_dataframe(path, layer="findings_points")
    assert points["message"].tolist() == [f"tail {NUL_STANDIN} after{NUL_STANDIN}"]


def test_frames_without_nul_are_returned_unchanged() -> None:
    frame = pd.DataFrame({"a": ["x", None], "b": [1.5, 2.0], "c": [True, None]})
    assert gdal_text(frame) is frame
    mixed = pd.DataFrame({"a": ["n\x00", 3, None]})
    assert gdal_text(mixed)["a"].tolist() == [f"n{NUL_STANDIN}", 3, None]
