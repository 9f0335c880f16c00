"""Engineering-scale map sheets of each proposal (PDF and PNG).

One sheet per proposal at the largest of 1" = 10', 20', 30', 40', 50' at which the site fits;
a map book at 1" = 50' with a key map when it does not (§ 183-12C(3)(a)[3]).  Each page has
the map frame at true scale, and a side panel with the location map with zoning, north arrow,
scale bar, legend, and the title block.  Fail and review findings are highlighted and labelled
(``SW205 9.0 ft < 10 ft``); those with no place on the map are listed in the panel.

Figures are built with :class:`matplotlib.figure.Figure` and the Agg canvas (no pyplot state),
and PDFs embed subset Type 3 fonts with a text layer, so their text can be searched
(TrueType embedding took twice as long for the same result).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import matplotlib as mpl
import numpy as np
import shapely
from matplotlib.backends.backend_pdf import PdfPages

from gis_sw.errors import OutputError
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.atomic import atomic_path, check_writable
from gis_sw.outputs.maps import furniture
from gis_sw.outputs.maps.page import Page
from gis_sw.outputs.maps.scale import SheetPlan, SheetSize, plan_sheets, scale_text, sheet_size
from gis_sw.outputs.maps.site import HIGHLIGHT_OUTCOMES, SiteData, finding_items
from gis_sw.outputs.maps.town_layers import TownData
from gis_sw.outputs.names import file_stem, file_stems
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from gis_sw.screening import Screening

log = logging.getLogger(__name__)

FORMATS = ("pdf", "png")
PNG_DPI = 150
_RC: Any = {"pdf.fonttype": 3, "font.family": "DejaVu Sans", "hatch.linewidth": 0.5}


def safe_name(proposal_id: str, proposal_ids: Sequence[str] | None = None) -> str:
    """Return the file stem of a proposal's sheets among ``proposal_ids`` (the whole run).

    :func:`gis_sw.outputs.names.file_stem`, unique by construction.
    """
    return file_stem(proposal_id, proposal_ids)


def _site_data(
    proposal_id: str,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    siting: gpd.GeoDataFrame | gpd.GeoSeries | None,
) -> SiteData:
    def mine(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        return frame[frame["proposal_id"].astype(str) == proposal_id]

    impervious = proposals.impervious
    siting_frame: gpd.GeoDataFrame | None = None
    if siting is not None:
        siting_frame = (
            gpd.GeoDataFrame(geometry=siting) if isinstance(siting, gpd.GeoSeries) else siting
        )
        if "proposal_id" in siting_frame.columns:
            siting_frame = mine(siting_frame)
    return SiteData(
        proposal_id=proposal_id,
        disturbance=mine(proposals.disturbance),
        devices=mine(proposals.devices),
        impervious=None if impervious is None else mine(impervious),
        findings=mine(findings) if len(findings) else findings,
        siting=siting_frame,
    )


def site_geometry(site: SiteData) -> shapely.Geometry:
    """Return what the sheet must show.

    The disturbance, devices, new impervious surfaces and the fail and review findings (the
    line to the offending well); else any finding.
    """
    geoms = [*site.disturbance.geometry.to_numpy(), *site.devices.geometry.to_numpy()]
    if len(site.findings):
        shown = site.findings[site.findings["outcome"].isin(HIGHLIGHT_OUTCOMES)]
        geoms.extend(shown.geometry.to_numpy())
    if site.impervious is not None:
        geoms.extend(site.impervious.geometry.to_numpy())
    found = shapely.union_all(np.asarray([g for g in geoms if g is not None], dtype=object))
    if shapely.is_empty(found) and len(site.findings):
        located = site.findings.geometry.dropna()
        found = shapely.union_all(located.to_numpy())
    return found


def _facts(
    site_geom: shapely.Geometry, layers: LayerSet, ruleset: Ruleset
) -> tuple[list[str], list[str], list[str]]:
    """Parcels, zones and ``address, owner`` lines under the site."""
    parcels_touched: list[str] = []
    zones_touched: list[str] = []
    addresses: list[str] = []
    parcels = layers.get("parcels")
    if parcels is not None and len(parcels):
        hits = parcels.sindex.query(site_geom, predicate="intersects")
        rows = parcels.iloc[hits].sort_values("parcel_id")
        parcels_touched = sorted({str(p) for p in rows["parcel_id"]})
        for rec in rows.drop(columns="geometry").to_dict("records"):
            words = [
                str(rec[c]) for c in ("address", "owner") if isinstance(rec.get(c), str) and rec[c]
            ]
            if words:
                addresses.append(", ".join(words))
    zoning = layers.get("zoning")
    column = ruleset.zones.zone_column
    if zoning is not None and len(zoning) and column in zoning.columns:
        hits = zoning.sindex.query(site_geom, predicate="intersects")
        zones_touched = sorted({str(z) for z in zoning.iloc[hits][column].dropna()})
    return parcels_touched, zones_touched, list(dict.fromkeys(addresses))


def _counts(findings: gpd.GeoDataFrame) -> str:
    if len(findings) == 0:
        return "none"
    counts = findings["outcome"].value_counts()
    order = ("fail", "review", "required", "info", "pass")
    return ", ".join(f"{int(counts[o])} {o}" for o in order if o in counts.index)


def _targets(
    out_dir: Path, name: str, plan: SheetPlan, formats: Sequence[str]
) -> dict[str, list[Path]]:
    targets: dict[str, list[Path]] = {}
    out_dir = out_dir / name  # each application's sheets in its own folder
    if "pdf" in formats:
        targets["pdf"] = [out_dir / f"{name}.pdf"]
    if "png" in formats:
        if plan.is_book:
            targets["png"] = [out_dir / f"{name}_key.png"] + [
                out_dir / f"{name}_sheet-{view.label}.png" for view in plan.views
            ]
        else:
            targets["png"] = [out_dir / f"{name}.png"]
    return targets


def write_sheets(
    out_dir: str | Path,
    screening: Screening,
    *,
    formats: Sequence[str] = FORMATS,
    sheet: str = "ansi_b",
    siting: bool = False,
    basemap: str | Path | None = None,
    overwrite: bool = False,
    proposal_ids: Sequence[str] | None = None,
    scale_ft_per_in: float | None = None,
    run_date: dt.date | None = None,
) -> list[Path]:
    """Write the map sheets of every proposal (or of ``proposal_ids``).

    A proposal that fits one sheet gives ``<id>.pdf`` and ``<id>.png``; a map book gives one
    multi-page ``<id>.pdf`` (key map first) and ``<id>_key.png``, ``<id>_sheet-N.png``.

    Parameters
    ----------
    out_dir
        Folder to write into (created when missing).
    screening
        The screening drawn: its town's layers, its proposals and findings.
    formats
        Any of ``"pdf"``, ``"png"``.
    sheet
        ``ansi_b`` (11 x 17 in, default), ``ansi_d`` or ``arch_d``, landscape.
    siting
        Draw the screening's siting polygons
        (:meth:`~gis_sw.screening.Screening.device_siting` of the proposals drawn).
    basemap
        A local GeoTIFF drawn under the map.
    overwrite
        Replace existing files.
    proposal_ids
        Only these proposals.
    scale_ft_per_in
        Force one scale instead of choosing.
    run_date
        Date printed in the title block (today by default).

    Returns
    -------
    list of Path
        Files written, in order.

    Raises
    ------
    OutputError
        When a file exists without ``overwrite``, a format or sheet is unknown, or writing fails.
    """
    bad = sorted(set(formats) - set(FORMATS))
    if bad or not formats:
        raise OutputError(f"unknown map format(s) {bad}. Fix: use pdf, png or both.")
    size = sheet_size(sheet)
    proposals = screening.proposals
    wanted = list(proposal_ids) if proposal_ids is not None else proposals.ids
    unknown = sorted(set(wanted) - set(proposals.ids))
    if unknown:
        raise OutputError(
            f"no proposal {unknown[0]!r} in {proposals.source or 'the proposals'}. "
            f"Fix: use one of {', '.join(proposals.ids[:10])}."
        )
    sited = screening.device_siting(wanted) if siting else None
    date_text = (run_date or dt.datetime.now(tz=dt.UTC).date()).isoformat()
    stems = file_stems(proposals.ids)
    written: list[Path] = []
    with mpl.rc_context(_RC):
        for proposal_id in wanted:
            site = _site_data(proposal_id, proposals, screening.findings, sited)
            planned = _plan(site, size, scale_ft_per_in)
            if planned is None:
                log.warning(
                    "proposal %s has nothing to draw (no disturbance, device or finding)",
                    proposal_id,
                )
                continue
            targets = _targets(Path(out_dir), stems[proposal_id], planned[0], formats)
            for path in (p for group in targets.values() for p in group):
                check_writable(path, overwrite=overwrite)
            pages = _render_pages(
                proposal_id,
                site,
                planned,
                town=screening,
                proposals=proposals,
                size=size,
                basemap=basemap,
                date_text=date_text,
            )
            written += _save(proposal_id, pages, planned[0], targets, overwrite=overwrite)
    return written


def _plan(
    site: SiteData, size: SheetSize, scale_ft_per_in: float | None
) -> tuple[SheetPlan, Any, tuple[float, float, float, float]] | None:
    """Return the pages of one proposal, the site geometry and its bounds (None: nothing)."""
    geom = site_geometry(site)
    if geom is None or shapely.is_empty(geom):
        return None
    # a map-book page is kept only when it shows some of the proposal's own work
    work = [*site.disturbance.geometry.to_numpy(), *site.devices.geometry.to_numpy()]
    if site.impervious is not None:
        work.extend(site.impervious.geometry.to_numpy())
    own = shapely.union_all(np.asarray([g for g in work if g is not None], dtype=object))
    reach = shapely.buffer(geom if shapely.is_empty(own) else own, 25.0)

    def holds_site(tile: tuple[float, float, float, float]) -> bool:
        return bool(shapely.intersects(shapely.box(*tile), reach))

    minx, miny, maxx, maxy = (float(v) for v in shapely.bounds(geom))
    bounds = (minx, miny, maxx, maxy)
    plan = plan_sheets(bounds, size, scale_ft_per_in=scale_ft_per_in, tile_filter=holds_site)
    return plan, geom, bounds


def sheet_paths(
    out_dir: str | Path,
    screening: Screening,
    *,
    formats: Sequence[str] = FORMATS,
    sheet: str = "ansi_b",
    proposal_ids: Sequence[str] | None = None,
    scale_ft_per_in: float | None = None,
) -> list[Path]:
    """Return the files :func:`write_sheets` would write, without drawing anything.

    Lets a caller refuse an existing output before it writes anything else (the siting
    polygons drawn do not change which pages a proposal has).
    """
    size = sheet_size(sheet)
    proposals = screening.proposals
    stems = file_stems(proposals.ids)
    paths: list[Path] = []
    for proposal_id in proposal_ids if proposal_ids is not None else proposals.ids:
        site = _site_data(proposal_id, proposals, screening.findings, None)
        planned = _plan(site, size, scale_ft_per_in)
        if planned is None:
            continue
        targets = _targets(Path(out_dir), stems[proposal_id], planned[0], formats)
        paths.extend(p for group in targets.values() for p in group)
    return paths


def _save(
    proposal_id: str,
    pages: Sequence[Page],
    plan: SheetPlan,
    targets: dict[str, list[Path]],
    *,
    overwrite: bool,
) -> list[Path]:
    """Write the drawn pages: one PDF of every page, a PNG per page; the files written."""
    figures = [page.figure for page in pages]
    written: list[Path] = []
    if "pdf" in targets:
        target = targets["pdf"][0]
        with (
            atomic_path(target, overwrite=overwrite) as tmp,
            PdfPages(tmp, metadata={"Title": f"Stormwater screening map {proposal_id}"}) as pdf,
        ):
            for fig in figures:
                pdf.savefig(fig)
        written.append(target)
    for target, fig in zip(targets.get("png", []), figures, strict=False):
        with atomic_path(target, overwrite=overwrite) as tmp:
            fig.savefig(tmp, format="png", dpi=PNG_DPI)
        written.append(target)
    log.info(
        "proposal %s: %d page(s) at %s",
        proposal_id,
        len(pages),
        scale_text(plan.views[0].scale_ft_per_in) if plan.views else "?",
    )
    return written


def _render_pages(
    proposal_id: str,
    site: SiteData,
    planned: tuple[SheetPlan, Any, tuple[float, float, float, float]],
    *,
    town: TownData,
    proposals: Proposals,
    size: SheetSize,
    basemap: str | Path | None,
    date_text: str,
) -> list[Page]:
    """Draw every page of one proposal as :func:`_plan` planned it (figures in ``.figure``)."""
    plan, geom, bounds = planned
    ruleset = town.ruleset
    core = shapely.union_all(
        np.asarray([*site.disturbance.geometry, *site.devices.geometry], dtype=object)
    )
    parcels, zones, addresses = _facts(
        geom if shapely.is_empty(core) else core, town.layers, ruleset
    )
    items, unplaced = finding_items(site.findings)
    views = plan.views
    seen = {
        item.key
        for item in items
        if any(
            v.bounds[0] <= item.xy[0] <= v.bounds[2] and v.bounds[1] <= item.xy[1] <= v.bounds[3]
            for v in views
        )
    }
    unplaced += [f"{i.text} (outside the sheets)" for i in items if i.key not in seen]
    name = proposals.attributes["name"].get(proposal_id) if len(proposals.attributes) else None
    title_proposal = proposal_id + (f" ({name})" if isinstance(name, str) and name else "")
    pages = plan.pages
    rendered: list[Page] = []
    for number, view in enumerate(pages, start=1):
        if view.label == "key":
            sheet_text = f"Key map, page 1 of {len(pages)}"
        elif plan.is_book:
            sheet_text = f"Sheet {view.label} of {len(views)} (page {number} of {len(pages)})"
        else:
            sheet_text = "Sheet 1 of 1"
        title = furniture.TitleBlock(
            proposal=title_proposal,
            parcels=parcels,
            zones=zones,
            ruleset=ruleset.name,
            ruleset_version=ruleset.version,
            law=ruleset.title,
            run_date=date_text,
            scale=f"Scale {scale_text(view.scale_ft_per_in)}",
            sheet=f"{sheet_text}, {size.title}",
            counts=_counts(site.findings),
            addresses=addresses,
        )
        page = Page(
            plan=plan,
            view=view,
            number=number,
            site=site,
            town=town,
            title=title,
            unplaced=unplaced,
            basemap=basemap,
            site_bounds=bounds,
        )
        page.render()
        rendered.append(page)
    return rendered


def render_pages(
    proposal_id: str,
    screening: Screening,
    *,
    sheet: str = "ansi_b",
    siting: bool = False,
    scale_ft_per_in: float | None = None,
    run_date: dt.date | None = None,
) -> list[Page]:
    """Return the drawn pages of one proposal without writing them.

    For checks of what a sheet shows: its figure, label boxes and the boxes labels avoided.
    """
    size = sheet_size(sheet)
    sited = screening.device_siting([proposal_id]) if siting else None
    site = _site_data(proposal_id, screening.proposals, screening.findings, sited)
    planned = _plan(site, size, scale_ft_per_in)
    if planned is None:
        return []
    date_text = (run_date or dt.datetime.now(tz=dt.UTC).date()).isoformat()
    with mpl.rc_context(_RC):
        return _render_pages(
            proposal_id,
            site,
            planned,
            town=screening,
            proposals=screening.proposals,
            size=size,
            basemap=None,
            date_text=date_text,
        )
