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
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyogrio
from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from gis_sw.errors import InputFileError, LayerError, Problem
from gis_sw.layers.raster import RasterMode
from gis_sw.layers.specs import RASTER_LAYERS, TOWN_LAYERS
from gis_sw.layers.vector import unreadable
from gis_sw.redact import redact_dsn

logger = logging.getLogger(__name__)

MANIFEST_NAME = "layers.toml"
"""File name looked for when the source is a folder."""

RASTER_UNITS = ("ft", "m")
"""Units a raster's values may be given in (``units = "m"`` converts metres to feet)."""

BAD_FEATURE_ACTIONS = ("error", "skip")
"""``on_bad_feature``: refuse the layer (default), or drop such features with a reason."""

DEFAULT_PLACEHOLDER_IDS: tuple[str, ...] = (
    "-",
    "--",
    "---",
    "--R",
    "ROAD",
    "ROW",
    "R.O.W.",
    "N/A",
    "NULL",
    "NONE",
)
"""Ids that name no feature (rights of way, roads, blanks) in real parcel exports; matched
after stripping blanks, ignoring case.  ``placeholder_ids = [...]`` replaces the list."""

DEFAULT_MAX_SLIVER_SQFT = 100.0
"""Zoning features with no zone name and less area than this are slivers (skippable)."""

COVERAGES = ("town", "extent")
"""``coverage``: the whole town (default), the layer's own extent, or a polygon file."""

_ENTRY_KEYS = frozenset(
    {
        "none",
        "where",
        "on_bad_feature",
        "placeholder_ids",
        "max_sliver_sqft",
        "coverage",
        "path",
        "layer",
        "columns",
        "crs",
        "postgis",
        "table",
        "query",
        "geometry_column",
        "mode",
        "units",
    }
)


@dataclass(frozen=True, slots=True)
class LayerEntry:
    """Where one layer kind comes from and how to read it.

    Attributes
    ----------
    kind
        Layer kind (``parcels``, ``dem`` ...).
    path
        File to read (absolute), or None for PostGIS.
    layer
        Layer inside a multi-layer file (GeoPackage, File Geodatabase, DXF, TopoJSON).
    columns
        Spec column name to the column name in the source.
    crs
        CRS to assume when the source carries none (from the entry or ``[manifest] crs``).
    postgis
        PostgreSQL connection string, or None for a file.
    table
        PostGIS table (``schema.table`` allowed).
    query
        PostGIS ``SELECT`` giving the features.
    geometry_column
        Geometry column of the PostGIS table or query (found automatically when None).
    mode
        Raster mode (elevation or depth), None when the source should say.
    units
        Raster value units, ``ft`` or ``m``; None when the source should say (default ft).
    none
        ``none = true``: the town declares it has no such features (no private wells);
        rules see an empty layer and reports say "declared none".
    crs_override
        True when ``crs`` was given in the layer's own table: it then overrides the CRS the
        file claims (a state-plane GeoJSON without a ``crs`` member reads as EPSG:4326).
        ``[manifest] crs`` only fills in for files that carry none.
    where
        Attribute filter (OGR SQL ``WHERE`` clause) pushed down to the reader.
    on_bad_feature
        ``"error"`` (default) or ``"skip"``: drop features with no geometry, with an empty
        or placeholder id, and (zoning) unnamed slivers, each reported with its reason.
    placeholder_ids
        Ids that name no feature, for ``on_bad_feature = "skip"``.
    max_sliver_sqft
        Zoning: an unnamed feature smaller than this is a sliver (skipped with ``skip``).
    coverage
        ``"town"`` (default: the layer maps the whole town), ``"extent"`` (its bounding box
        grown by the largest setback) or the path of a polygon file of the area it maps.
    """

    kind: str
    path: Path | None = None
    layer: str | None = None
    columns: dict[str, str] = field(default_factory=dict)
    crs: CRS | None = None
    postgis: str | None = field(default=None, repr=False)  # never shown: it may hold a password
    table: str | None = None
    query: str | None = None
    geometry_column: str | None = None
    mode: RasterMode | None = None
    units: str | None = None
    none: bool = False
    crs_override: bool = False
    where: str | None = None
    on_bad_feature: str = "error"
    placeholder_ids: tuple[str, ...] = DEFAULT_PLACEHOLDER_IDS
    max_sliver_sqft: float = DEFAULT_MAX_SLIVER_SQFT
    coverage: str | Path = "town"

    @property
    def skip_bad(self) -> bool:
        """True when bad features are dropped (and reported) instead of refused."""
        return self.on_bad_feature == "skip"

    @property
    def is_raster(self) -> bool:
        return self.kind in RASTER_LAYERS

    @property
    def label(self) -> str:
        """Where the layer comes from, for messages (``town.gpkg:parcels``)."""
        if self.postgis is not None:
            target = self.table if self.table else "query"
            return f"postgis:{redact_dsn(self.postgis)}:{target}"
        name = str(self.path)
        return f"{name}:{self.layer}" if self.layer else name


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


def parse_crs(value: object, where: str, problems: list[Problem]) -> CRS | None:
    """A CRS from user text (``EPSG:2263``, WKT, PROJ string); records a problem when bad."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem(where, f"crs = {value!r} is not text.", 'write crs = "EPSG:2260".'))
        return None
    try:
        return CRS.from_user_input(value)
    except PyprojCRSError:
        problems.append(
            Problem(
                where,
                f"crs = {value!r} is not a CRS pyproj knows.",
                'give an authority code such as "EPSG:2260" or a WKT string.',
            )
        )
        return None


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
        entry = _entry(
            kind, table, base=path.parent, default_crs=default_crs, where=where, problems=problems
        )
        if entry is not None:
            entries[kind] = entry
    if problems:
        raise LayerError(problems)
    return Manifest(source=path, name=name, entries=entries)


def _text(table: dict[str, Any], key: str, where: str, problems: list[Problem]) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem(where, f"{key} = {value!r} must be non-empty text."))
        return None
    return value


def _entry(
    kind: str,
    table: dict[str, Any],
    *,
    base: Path,
    default_crs: CRS | None,
    where: str,
    problems: list[Problem],
) -> LayerEntry | None:
    start = len(problems)
    for key in sorted(set(table) - _ENTRY_KEYS):
        problems.append(
            Problem(where, f"unknown key {key!r}.", f"use only {', '.join(sorted(_ENTRY_KEYS))}.")
        )
    if "none" in table:
        return _none_entry(kind, table, where=where, problems=problems, start=start)
    path_text = _text(table, "path", where, problems)
    dsn = _text(table, "postgis", where, problems)
    table_name = _text(table, "table", where, problems)
    query = _text(table, "query", where, problems)
    if (path_text is None) == (dsn is None):
        problems.append(
            Problem(where, "needs exactly one of path or postgis.", 'add path = "file.gpkg".')
        )
    if dsn is not None and (table_name is None) == (query is None):
        problems.append(
            Problem(where, "a PostGIS layer needs exactly one of table or query.", 'table = "x".')
        )
    path: Path | None = None
    if path_text is not None:
        path = Path(path_text).expanduser()
        if not path.is_absolute():
            path = base / path
        if not path.exists():
            problems.append(
                Problem(
                    where,
                    f"path {path} does not exist.",
                    "correct the path (relative paths start at the manifest's folder).",
                )
            )
    columns = table.get("columns", {})
    if not isinstance(columns, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in columns.items()
    ):
        problems.append(
            Problem(where, "columns must map spec names to source names.", 'zone = "ZONE_TYPE".')
        )
        columns = {}
    own_crs = parse_crs(table.get("crs"), where, problems)
    crs = own_crs or default_crs
    mode: RasterMode | None = None
    units = table.get("units")
    if kind in RASTER_LAYERS:
        if dsn is not None:
            problems.append(Problem(where, "rasters are read from GeoTIFF files, not PostGIS."))
        mode_text = table.get("mode")
        if mode_text is not None:
            try:
                mode = RasterMode(str(mode_text).lower())
            except ValueError:
                problems.append(
                    Problem(
                        where,
                        f"mode = {mode_text!r} is not a raster mode.",
                        'write mode = "depth" or mode = "elevation".',
                    )
                )
        if kind == "dem" and mode is RasterMode.DEPTH:
            problems.append(Problem(where, "a DEM holds ground elevations.", "remove mode."))
        if units is not None and units not in RASTER_UNITS:
            problems.append(
                Problem(where, f"units = {units!r} is not a unit.", 'write units = "ft" or "m".')
            )
    else:
        for key in ("mode", "units"):
            if key in table:
                problems.append(Problem(where, f"{key} applies to rasters only.", "remove it."))
    layer = _text(table, "layer", where, problems)
    geometry_column = _text(table, "geometry_column", where, problems)
    messy = _messy_options(kind, table, base=base, where=where, problems=problems)
    if dsn is not None and messy.get("where") is not None:
        problems.append(
            Problem(
                where,
                "where applies to files; a PostGIS layer filters in its query.",
                'write query = "SELECT ... WHERE ..." instead.',
            )
        )
    if len(problems) > start:
        return None
    return LayerEntry(
        kind=kind,
        path=path,
        layer=layer,
        columns=dict(columns),
        crs=crs,
        postgis=dsn,
        table=table_name,
        query=query,
        geometry_column=geometry_column,
        mode=mode,
        units=units,
        crs_override=own_crs is not None,
        **messy,
    )


def _none_entry(
    kind: str, table: dict[str, Any], *, where: str, problems: list[Problem], start: int
) -> LayerEntry | None:
    """``[wells] none = true``: a declared absence (no other key but ``none``)."""
    value = table["none"]
    if value is not True:
        problems.append(
            Problem(
                where,
                f"none = {value!r}: only none = true has a meaning (the town has no such "
                "features).",
                "write none = true, or remove the key and give path.",
            )
        )
    others = sorted(set(table) - {"none"})
    if others:
        problems.append(
            Problem(
                where,
                f"none = true declares the layer absent, so {', '.join(others)} cannot be "
                "given with it.",
                "remove them, or remove none = true.",
            )
        )
    if kind in RASTER_LAYERS or TOWN_LAYERS[kind].required_layer:
        problems.append(
            Problem(
                where,
                f"{kind} cannot be declared none (every town has "
                f"{'ground' if kind in RASTER_LAYERS else kind}).",
                "give the layer's path, or leave the table out if you do not have it.",
            )
        )
    if len(problems) > start:
        return None
    return LayerEntry(kind=kind, none=True)


def _messy_options(
    kind: str, table: dict[str, Any], *, base: Path, where: str, problems: list[Problem]
) -> dict[str, Any]:
    """``where``, ``on_bad_feature``, ``placeholder_ids``, ``max_sliver_sqft``, ``coverage``."""
    out: dict[str, Any] = {}
    vector_keys = ("where", "on_bad_feature", "placeholder_ids", "max_sliver_sqft", "coverage")
    if kind in RASTER_LAYERS:
        for key in vector_keys:
            if key in table:
                problems.append(Problem(where, f"{key} applies to vector layers only."))
        return out
    filter_text = _text(table, "where", where, problems)
    if filter_text is not None:
        out["where"] = filter_text
    action = table.get("on_bad_feature", "error")
    if action not in BAD_FEATURE_ACTIONS:
        problems.append(
            Problem(
                where,
                f"on_bad_feature = {action!r} is not an action.",
                'write on_bad_feature = "skip" (drop and report) or "error" (the default).',
            )
        )
    else:
        out["on_bad_feature"] = action
    if "placeholder_ids" in table:
        ids = table["placeholder_ids"]
        if not isinstance(ids, list) or not all(isinstance(v, str) for v in ids):
            problems.append(
                Problem(where, "placeholder_ids must be a list of text.", 'e.g. ["---", "ROAD"].')
            )
        else:
            out["placeholder_ids"] = tuple(v.strip() for v in ids)
    if "max_sliver_sqft" in table:
        value = table["max_sliver_sqft"]
        if kind != "zoning":
            problems.append(Problem(where, "max_sliver_sqft applies to zoning only."))
        elif (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            problems.append(
                Problem(where, f"max_sliver_sqft = {value!r} must be a number of 0 or more.")
            )
        else:
            out["max_sliver_sqft"] = float(value)
    if "coverage" in table:
        coverage = table["coverage"]
        if not isinstance(coverage, str) or not coverage.strip():
            problems.append(
                Problem(
                    where,
                    f"coverage = {coverage!r} is not text.",
                    'write coverage = "town", "extent" or the path of a polygon file.',
                )
            )
        elif coverage in COVERAGES:
            out["coverage"] = coverage
        elif kind in ("parcels", "zoning"):
            problems.append(Problem(where, f"{kind} always cover the town.", "remove coverage."))
        else:
            path = Path(coverage).expanduser()
            path = path if path.is_absolute() else base / path
            if not path.exists():
                problems.append(
                    Problem(
                        where,
                        f"coverage = {coverage!r}: neither town, extent nor an existing "
                        f"file ({path} does not exist).",
                        'write "town", "extent", or the path of a polygon file of the area '
                        "the layer maps (relative to the manifest's folder).",
                    )
                )
            else:
                out["coverage"] = path
        if out.get("coverage") == "extent" and kind in ("parcels", "zoning"):
            problems.append(Problem(where, f"{kind} always cover the town.", "remove coverage."))
    return out


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
