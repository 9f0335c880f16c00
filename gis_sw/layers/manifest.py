"""Where each town layer comes from: a layers manifest (TOML) or a single GeoPackage.

A source is resolved into a :class:`Manifest`, a list of :class:`LayerEntry` records, one per
layer kind, before anything is read.  Two kinds of source are understood:

* a TOML manifest (``layers.toml``), one table per kind::

      [manifest]
      crs = "EPSG:2260"              # assumed for files that carry no CRS (optional)

      [zoning]
      path = "zoning.shp"            # relative to the manifest
      columns = { zone = "ZONE_TYPE" }

      [parcels]
      postgis = "postgresql://user@localhost:5432/town"
      table = "parcels"              # or query = "SELECT ..."

      [buildings]
      path = "buildings.shp"
      coverage = "extent"            # maps only part of the town (or a polygon file)
      where = "STATUS <> 'DEMOLISHED'"
      on_bad_feature = "skip"        # drop (and report) null geometries, placeholder ids

      [wells]
      none = true                    # the town has no private wells

      [seasonal_high_groundwater]
      path = "shgw.tif"
      mode = "depth"
      units = "m"

* a GeoPackage whose layer names are the kinds, with the GeoTIFFs ``dem.tif``,
  ``seasonal_high_groundwater.tif`` and ``bedrock.tif`` beside it (their mode read from the
  GeoTIFF tag ``GIS_SW_MODE``).

A folder holding ``layers.toml`` is read as that manifest.  Every problem in a manifest is
collected and raised once as a :class:`~gis_sw.errors.LayerError`.
"""

from __future__ import annotations

import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pyogrio

from gis_sw.errors import InputFileError, LayerError, Problem
from gis_sw.layers.manifest_entry import LayerEntry, parse_crs, parse_entry
from gis_sw.layers.specs import RASTER_LAYERS, TOWN_LAYERS
from gis_sw.layers.vector import unreadable

__all__ = [
    "MANIFEST_NAME",
    "LayerEntry",
    "Manifest",
    "geopackage_manifest",
    "load_manifest",
    "parse_crs",
    "resolve_source",
]

logger = logging.getLogger(__name__)

MANIFEST_NAME = "layers.toml"
"""File name looked for when the source is a folder."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """Every layer a source provides.

    Attributes
    ----------
    source
        The manifest, GeoPackage or folder that was given.
    name
        Human name of the data set (``[manifest] name``), or the file name.
    entries
        Kind to :class:`LayerEntry`.
    ignored
        Layers of the source that are not a known kind (reported, not read).
    """

    source: Path
    name: str
    entries: dict[str, LayerEntry]
    ignored: tuple[str, ...] = ()


def resolve_source(source: str | Path) -> Manifest:
    """Turn a source (manifest, GeoPackage or folder) into a :class:`Manifest`.

    Raises
    ------
    InputFileError
        If the source does not exist or is not a manifest, GeoPackage or folder with one.
    LayerError
        If the manifest names unknown kinds, bad keys, bad CRS text or bad raster options.
    """
    path = Path(source)
    if not path.exists():
        raise InputFileError(
            f"{path}: no such file or folder. Fix: pass a layers manifest (layers.toml) or a "
            "GeoPackage of town layers."
        )
    if path.is_dir():
        if (path / MANIFEST_NAME).is_file():
            return load_manifest(path / MANIFEST_NAME)
        raise InputFileError(
            f"{path}: a folder without {MANIFEST_NAME}. "
            "Fix: pass the manifest or GeoPackage itself."
        )
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return load_manifest(path)
    if suffix == ".gpkg":
        return geopackage_manifest(path)
    raise InputFileError(
        f"{path}: not a layers source (expected a .toml manifest or a .gpkg GeoPackage). "
        "Fix: write a layers manifest naming this file for each kind it holds."
    )


def load_manifest(path: Path) -> Manifest:
    """Read a layers manifest (TOML).

    Raises
    ------
    InputFileError
        If the file cannot be read or is not TOML.
    LayerError
        Listing every problem in the manifest at once.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputFileError(unreadable(path, "layers manifest", exc)) from exc
    except UnicodeDecodeError:
        raise InputFileError(
            f"{path}: not valid TOML (not UTF-8 text). Fix: pass a layers manifest written as "
            "UTF-8 text, or the GeoPackage itself."
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"{path}: not valid TOML ({exc}). Fix: correct the syntax.") from exc
    problems: list[Problem] = []
    head = data.pop("manifest", {})
    if not isinstance(head, dict):
        head = {}
        problems.append(Problem(str(path), "[manifest] must be a table.", "see docs/layers.md."))
    default_crs = parse_crs(head.get("crs"), f"{path} [manifest]", problems)
    name = str(head.get("name") or path.stem)
    known = {*TOWN_LAYERS, *RASTER_LAYERS}
    entries: dict[str, LayerEntry] = {}
    for kind, table in data.items():
        where = f"{path} [{kind}]"
        if kind not in known:
            problems.append(
                Problem(
                    where,
                    f"{kind!r} is not a layer kind gis_sw knows.",
                    f"use one of {', '.join(sorted(known))}.",
                )
            )
            continue
        if not isinstance(table, dict):
            problems.append(Problem(where, "must be a table of keys.", 'e.g. path = "town.gpkg".'))
            continue
        entry = parse_entry(
            kind, table, base=path.parent, default_crs=default_crs, where=where, problems=problems
        )
        if entry is not None:
            entries[kind] = entry
    if problems:
        raise LayerError(problems)
    return Manifest(source=path, name=name, entries=entries)


def geopackage_manifest(path: Path) -> Manifest:
    """Entries for a GeoPackage of town layers plus the GeoTIFFs beside it.

    Raises
    ------
    InputFileError
        If the file is not a readable GeoPackage.
    """
    try:
        layers = pyogrio.list_layers(path)
    except Exception as exc:  # pyogrio raises DataSourceError and friends
        raise InputFileError(unreadable(path, "GeoPackage", exc)) from exc
    entries: dict[str, LayerEntry] = {}
    ignored: list[str] = []
    for name, _geometry_type in layers:
        kind = str(name)
        if kind in TOWN_LAYERS:
            entries[kind] = LayerEntry(kind=kind, path=path, layer=kind)
        else:
            ignored.append(kind)
    for kind in RASTER_LAYERS:
        tif = path.parent / f"{kind}.tif"
        if tif.is_file():
            entries[kind] = LayerEntry(kind=kind, path=tif)
    if ignored:
        logger.info("%s: layers %s are not known kinds; ignored", path, ", ".join(ignored))
    return Manifest(source=path, name=path.stem, entries=entries, ignored=tuple(ignored))
