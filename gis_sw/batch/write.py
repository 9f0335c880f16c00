"""Write what a batch run found: parcels, findings, problems, summary and overview map.

Every file is written atomically (:func:`gis_sw.outputs.atomic.atomic_path`).

* ``parcels.parquet`` (GeoParquet) and ``parcels.gpkg``: one row per parcel, the columns
  of :data:`gis_sw.batch.parcels.RESULT_COLUMNS` and the parcel geometry (working CRS).
* ``findings.parquet`` / ``findings.gpkg`` / ``findings.geojson`` (with ``--proposals``):
  every finding of :func:`gis_sw.analysis.engine.run_rules`.
* ``problems.csv``: rows of the parcel layer that were repaired, duplicated or empty.
* ``summary.csv``: ``table,zone,outcome,screen,count``; ``table`` is ``parcels``
  (``outcome`` the parcel's ``result``, ``screen`` its class, ``zone`` its main zone),
  ``findings`` (``outcome`` the finding's outcome, ``zone`` the main zone under the
  proposal's disturbance) or ``missing_layer`` (``screen`` a layer the town did not
  provide, ``outcome`` ``review``, ``count`` the parcels that are review for want of it
  alone, ``zone`` ``(all)``); the CLI says the same and how to declare an absence
  (:func:`missing_layers_note`).
* ``overview.png``: the townwide overview map, when the maps module provides one.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
from pathlib import Path

import geopandas as gpd
import pandas as pd

from gis_sw.analysis.overlay import area_by_key
from gis_sw.batch.aside import Aside, start_aside
from gis_sw.batch.chunks import CONTEXT_KINDS
from gis_sw.batch.gpkg_out import parcels_gpkg_source, write_parcels_gpkg
from gis_sw.batch.run import ScreenResult
from gis_sw.layers.layerset import LayerSet
from gis_sw.outputs.atomic import atomic_path, check_all_writable, output_group, readable
from gis_sw.outputs.csvcells import CSV_ENCODING, csv_frame
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

NO_ZONE = "(none)"
SUMMARY_COLUMNS = ("table", "zone", "outcome", "screen", "count")


def parcels_frame(result: ScreenResult, crs: object) -> gpd.GeoDataFrame:
    """Per-parcel rows with the (repaired) parcel geometry."""
    geoms = result.prepared.parcels.geometry.to_numpy()[result.rows["row"].to_numpy()]
    return gpd.GeoDataFrame(result.rows.copy(), geometry=gpd.GeoSeries(geoms, crs=crs), crs=crs)


def write_frame(frame: gpd.GeoDataFrame, path: Path, *, overwrite: bool) -> Path:
    """GeoParquet, GeoPackage or GeoJSON by the path's suffix, written atomically."""
    with atomic_path(path, overwrite=overwrite) as tmp:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        elif path.suffix == ".geojson":
            frame.to_crs(4326).to_file(tmp, driver="GeoJSON", engine="pyogrio")
        else:
            frame.to_file(tmp, driver="GPKG", layer=path.stem, engine="pyogrio", use_arrow=True)
    return path


def findings_zone(
    findings: gpd.GeoDataFrame, layers: LayerSet, disturbance: gpd.GeoDataFrame
) -> pd.Series:
    """Return the main zone under each finding's proposal disturbance (``(none)`` if unknown)."""
    zoning = layers.get("zoning")
    if zoning is None or len(disturbance) == 0:
        return pd.Series(NO_ZONE, index=findings.index)
    by_proposal = disturbance.dissolve(by="proposal_id")
    parts = area_by_key(by_proposal.geometry, zoning, "zone", dissolve=False)
    parts = parts.sort_values(["subject", "area_sqft", "key"], ascending=[True, False, True])
    first = parts.drop_duplicates("subject")
    zone_of = dict(zip(first["subject"], first["key"], strict=True))
    return findings["proposal_id"].map(zone_of).fillna(NO_ZONE)


def missing_layers(layers: LayerSet) -> tuple[str, ...]:
    """Return the layers a parcel's screening reads that the town did not provide.

    Every parcel is ``review`` for want of them (:mod:`gis_sw.batch.parcels`).
    """
    return tuple(kind for kind in CONTEXT_KINDS if kind in layers.missing)


def reviewed_for_missing_layers(rows: pd.DataFrame) -> int:
    """Return how many parcels are ``review`` for no reason of their own.

    Their geometry and zoning are usable: with every layer given they would have had an
    answer.
    """
    review = rows["screen"].to_numpy() == "review"
    usable = rows["zones"].notna().to_numpy() & (rows["area_sqft"].to_numpy() > 0)
    return int((review & usable).sum())


DECLARE_HINT = {
    "wells": "the town has no private wells (public water)",
    "septic_fields": "the town has no septic fields (public sewer)",
    "buildings": "there are no buildings to keep devices from",
    "wetlands": "no wetland is mapped in the town",
    "water_bodies": "no water body is mapped in the town",
    "floodplain": "no 100-year floodplain is mapped in the town",
}


def missing_layers_note(result: ScreenResult, layers: LayerSet) -> str:
    """Return what the CLI says when missing layers made parcels ``review`` ("" if none)."""
    return _missing_note(missing_layers(layers), reviewed_for_missing_layers(result.rows))


def missing_note(layers: LayerSet, summary: pd.DataFrame) -> str:
    """Return :func:`missing_layers_note` from a run's summary table (a streamed run)."""
    counts = summary.loc[summary["table"] == "missing_layer", "count"]
    return _missing_note(missing_layers(layers), int(counts.iloc[0]) if len(counts) else 0)


def _missing_note(missing: tuple[str, ...], count: int) -> str:
    if not missing or not count:
        return ""
    head = (
        f"{count} parcel(s) are review because these layers were not provided: "
        f"{', '.join(missing)}. For each, add the layer to the layers manifest, or, if the "
        "town truly has none, declare the absence there:"
    )
    lines = [head]
    for kind in missing:
        reason = DECLARE_HINT.get(kind, f"the town has no {kind}")
        lines.append(f"  [{kind}]\n  none = true    # {reason}")
    return "\n".join(lines)


def summary_table(
    parcels: pd.DataFrame,
    findings: pd.DataFrame | None,
    finding_zones: pd.Series | None,
    *,
    missing: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Return the counts by zone and outcome (see the module docstring).

    ``missing`` are the layers not provided (:func:`missing_layers`).
    """
    frames = []
    zone = parcels["zone_main"].fillna(NO_ZONE)
    counts = (
        pd.DataFrame({"zone": zone, "outcome": parcels["result"], "screen": parcels["screen"]})
        .value_counts()
        .rename("count")
        .reset_index()
    )
    counts.insert(0, "table", "parcels")
    frames.append(counts)
    if findings is not None and finding_zones is not None and len(findings):
        fcounts = (
            pd.DataFrame({"zone": finding_zones.to_numpy(), "outcome": findings["outcome"]})
            .value_counts()
            .rename("count")
            .reset_index()
        )
        fcounts.insert(0, "table", "findings")
        fcounts["screen"] = ""
        frames.append(fcounts)
    count = reviewed_for_missing_layers(parcels) if missing else 0
    if count:
        frames.append(
            pd.DataFrame(
                {
                    "table": "missing_layer",
                    "zone": "(all)",
                    "outcome": "review",
                    "screen": list(missing),
                    "count": count,
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)[list(SUMMARY_COLUMNS)]
    return table.sort_values(["table", "zone", "outcome", "screen"], kind="stable").reset_index(
        drop=True
    )


OVERVIEW_MODULE = "gis_sw.outputs.maps.overview"


def _overview_available() -> bool:
    try:
        found = importlib.util.find_spec(OVERVIEW_MODULE) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        log.warning("overview map skipped: %s is not available", OVERVIEW_MODULE)
    return found


def write_overview_map(
    path: Path, parcels: gpd.GeoDataFrame, *, ruleset: Ruleset, overwrite: bool
) -> Path | None:
    """Write the townwide overview map from :mod:`gis_sw.outputs.maps.overview`, if present."""
    if not _overview_available():
        return None
    module = importlib.import_module(OVERVIEW_MODULE)
    module.write_overview(path, parcels, ruleset=ruleset, overwrite=overwrite)
    return path


def _render_overview_png(parcels: gpd.GeoDataFrame, ruleset: Ruleset) -> bytes:
    """Return the bytes of ``overview.png`` (importing the maps module where it runs)."""
    module = importlib.import_module(OVERVIEW_MODULE)
    data: bytes = module.render_overview(parcels, ruleset=ruleset, fmt="png")
    return data


def start_overview(parcels: gpd.GeoDataFrame, ruleset: Ruleset) -> Aside[bytes] | None:
    """Start drawing ``overview.png`` aside (a forked child, :mod:`gis_sw.batch.aside`).

    None when the maps module is not available (the map is skipped, with a warning).
    """
    if not _overview_available():
        return None
    return start_aside(functools.partial(_render_overview_png, parcels, ruleset))


def finish_overview(drawing: Aside[bytes], path: Path, *, parcels: int, overwrite: bool) -> Path:
    """Write the page ``drawing`` rendered to ``path`` atomically; raise what drawing raised.

    Raises
    ------
    OutputError
        As :func:`gis_sw.outputs.maps.overview.write_overview` (the same messages).
    """
    data = drawing.result()
    with atomic_path(path, overwrite=overwrite) as tmp:
        tmp.write_bytes(data)
    logging.getLogger(OVERVIEW_MODULE).info("overview map %s: %d parcels", path, parcels)
    return path


def write_batch_outputs(
    out_dir: Path,
    result: ScreenResult,
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    findings: gpd.GeoDataFrame | None = None,
    disturbance: gpd.GeoDataFrame | None = None,
    overwrite: bool,
    formats: tuple[str, ...] = ("parquet", "gpkg"),
    overview: bool = True,
) -> dict[str, Path]:
    """Write every output of a batch run into ``out_dir``; return name to path.

    Raises
    ------
    OutputError
        If an output exists without ``overwrite`` or cannot be written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = planned_batch_outputs(findings=findings is not None, formats=formats, overview=overview)
    check_all_writable([out_dir / name for name in names], overwrite=overwrite)
    with output_group():  # the set appears together, or (on any error) not at all
        written = _write_batch_set(
            out_dir,
            result,
            layers,
            ruleset,
            findings=findings,
            disturbance=disturbance,
            overwrite=overwrite,
            formats=formats,
            overview=overview,
        )
    return written


def planned_batch_outputs(
    *, findings: bool, formats: tuple[str, ...], overview: bool = False
) -> list[str]:
    """Names of the files a batch run writes, checked before any is written."""
    from gis_sw.outputs.geojson import FAMILY_FILES

    names = [f"parcels.{fmt}" for fmt in formats] + ["problems.csv", "summary.csv"]
    if findings:
        names += ["findings.parquet", "findings.gpkg"]
        names += [name for name, _ in FAMILY_FILES.values()]
    if overview:
        names.append("overview.png")
    return names


def _write_batch_set(
    out_dir: Path,
    result: ScreenResult,
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    findings: gpd.GeoDataFrame | None,
    disturbance: gpd.GeoDataFrame | None,
    overwrite: bool,
    formats: tuple[str, ...],
    overview: bool,
) -> dict[str, Path]:
    parcels = parcels_frame(result, ruleset.working_crs)
    drawing = start_overview(parcels, ruleset) if overview else None
    try:
        written = _write_parcel_files(
            out_dir,
            result,
            layers,
            parcels,
            findings=findings,
            disturbance=disturbance,
            overwrite=overwrite,
            formats=formats,
        )
        if drawing is not None:  # last, as always: an earlier error wins
            path = out_dir / "overview.png"
            written[path.name] = finish_overview(
                drawing, path, parcels=len(parcels), overwrite=overwrite
            )
    finally:
        if drawing is not None:
            drawing.cancel()  # after an earlier error: the child's work is discarded
    return written


def _write_parcel_files(
    out_dir: Path,
    result: ScreenResult,
    layers: LayerSet,
    parcels: gpd.GeoDataFrame,
    *,
    findings: gpd.GeoDataFrame | None,
    disturbance: gpd.GeoDataFrame | None,
    overwrite: bool,
    formats: tuple[str, ...],
) -> dict[str, Path]:
    """Write every output but the overview map, in their order; return name to path."""
    written: dict[str, Path] = {}
    for fmt in formats:
        target = out_dir / f"parcels.{fmt}"
        if fmt != "gpkg":
            written[target.name] = write_frame(parcels, target, overwrite=overwrite)
            continue
        parquet = readable(out_dir / "parcels.parquet") if "parcels.parquet" in written else None
        source, kind = parcels_gpkg_source(parcels, parquet)
        with atomic_path(target, overwrite=overwrite) as tmp:
            write_parcels_gpkg(tmp, source, geometry_type=kind, crs=parcels.crs)
        written[target.name] = target
    with atomic_path(out_dir / "problems.csv", overwrite=overwrite) as tmp:
        csv_frame(result.prepared.problems).to_csv(tmp, index=False, encoding=CSV_ENCODING)
    written["problems.csv"] = out_dir / "problems.csv"
    finding_zones = None
    if findings is not None:
        finding_zones = findings_zone(
            findings, layers, disturbance if disturbance is not None else findings.iloc[:0]
        )
        for suffix in ("parquet", "gpkg", "geojson"):
            for path in _write_findings(
                findings, out_dir / f"findings.{suffix}", overwrite=overwrite
            ):
                written[path.name] = path
    summary = summary_table(result.rows, findings, finding_zones, missing=missing_layers(layers))
    with atomic_path(out_dir / "summary.csv", overwrite=overwrite) as tmp:
        csv_frame(summary).to_csv(tmp, index=False, encoding=CSV_ENCODING)
    written["summary.csv"] = out_dir / "summary.csv"
    return written


def _write_findings(findings: gpd.GeoDataFrame, path: Path, *, overwrite: bool) -> list[Path]:
    """Write findings through the shared writers of :mod:`gis_sw.outputs` (as ``gis-sw check``).

    GeoJSON: ``findings.geojson`` plus ``findings_lines.geojson`` and
    ``findings_points.geojson`` (RFC 7946: one geometry family per file); GeoPackage: one
    file with a layer per family and the attribute table.
    """
    from gis_sw.outputs.geojson import write_findings_geojson
    from gis_sw.outputs.geopackage import write_findings_geopackage

    if path.suffix == ".geojson":
        return list(write_findings_geojson(path.parent, findings, overwrite=overwrite))
    if path.suffix == ".gpkg":
        return [write_findings_geopackage(path, findings, overwrite=overwrite)]
    return [write_frame(findings, path, overwrite=overwrite)]
