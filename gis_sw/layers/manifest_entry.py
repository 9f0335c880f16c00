"""One table of a layers manifest: the :class:`LayerEntry` it describes, and its parsing.

:func:`parse_entry` checks one ``[kind]`` table of a manifest (keys, source, columns, CRS,
raster and messy-layer options), records every problem it finds and returns the entry, or
None when the table has problems.  :mod:`gis_sw.layers.manifest` resolves whole sources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from gis_sw.errors import Problem
from gis_sw.layers.raster import RasterMode
from gis_sw.layers.specs import RASTER_LAYERS, TOWN_LAYERS
from gis_sw.redact import redact_dsn

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
        """True for the raster kinds (``dem``, groundwater, bedrock)."""
        return self.kind in RASTER_LAYERS

    @property
    def label(self) -> str:
        """Where the layer comes from, for messages (``town.gpkg:parcels``)."""
        if self.postgis is not None:
            target = self.table if self.table else "query"
            return f"postgis:{redact_dsn(self.postgis)}:{target}"
        name = str(self.path)
        return f"{name}:{self.layer}" if self.layer else name


def parse_crs(value: object, where: str, problems: list[Problem]) -> CRS | None:
    """Parse a CRS from user text (``EPSG:2263``, WKT, PROJ string); record a problem when bad."""
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


def _text(table: dict[str, Any], key: str, where: str, problems: list[Problem]) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        problems.append(Problem(where, f"{key} = {value!r} must be non-empty text."))
        return None
    return value


def parse_entry(
    kind: str,
    table: dict[str, Any],
    *,
    base: Path,
    default_crs: CRS | None,
    where: str,
    problems: list[Problem],
) -> LayerEntry | None:
    """Check the table ``[kind]`` of a manifest and return its entry.

    Parameters
    ----------
    kind
        A known layer kind (town layer or raster).
    table
        The table's keys as TOML gave them.
    base
        Folder relative paths start at (the manifest's).
    default_crs
        ``[manifest] crs``, assumed for files that carry none.
    where
        How messages name the table (``layers.toml [zoning]``).
    problems
        Every problem found is appended here.

    Returns
    -------
    LayerEntry or None
        None when the table added a problem.
    """
    start = len(problems)
    for key in sorted(set(table) - _ENTRY_KEYS):
        problems.append(
            Problem(where, f"unknown key {key!r}.", f"use only {', '.join(sorted(_ENTRY_KEYS))}.")
        )
    if "none" in table:
        return _none_entry(kind, table, where=where, problems=problems, start=start)
    path, dsn, table_name, query = _source(table, base=base, where=where, problems=problems)
    columns = _columns(table, where, problems)
    own_crs = parse_crs(table.get("crs"), where, problems)
    mode, units = _raster_options(kind, table, postgis=dsn, where=where, problems=problems)
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
        columns=columns,
        crs=own_crs or default_crs,
        postgis=dsn,
        table=table_name,
        query=query,
        geometry_column=geometry_column,
        mode=mode,
        units=units,
        crs_override=own_crs is not None,
        **messy,
    )


def _source(
    table: dict[str, Any], *, base: Path, where: str, problems: list[Problem]
) -> tuple[Path | None, str | None, str | None, str | None]:
    """Return ``(path, postgis, table, query)``: a file or a PostGIS table or query."""
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
    return path, dsn, table_name, query


def _columns(table: dict[str, Any], where: str, problems: list[Problem]) -> dict[str, str]:
    """Return ``columns``: spec name to source name (empty, with a problem, when malformed)."""
    columns = table.get("columns", {})
    if not isinstance(columns, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in columns.items()
    ):
        problems.append(
            Problem(where, "columns must map spec names to source names.", 'zone = "ZONE_TYPE".')
        )
        return {}
    return dict(columns)


def _raster_options(
    kind: str, table: dict[str, Any], *, postgis: str | None, where: str, problems: list[Problem]
) -> tuple[RasterMode | None, Any]:
    """Return ``(mode, units)`` of a raster; refuse them (and PostGIS) where they do not apply."""
    units = table.get("units")
    if kind not in RASTER_LAYERS:
        for key in ("mode", "units"):
            if key in table:
                problems.append(Problem(where, f"{key} applies to rasters only.", "remove it."))
        return None, units
    if postgis is not None:
        problems.append(Problem(where, "rasters are read from GeoTIFF files, not PostGIS."))
    mode: RasterMode | None = None
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
    return mode, units


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
    """Return the messy-layer options.

    ``where``, ``on_bad_feature``, ``placeholder_ids``, ``max_sliver_sqft`` and ``coverage``.
    """
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
        sliver = _max_sliver(kind, table["max_sliver_sqft"], where, problems)
        if sliver is not None:
            out["max_sliver_sqft"] = sliver
    if "coverage" in table:
        coverage = _coverage(kind, table["coverage"], base=base, where=where, problems=problems)
        if coverage is not None:
            out["coverage"] = coverage
    return out


def _max_sliver(kind: str, value: object, where: str, problems: list[Problem]) -> float | None:
    """Return ``max_sliver_sqft`` as a float; None (with a problem) when it does not apply."""
    if kind != "zoning":
        problems.append(Problem(where, "max_sliver_sqft applies to zoning only."))
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        problems.append(
            Problem(where, f"max_sliver_sqft = {value!r} must be a number of 0 or more.")
        )
        return None
    return float(value)


def _coverage(
    kind: str, coverage: object, *, base: Path, where: str, problems: list[Problem]
) -> str | Path | None:
    """Return ``coverage``: ``town``, ``extent`` or a polygon file; None with a problem."""
    if not isinstance(coverage, str) or not coverage.strip():
        problems.append(
            Problem(
                where,
                f"coverage = {coverage!r} is not text.",
                'write coverage = "town", "extent" or the path of a polygon file.',
            )
        )
        return None
    if coverage in COVERAGES:
        if coverage == "extent" and kind in ("parcels", "zoning"):
            problems.append(Problem(where, f"{kind} always cover the town.", "remove coverage."))
        return coverage
    if kind in ("parcels", "zoning"):
        problems.append(Problem(where, f"{kind} always cover the town.", "remove coverage."))
        return None
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
        return None
    return path
