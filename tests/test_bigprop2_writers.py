"""Faster writers give what the cell-by-cell ones gave (issue 14: 20,000 proposals)."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely

from gis_sw.outputs.console import wrap
from gis_sw.outputs.csvcells import csv_cell, csv_frame
from gis_sw.outputs.geojson import plain_properties
from gis_sw.outputs.geopackage import write_findings_geopackage


def test_wrap_equals_textwrap_on_random_ascii_texts() -> None:
    """ASCII words (the path that skips the Unicode-space test), hyphens, long words."""
    rng = random.Random(183)
    for _ in range(3000):
        words = [
            "".join(rng.choice("abcx.,()§-=+") for _ in range(rng.choice([1, 2, 5, 13, 40, 99])))
            for _ in range(rng.randint(1, 50))
        ]
        text = " ".join(words).replace("§", "s")
        first = " " * rng.choice([0, 2, 11])
        rest = " " * rng.choice([0, 2, 11])
        width = rng.choice([20, 60, 100])
        expected = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest)
        assert wrap(text, width, initial_indent=first, subsequent_indent=rest) == expected, text


def _cell_by_cell(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(csv_cell, na_action="ignore")
    return out


def test_csv_frame_equals_cell_by_cell() -> None:
    rng = np.random.default_rng(14)
    n = 5000
    ids = np.array([f"P-{i:05d}" for i in rng.integers(0, 300, n)], dtype=object)
    ids[rng.random(n) < 0.01] = "=HYPERLINK(1)"
    ids[rng.random(n) < 0.01] = "-12.5"  # a plain number is left as it is
    ids[rng.random(n) < 0.01] = None
    mixed = np.array([1.5, "+x", None, "lawn"], dtype=object)[rng.integers(0, 4, n)]
    frame = pd.DataFrame(
        {
            "proposal_id": ids,
            "cover": pd.Series(np.array(["lawn", "woods"])[rng.integers(0, 2, n)], dtype="string"),
            "mixed": mixed,
            "lists": [[1, 2]] * n,  # unhashable: judged cell by cell
            "area_sqft": rng.uniform(0, 1e5, n),
        }
    )
    out = csv_frame(frame)
    pd.testing.assert_frame_equal(out, _cell_by_cell(frame))
    assert (out["proposal_id"] == "'=HYPERLINK(1)").sum() == (ids == "=HYPERLINK(1)").sum() > 0
    assert (out["mixed"] == "'+x").sum() == (mixed == "+x").sum() > 0
    assert out["cover"].tolist() == frame["cover"].tolist()


def _findings(n: int) -> gpd.GeoDataFrame:
    """Findings rows on points only (the line and polygon layers empty), odd text."""
    i = np.arange(n)
    return gpd.GeoDataFrame(
        {
            "proposal_id": [f"Lot {k} Ünïcödé §" if k % 7 else f"=P{k}" for k in i.tolist()],
            "rule_id": ["SW501"] * n,
            "outcome": ["pass", "fail", None] * (n // 3) + ["info"] * (n % 3),
            "measured": np.where(i % 5 == 0, np.nan, i * 0.1),
            "threshold": [1 / 3] * n,
            "waived": [False, True] * (n // 2) + [False] * (n % 2),
            "waiver_reason": [None] * n,  # no text at all: still a text field
        },
        geometry=shapely.points(i * 10.0, i * 3.0),
        crs="EPSG:2260",
    )


def test_geopackage_layers_read_back_as_given(tmp_path: Path) -> None:
    """GDAL's Arrow writer keeps every layer, field type, value and geometry."""
    findings = _findings(301)
    path = write_findings_geopackage(tmp_path / "findings.gpkg", findings)
    layers = dict(pyogrio.list_layers(path).tolist())
    assert layers == {
        "findings": None,
        "findings_points": "MultiPoint",
        "findings_lines": "MultiLineString",
        "findings_polygons": "MultiPolygon",
    }
    info = pyogrio.read_info(path, layer="findings")
    types = dict(zip(info["fields"], info["dtypes"], strict=True))
    assert types["measured"] == "float64"
    assert types["waived"] == "bool"
    assert types["waiver_reason"] == types["proposal_id"] == "object"
    table = pyogrio.read_dataframe(path, layer="findings")
    expected = plain_properties(findings).drop(columns="geometry")
    assert table["proposal_id"].tolist() == expected["proposal_id"].tolist()
    outcome = table["outcome"].astype(object)
    assert outcome.where(outcome.notna(), None).tolist() == expected["outcome"].tolist()
    assert table["waiver_reason"].isna().all()
    np.testing.assert_array_equal(table["measured"], expected["measured"])
    assert table["waived"].tolist() == expected["waived"].tolist()
    points = pyogrio.read_dataframe(path, layer="findings_points")
    assert len(points) == 301
    assert shapely.equals(
        points.geometry.values, shapely.multipoints(np.asarray(findings.geometry.values)[:, None])
    ).all()
    assert points["proposal_id"].tolist() == expected["proposal_id"].tolist()
    for family in ("lines", "polygons"):
        assert pyogrio.read_info(path, layer=f"findings_{family}")["features"] == 0


def test_xlsx_text_cells_once_per_text_equal_cell_by_cell() -> None:
    """A text column's cells built per distinct text equal the general path's, cell by cell."""
    from gis_sw.outputs.excel import SharedStrings, _column_cells

    rng = np.random.default_rng(3)
    pool = np.array(["SW501", "a & b < c", "", "x\x07y", "Ünïcödé §", "=1+2", "m" * 80], object)
    values = pool[rng.integers(0, len(pool), 2000)]
    values[rng.random(2000) < 0.05] = None
    values[rng.random(2000) < 0.05] = float("nan")
    strings = SharedStrings()
    cells, shown = _column_cells(pd.Series(values, dtype=object), strings)
    general, general_shown = _column_cells(pd.Series([*values, 7], dtype=object))  # mixed
    assert cells.tolist() == general[:-1].tolist()
    assert shown.tolist() == general_shown[:-1].tolist()
    # a shared string (manywrite: the workbook's texts are kept once, no longer inline)
    assert f'<c t="s"><v>{strings.index["a &amp; b &lt; c"]}</v></c>' in cells
    assert max(shown.tolist()) == 60
