"""Every output of ``gis-sw check`` in one call: :func:`write_check_outputs`.

Files in ``out_dir``:

* ``findings.geojson``, ``findings_lines.geojson``, ``findings_points.geojson``: RFC 7946,
  one geometry type each (:mod:`gis_sw.outputs.geojson`);
* ``findings.gpkg``: the same findings in the working CRS (:mod:`gis_sw.outputs.geopackage`);
* ``summary.csv``: one row per finding, no geometry (:mod:`gis_sw.outputs.summary`);
* ``waivers.csv``: when waivers were given, what each did (applied, expired, unmatched).

* ``calcsheet.csv``: the runoff calculation sheet (:mod:`gis_sw.outputs.calcsheet`), and
  ``calcsheet.pdf``, its page of the PDF map set, when PDF maps are written;
* ``timeline_<id>.png``: disturbed acres over time, per proposal with dated phases, when
  maps are asked for (with ``--map none`` no file is written per proposal);
* map sheets and ``webmap.html`` when maps are asked for (:mod:`gis_sw.outputs.maps`).

Every file is written atomically, and the whole set is published together
(:func:`gis_sw.outputs.atomic.output_group`): a run that fails or is killed half-way leaves
the previous outputs as they were.  When any output exists and ``overwrite`` is False,
nothing is written.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import geopandas as gpd
import pandas as pd

from gis_sw.analysis.waivers import WaiverResult
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.atomic import check_writable, output_group, write_text_atomic
from gis_sw.outputs.calcsheet import write_run_calc_sheet
from gis_sw.outputs.geojson import FAMILY_FILES, write_findings_geojson
from gis_sw.outputs.geopackage import write_findings_geopackage
from gis_sw.outputs.summary import write_summary_csv
from gis_sw.outputs.timeline import timeline_path, write_timelines
from gis_sw.ruleset import Ruleset

__all__ = ["CHECK_OUTPUTS", "waivers_frame", "write_check_outputs"]

CHECK_OUTPUTS: tuple[str, ...] = (
    *(name for name, _ in FAMILY_FILES.values()),
    "findings.gpkg",
    "summary.csv",
)
"""Files every ``gis-sw check`` run writes (``waivers.csv`` only with waivers)."""


def waivers_frame(results: Sequence[WaiverResult]) -> pd.DataFrame:
    """One row per waiver: status, what it names, reason, expiry, matched finding ids."""
    return pd.DataFrame(
        {
            "status": [str(r.status) for r in results],
            "finding_id": [r.waiver.finding_id or "" for r in results],
            "rule_id": [r.waiver.rule_id or "" for r in results],
            "subject_id": [r.waiver.subject_id or "" for r in results],
            "proposal_id": [r.waiver.proposal_id or "" for r in results],
            "reason": [r.waiver.reason for r in results],
            "expires": [r.waiver.expires.isoformat() if r.waiver.expires else "" for r in results],
            "matched": [" ".join(r.finding_ids) for r in results],
            "source": [r.waiver.where for r in results],
        }
    )


def write_check_outputs(
    out_dir: str | Path,
    findings: gpd.GeoDataFrame,
    *,
    layers: LayerSet,
    proposals: Proposals,
    ruleset: Ruleset,
    overwrite: bool = False,
    waiver_results: Sequence[WaiverResult] | None = None,
    maps: Sequence[str] | None = None,
) -> list[Path]:
    """Write findings (GeoJSON, GeoPackage), the summary and the waiver report.

    Parameters
    ----------
    out_dir
        Folder for the outputs (created when missing).
    findings
        Output of :func:`gis_sw.analysis.engine.run_rules` (after waivers).
    layers, proposals, ruleset
        The run's inputs, for outputs that draw them (maps, phasing chart).
    overwrite
        Replace existing outputs.
    waiver_results
        What each waiver did; writes ``waivers.csv`` when given.
    maps
        Formats of the map sheets (``("pdf", "png")``, one of them, or none), written with
        ``webmap.html`` by :func:`gis_sw.outputs.maps.bundle.write_maps`; None: no map.

    Returns
    -------
    list of Path
        Every file written.

    Raises
    ------
    OutputError
        If an output exists and ``overwrite`` is False (checked before anything is written),
        or a file cannot be written.
    """
    out_dir = Path(out_dir)
    for path in planned_outputs(
        out_dir, findings, proposals=proposals, waivers=waiver_results is not None, maps=maps
    ):
        check_writable(path, overwrite=overwrite)
    with output_group():
        written = write_findings_geojson(out_dir, findings, overwrite=overwrite)
        written.append(
            write_findings_geopackage(out_dir / "findings.gpkg", findings, overwrite=overwrite)
        )
        written.append(write_summary_csv(out_dir / "summary.csv", findings, overwrite=overwrite))
        if waiver_results is not None:
            buffer = io.StringIO()
            waivers_frame(waiver_results).to_csv(buffer, index=False, lineterminator="\n")
            written.append(
                write_text_atomic(out_dir / "waivers.csv", buffer.getvalue(), overwrite=overwrite)
            )
        if maps is not None:  # a chart per proposal only when drawings are asked for
            written += write_timelines(
                out_dir, proposals=proposals, ruleset=ruleset, overwrite=overwrite
            )
        written += write_run_calc_sheet(
            out_dir,
            layers=layers,
            proposals=proposals,
            ruleset=ruleset,
            overwrite=overwrite,
            pdf=maps is not None and "pdf" in maps,
        )
        if maps is not None:
            from gis_sw.outputs.maps.bundle import write_maps

            written += write_maps(
                out_dir,
                layers=layers,
                proposals=proposals,
                findings=findings,
                ruleset=ruleset,
                formats=maps,
                overwrite=overwrite,
            )
    return written


def planned_outputs(
    out_dir: Path,
    findings: gpd.GeoDataFrame,
    *,
    proposals: Proposals,
    waivers: bool,
    maps: Sequence[str] | None,
) -> list[Path]:
    """Every file a check run may write, so existing ones are refused before any write."""
    names = [*CHECK_OUTPUTS, "calcsheet.csv", *(["waivers.csv"] if waivers else [])]
    names += ["calcsheet.pdf"] if maps is not None and "pdf" in maps else []
    paths = [out_dir / name for name in names]
    if maps is not None:
        dated = proposals.disturbance.loc[
            proposals.disturbance["start_date"].notna(), "proposal_id"
        ]
        paths += [timeline_path(out_dir, pid) for pid in sorted(set(dated.astype(str)))]
        from gis_sw.outputs.maps.bundle import map_paths

        paths += map_paths(out_dir, proposals=proposals, findings=findings, formats=maps)
    return paths
