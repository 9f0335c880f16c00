"""findings.gpkg with text columns handed to GDAL as they are: the layers the plain path wrote.

The reference writes the same findings with every text column turned into Python strings
first (what gis_sw did before); both files are read back and compared layer by layer:
fields, types, values, geometries.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from gis_sw.outputs.geojson import FAMILY_FILES, plain_properties, split_by_family
from gis_sw.outputs.geopackage import write_findings_geopackage

CRS = "EPSG:2260"
TEXTS = ["=cmd|' /C calc'!A0", "esc \x1b[31m \x07", "<b>&amp;</b>", "土地-12", "Ωμέγα", "", "a\nb"]


def _findings(rows: int) -> gpd.GeoDataFrame:
    shapes = [
        lambda i: shapely.box(i, 0, i + 20, 20),
        lambda i: shapely.LineString([(0, 0), (9.99, i)]),
        lambda i: shapely.Point(i, 1),
        lambda i: None,
        lambda i: shapely.MultiPolygon([shapely.box(0, 0, 1, 1), shapely.box(3, 3, 4, 5)]),
    ]
    return gpd.GeoDataFrame(
        {
            "finding_id": pd.Series([f"{i:016x}" for i in range(rows)], dtype="str"),
            "proposal_id": pd.Series([TEXTS[i % len(TEXTS)] for i in range(rows)], dtype="str"),
            "message": pd.Series(
                [None if i % 4 == 0 else TEXTS[(i * 3) % len(TEXTS)] for i in range(rows)],
                dtype="str",
            ),
            "outcome": pd.Series(["fail", "pass", None][i % 3] for i in range(rows)),
            "measured": [[260.0, -0.0, np.nan, 9.99][i % 4] for i in range(rows)],
            "threshold": pd.Series([250, None][i % 2] for i in range(rows)),
            "waived": pd.Series([True, False, None][i % 3] for i in range(rows)),
            "waiver_reason": pd.Series([None] * rows, dtype="str"),
        },
        geometry=[shapes[i % len(shapes)](i) for i in range(rows)],
        crs=CRS,
    )


def _reference(path: Path, findings: gpd.GeoDataFrame) -> None:
    parts = split_by_family(findings)
    table = pd.DataFrame(plain_properties(findings).drop(columns="geometry"))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="'crs' was not provided")
        pyogrio.write_dataframe(table, path, driver="GPKG", layer="findings", use_arrow=True)
    for family, (_, kind) in FAMILY_FILES.items():
        frame = plain_properties(gpd.GeoDataFrame(parts[family], geometry="geometry", crs=CRS))
        pyogrio.write_dataframe(
            frame,
            path,
            driver="GPKG",
            layer=f"findings_{family}",
            geometry_type=kind,
            promote_to_multi=True,
            use_arrow=True,
        )


def test_geopackage_layers_equal_the_plain_path(tmp_path: Path) -> None:
    findings = _findings(60)
    mine = write_findings_geopackage(tmp_path / "findings.gpkg", findings)
    _reference(tmp_path / "reference.gpkg", findings)
    layers = [name for name, _ in pyogrio.list_layers(tmp_path / "reference.gpkg")]
    assert [name for name, _ in pyogrio.list_layers(mine)] == layers
    assert sorted(layers) == ["findings", "findings_lines", "findings_points", "findings_polygons"]
    for layer in layers:
        a = pyogrio.read_info(mine, layer=layer)
        b = pyogrio.read_info(tmp_path / "reference.gpkg", layer=layer)
        for key in ("fields", "dtypes", "geometry_type", "crs", "features"):
            assert str(a[key]) == str(b[key]), (layer, key)
        x = pyogrio.read_dataframe(mine, layer=layer)
        y = pyogrio.read_dataframe(tmp_path / "reference.gpkg", layer=layer)
        pd.testing.assert_frame_equal(
            pd.DataFrame(x.drop(columns="geometry", errors="ignore")),
            pd.DataFrame(y.drop(columns="geometry", errors="ignore")),
        )
        if "geometry" in y:
            assert (x.geometry.to_wkb() == y.geometry.to_wkb()).all()
    table = pyogrio.read_dataframe(mine, layer="findings")
    assert table["proposal_id"].tolist()[:3] == TEXTS[:3]
    assert table["message"].isna().sum() == 15
    assert table["waiver_reason"].isna().all()
    assert len(pyogrio.read_dataframe(mine, layer="findings_polygons")) == 24
