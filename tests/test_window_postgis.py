"""PostGIS layers read by window (``&&`` on the GiST index) give the findings of whole reads.

The sample's parcels, buildings and wells are loaded into a throwaway PostGIS server (the
fixture of ``test_layers_postgis.py``), the other layers stay in the sample GeoPackage.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from test_layers_postgis import dsn  # noqa: F401 (the server fixture)
from test_window_reads import SAMPLE, _addition, _findings_equal, _lot_point

import gis_sw
from gis_sw.errors import LayerError

psycopg = pytest.importorskip("psycopg", reason="psycopg missing: pip install 'gis_sw[postgis]'")

IN_POSTGIS = {"parcels": "parcel_id text", "buildings": "building_id text", "wells": "well_id text"}


@pytest.fixture(scope="module")
def manifest(dsn: str, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    folder = tmp_path_factory.mktemp("pgtown")
    for name in ("town.gpkg", "dem.tif", "seasonal_high_groundwater.tif", "bedrock.tif"):
        shutil.copy(SAMPLE / name, folder / name)
    text = (SAMPLE / "layers.toml").read_text(encoding="utf-8")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for kind, id_column in IN_POSTGIS.items():
            frame = gpd.read_file(SAMPLE / "town.gpkg", layer=kind)
            name = id_column.split()[0]
            conn.execute(f"CREATE TABLE {kind} ({id_column}, geom geometry(Geometry, 2260))")
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {kind} VALUES (%s, ST_GeomFromWKB(%s, 2260))",
                    [
                        (str(i), shapely.to_wkb(g))
                        for i, g in zip(frame[name], frame.geometry, strict=True)
                    ],
                )
            conn.execute(f"CREATE INDEX ON {kind} USING gist (geom)")
            conn.execute(f"ANALYZE {kind}")
            old = f'[{kind}]\npath = "town.gpkg"\nlayer = "{kind}"\n'
            assert old in text
            text = text.replace(old, f'[{kind}]\npostgis = "{dsn}"\ntable = "{kind}"\n')
    path = folder / "layers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_postgis_window_gives_the_whole_read_findings(manifest: Path) -> None:
    full = gis_sw.read_town(manifest)
    assert len(full.layers.vectors["parcels"]) == 323
    x, y = _lot_point(full, "3.1-2-5")
    addition = _addition(x, y)
    windowed = gis_sw.read_town(manifest, around=addition)
    assert {"parcels", "buildings"} <= set(windowed.windows)
    assert 0 < len(windowed.layers.vectors["parcels"]) < 323
    assert len(windowed.layers.vectors["buildings"]) < len(full.layers.vectors["buildings"])
    _findings_equal(full, windowed, addition)
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=full.ruleset)
    for pid in proposals.ids[::5]:
        one = proposals.subset([pid])
        _findings_equal(full, gis_sw.read_town(manifest, around=one), one)


def test_an_id_repeated_far_from_the_window_is_the_whole_reads_error(
    manifest: Path,
    dsn: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The windowed table's ids are read whole (one column, read-only): a parcel id
    repeated outside the window is refused as a whole read refuses it."""
    full = gis_sw.read_town(manifest)
    x, y = _lot_point(full, "3.1-2-5")
    addition = _addition(x, y)
    inside = set(gis_sw.read_town(manifest, around=addition).layers.vectors["parcels"].parcel_id)
    parcels = full.layers.vectors["parcels"]
    far = [str(p) for p in parcels.parcel_id if p not in inside]
    assert len(far) >= 2
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE parcels_repeated AS SELECT * FROM parcels")
        conn.execute("UPDATE parcels_repeated SET parcel_id = %s WHERE parcel_id = %s", far[:2])
        conn.execute("CREATE INDEX ON parcels_repeated USING gist (geom)")
    copy = tmp_path / "layers.toml"
    for name in ("town.gpkg", "dem.tif", "seasonal_high_groundwater.tif", "bedrock.tif"):
        (tmp_path / name).symlink_to(manifest.parent / name)
    text = manifest.read_text(encoding="utf-8")
    copy.write_text(text.replace('table = "parcels"', 'table = "parcels_repeated"'), "utf-8")
    try:
        with pytest.raises(LayerError) as whole:
            gis_sw.read_town(copy)
        with pytest.raises(LayerError) as windowed:
            gis_sw.read_town(copy, around=addition)
        assert far[0] in str(whole.value)
        assert "parcel_id" in str(whole.value)
        assert str(windowed.value) == str(whole.value)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE parcels_repeated")
