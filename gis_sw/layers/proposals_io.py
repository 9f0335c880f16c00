"""Read proposals (what applicants submit) from a GeoPackage or a single file.

* A GeoPackage holds the layers ``disturbance`` (required), ``devices`` and ``impervious``
  (optional) and the attribute table ``proposals`` (no geometry, one row per proposal).
* Any other file (GeoJSON, Shapefile, FlatGeobuf, DXF, GeoParquet ...) is the disturbance
  layer.  Proposal attribute columns on it (``land_use``, ``exemption`` ...) are taken per
  ``proposal_id``; a file with no ``proposal_id`` column is one proposal named after the file
  (``addition.dxf`` → ``addition``).

Dates are ISO (``2026-05-01``); an end before its start is an error naming the feature.
Everything is reprojected to the working CRS and ends in
:func:`gis_sw.layers.build.make_proposals`.  Missing optional attributes are not errors:
they become ``review`` findings later.
"""

from __future__ import annotations

import logging
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
from pyproj import CRS

from gis_sw.errors import CRSError, InputFileError, LayerError, Problem
from gis_sw.layers.build import coerce_column, make_proposals
from gis_sw.layers.exemptions import accepted_forms, parse_exemption
from gis_sw.layers.layerset import LayerReport
from gis_sw.layers.manifest import parse_crs
from gis_sw.layers.proposals import ATTRIBUTE_COLUMNS, Proposals
from gis_sw.layers.specs import LAND_USES, PROPOSAL_LAYERS
from gis_sw.layers.validate import (
    feature_labels,
    id_text,
    listing,
    validate_layer,
    validate_table,
)
from gis_sw.layers.vector import crs_text, crs_units, read_vector, to_working_crs, unreadable
from gis_sw.ruleset import Ruleset

logger = logging.getLogger(__name__)

GEOMETRY_LAYERS = ("disturbance", "devices", "impervious")
ATTRIBUTE_TABLE = "proposals"


def read_proposals(
    path: str | Path,
    *,
    ruleset: Ruleset,
    crs: CRS | str | None = None,
    strict: bool = False,
) -> Proposals:
    """Read, reproject and validate proposals.

    Parameters
    ----------
    path
        A proposals GeoPackage, or one disturbance file (GeoJSON, Shapefile, DXF ...).
    ruleset
        Gives the working CRS and the exemption letters.
    crs
        CRS of files that carry none (DXF); ignored for files that have one.
    strict
        Refuse invalid geometries instead of repairing them.

    Raises
    ------
    InputFileError
        If the file is missing or unreadable, or a GeoPackage has no ``disturbance`` layer.
    CRSError
        If a layer has no CRS and ``crs`` is not given.
    LayerError
        Naming every problem: missing columns, wrong geometry types, duplicate ids, bad
        yes/no values or dates, an end date before its start, unknown land use or exemption.
    """
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"{path}: no such proposals file. Fix: check the path.")
    assumed = _as_crs(crs)
    working = ruleset.working_crs
    problems: list[Problem] = []
    reports: dict[str, LayerReport] = {}
    frames: dict[str, gpd.GeoDataFrame] = {}
    attributes: pd.DataFrame | None = None

    def read(layer: str | None, kind: str) -> None:
        _read_layer(
            path,
            layer,
            kind=kind,
            assumed=assumed,
            working=working,
            strict=strict,
            frames=frames,
            reports=reports,
            problems=problems,
        )

    if path.suffix.lower() == ".gpkg":
        try:
            layers = [str(name) for name, _ in pyogrio.list_layers(path)]
        except Exception as exc:  # pyogrio's DataSourceError and GDAL errors
            raise InputFileError(unreadable(path, "GeoPackage", exc)) from exc
        if "disturbance" not in layers:
            raise InputFileError(
                f"{path} has no 'disturbance' layer (it has {', '.join(layers)}). Fix: name "
                "the limits-of-disturbance layer 'disturbance'."
            )
        for kind in GEOMETRY_LAYERS:
            if kind in layers:
                read(kind, kind)
        if ATTRIBUTE_TABLE in layers:
            attributes = pd.DataFrame(
                pyogrio.read_dataframe(
                    path, layer=ATTRIBUTE_TABLE, read_geometry=False, use_arrow=True
                )
            )
    else:
        read(None, "disturbance")
        if "disturbance" in frames:
            frames["disturbance"], attributes = _split_attributes(
                frames["disturbance"], path, problems
            )
    if attributes is not None:
        problems.extend(_check_attributes(attributes, ruleset, f"{ATTRIBUTE_TABLE} [{path}]"))
    problems.extend(_check_dates(frames.get("disturbance"), path))
    problems.extend(_without_disturbance(attributes, frames.get("disturbance"), path))
    if problems:
        raise LayerError(problems)
    proposals = make_proposals(
        working,
        frames["disturbance"],
        frames.get("devices"),
        attributes,
        frames.get("impervious"),
        source=str(path),
    )
    proposals.reports.update(reports)
    _warn_orphans(proposals, reports)
    return proposals


def _as_crs(crs: CRS | str | None) -> CRS | None:
    if crs is None or isinstance(crs, CRS):
        return crs
    problems: list[Problem] = []
    parsed = parse_crs(crs, "--crs", problems)
    if problems:
        raise CRSError(str(problems[0]))
    return parsed


def _read_layer(
    path: Path,
    layer: str | None,
    *,
    kind: str,
    assumed: CRS | None,
    working: CRS,
    strict: bool,
    frames: dict[str, gpd.GeoDataFrame],
    reports: dict[str, LayerReport],
    problems: list[Problem],
) -> None:
    """Read, reproject and validate one layer into ``frames`` and ``reports``."""
    label = f"{path}:{layer}" if layer else str(path)
    name = f"{kind} [{label}]"
    frame, source_crs, warnings = read_vector(path, layer=layer, kind=kind, crs=assumed)
    frame = to_working_crs(frame, working, label=label)
    if kind == "disturbance" and layer is None and "proposal_id" not in frame.columns:
        frame = frame.assign(proposal_id=path.stem)
        warnings.append(f"no proposal_id column: every feature is proposal {path.stem!r}.")
    validated, found = validate_layer(frame, PROPOSAL_LAYERS[kind], layer=name, strict=strict)
    problems.extend(found)
    if validated is None:
        return
    frames[kind] = validated.frame
    bounds = validated.frame.total_bounds if len(validated.frame) else [float("nan")] * 4
    reports[kind] = LayerReport(
        kind=kind,
        source=label,
        features=len(validated.frame),
        source_crs=crs_text(source_crs),
        units=crs_units(source_crs),
        bounds=(float(bounds[0]), float(bounds[1]), float(bounds[2]), float(bounds[3])),
        repaired_ids=validated.repaired_ids,
        warnings=(*warnings, *validated.warnings),
    )


def _split_attributes(
    disturbance: gpd.GeoDataFrame, path: Path, problems: list[Problem]
) -> tuple[gpd.GeoDataFrame, pd.DataFrame | None]:
    """Proposal attribute columns of a single disturbance file, one row per proposal."""
    present = [c for c in ATTRIBUTE_COLUMNS if c in disturbance.columns]
    if not present:
        return disturbance, None
    ids = disturbance["proposal_id"].astype(str)
    rows: dict[str, dict[str, object]] = {}
    for proposal_id, group in disturbance.groupby(ids, sort=True):
        row: dict[str, object] = {"proposal_id": proposal_id}
        for column in present:
            values = group[column].dropna()
            values = values[values.astype(str).str.strip() != ""]
            distinct = pd.unique(values.astype(str))
            if len(distinct) > 1:
                problems.append(
                    Problem(
                        f"disturbance [{path}]",
                        f"proposal {proposal_id!r} has different {column} values on its "
                        f"features: {listing(distinct)}.",
                        f"give every feature of a proposal the same {column} (or leave all "
                        "but one empty).",
                    )
                )
            row[column] = values.iloc[0] if len(values) else None
        rows[str(proposal_id)] = row
    attributes = pd.DataFrame(list(rows.values()))
    return disturbance.drop(columns=present), attributes


def _check_attributes(attributes: pd.DataFrame, ruleset: Ruleset, name: str) -> list[Problem]:
    spec = PROPOSAL_LAYERS[ATTRIBUTE_TABLE]
    problems = validate_table(attributes, spec, layer=name)
    labels = feature_labels(attributes.reset_index(drop=True), "proposal_id")
    frame = attributes.reset_index(drop=True)
    if "land_use" in frame.columns:
        text = frame["land_use"].map(lambda v: None if pd.isna(v) else str(v).strip())
        bad = text.notna() & (text != "") & ~text.isin(LAND_USES)
        if bad.any():
            shown = [f"{lab} = {v!r}" for lab, v in zip(labels[bad], text[bad], strict=True)]
            problems.append(
                Problem(
                    name,
                    f"land_use is not one of {', '.join(LAND_USES)}: {listing(shown)}.",
                    f"write one of {', '.join(LAND_USES)} (empty when unknown).",
                )
            )
    headings, cited = ruleset.exemptions, ruleset.exemptions_citation
    if "exemption" in frame.columns and headings:
        text = frame["exemption"].map(lambda v: None if pd.isna(v) else str(v).strip())
        unread = text.map(
            lambda v: bool(v) and parse_exemption(v, headings, citation=cited) is None
        )
        bad = text.notna() & unread.astype(bool)
        if bad.any():
            shown = [f"{lab} = {v!r}" for lab, v in zip(labels[bad], text[bad], strict=True)]
            problems.append(
                Problem(
                    name,
                    f"exemption is not a letter of the ruleset's exemptions: {listing(shown)}.",
                    f"{accepted_forms(headings, citation=cited)}.",
                )
            )
    if not problems:
        problems.extend(
            _end_before_start(frame, labels, "construction_start", "construction_end", name)
        )
    return problems


def _check_dates(disturbance: gpd.GeoDataFrame | None, path: Path) -> list[Problem]:
    if disturbance is None:
        return []
    labels = feature_labels(disturbance, "disturbance_id")
    name = f"disturbance [{path}]"
    return _end_before_start(disturbance, labels, "start_date", "end_date", name)


def _end_before_start(
    frame: pd.DataFrame, labels: pd.Series, start: str, end: str, name: str
) -> list[Problem]:
    if start not in frame.columns or end not in frame.columns:
        return []
    starts = coerce_column(frame[start], "date")
    ends = coerce_column(frame[end], "date")
    bad = (ends < starts).to_numpy(dtype=bool)
    if not bad.any():
        return []
    shown = [
        f"{lab} ({s:%Y-%m-%d} to {e:%Y-%m-%d})"
        for lab, s, e in zip(labels[bad], starts[bad], ends[bad], strict=True)
    ]
    return [
        Problem(
            name,
            f"{end} is before {start}: {listing(shown)}.",
            f"correct the dates ({end} is the day of final stabilisation).",
        )
    ]


def _without_disturbance(
    attributes: pd.DataFrame | None, disturbance: gpd.GeoDataFrame | None, path: Path
) -> list[Problem]:
    """Rows of the proposals table with no disturbance feature: nothing to screen.

    Left in, such a proposal would pass every area rule at 0 sq ft.
    """
    if attributes is None or disturbance is None or "proposal_id" not in attributes.columns:
        return []
    drawn = set(id_text(disturbance["proposal_id"]).dropna())
    listed = id_text(attributes["proposal_id"]).dropna()
    missing = sorted(set(listed) - drawn)
    if not missing:
        return []
    return [
        Problem(
            f"{ATTRIBUTE_TABLE} [{path}]",
            f"{len(missing)} proposal(s) have no disturbance feature: {listing(missing)}.",
            "draw each proposal's limits of disturbance in the 'disturbance' layer with its "
            "proposal_id, or remove its row from the proposals table.",
        )
    ]


def _warn_orphans(proposals: Proposals, reports: dict[str, LayerReport]) -> None:
    """Log devices whose proposal has no disturbance (the rules still see them)."""
    disturbed = set(proposals.disturbance["proposal_id"].astype(str))
    devices = proposals.devices
    if len(devices):
        orphans = np.unique(devices.loc[~devices["proposal_id"].isin(disturbed), "proposal_id"])
        if len(orphans):
            logger.warning(
                "devices of proposals without disturbance: %s", listing(orphans.astype(str))
            )
