"""The siting sheet: where on a lot an infiltration device may legally go (PDF and PNG).

One page per lot, on the furniture of the other sheets (:mod:`gis_sw.outputs.maps.furniture`):
the lot at the largest engineering scale that fits, the town's layers around it, the
permissible device location filled, each setback line that shapes it drawn and labelled
with its distance and reason, and a side panel with the north arrow, scale bar, legend, the
allowed area in square feet with the outcome and its reason, each setback with its
citation, and the title block.

It draws what it is given: the siting polygons (:func:`gis_sw.analysis.siting.siting_polygons`)
and the setback lines (:func:`gis_sw.api.setback_lines`); it computes neither.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import matplotlib as mpl
import numpy as np
import shapely
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import atomic_path, check_writable, output_group
from gis_sw.outputs.maps import furniture
from gis_sw.outputs.maps.draw import add_lines, add_polygons, legend_handle
from gis_sw.outputs.maps.scale import plan_sheets, scale_text, sheet_size
from gis_sw.outputs.maps.sheets import FORMATS, PNG_DPI, safe_name
from gis_sw.outputs.maps.style import STYLES, LayerStyle
from gis_sw.outputs.maps.town_layers import TownData, draw_town_layers

_RC: Any = {"pdf.fonttype": 3, "font.family": "DejaVu Sans", "hatch.linewidth": 0.5}

SETBACK_STYLES: dict[str, LayerStyle] = {
    "SW205": LayerStyle("Property-line setback", "none", "#b2182b", 1.1, "", (0, (5, 2)), 1, 3.2),
    "SW206": LayerStyle("Basement setback", "none", "#54278f", 1.1, "", (0, (3, 1.5)), 1, 3.2),
    "SW201": LayerStyle("Septic setback", "none", "#8c510a", 1.1, "", (0, (1, 1.2)), 1, 3.2),
    "SW202": LayerStyle(
        "Vehicle device setback", "none", "#08519c", 1.1, "", (0, (6, 2, 1, 2)), 1, 3.2
    ),
}
"""Line style of each kind of setback line, keyed by the rule that sets it."""

LOT_STYLE = LayerStyle("The lot", "none", "#000000", 2.2, "", "-", 1.0, 3.1)


def siting_sheet_paths(
    out_dir: Path, parcel_ids: Sequence[str], formats: Sequence[str]
) -> list[Path]:
    """Return the files :func:`write_siting_sheets` writes.

    ``siting.pdf`` (one page per lot) and ``siting_<parcel>.png`` per lot.
    """
    paths = []
    if "pdf" in formats:
        paths.append(out_dir / "siting.pdf")
    if "png" in formats:
        paths += [out_dir / f"siting_{safe_name(p)}.png" for p in parcel_ids]
    return paths


def write_siting_sheets(
    out_dir: str | Path,
    polygons: gpd.GeoDataFrame,
    setbacks: Mapping[str, gpd.GeoDataFrame],
    *,
    town: TownData,
    formats: Sequence[str] = FORMATS,
    sheet: str = "ansi_b",
    overwrite: bool = False,
    run_date: dt.date | None = None,
    group: bool = True,
) -> list[Path]:
    """One siting sheet per row of ``polygons``: ``siting.pdf`` and ``siting_<parcel>.png``.

    Parameters
    ----------
    out_dir
        Folder to write into.
    polygons
        Siting polygons (:data:`gis_sw.analysis.siting.SITING_COLUMNS`), one per parcel.
    setbacks
        Parcel id to its setback lines (:data:`gis_sw.analysis.setbacks.SETBACK_COLUMNS`).
    town
        The town drawn around each lot (a :class:`~gis_sw.api.Town`), with the law's name
        for the title block.
    formats
        Any of ``"pdf"``, ``"png"``.
    sheet
        Paper size (``ansi_b``, ``ansi_d``, ``arch_d``).
    overwrite
        Replace existing files.
    run_date
        Date printed in the title block (today by default).
    group
        Write the files as one group (all or none); False to join the caller's
        :func:`~gis_sw.outputs.atomic.output_group`.

    Returns
    -------
    list of Path
        Files written.

    Raises
    ------
    OutputError
        When a file exists without ``overwrite``, a format is unknown, or writing fails.
    """
    bad = sorted(set(formats) - set(FORMATS))
    if bad or not formats:
        raise OutputError(f"unknown sheet format(s) {bad}. Fix: use pdf, png or both.")
    out = Path(out_dir)
    ids = [str(p) for p in polygons["parcel_id"]]
    targets = siting_sheet_paths(out, ids, formats)
    for path in targets:
        check_writable(path, overwrite=overwrite)
    size = sheet_size(sheet)
    date_text = (run_date or dt.datetime.now(tz=dt.UTC).date()).isoformat()
    parcels = town.layers.get("parcels")
    if parcels is None:
        raise OutputError("no parcels layer: a siting sheet draws the lot. Fix: add parcels.")
    lots = parcels.set_index(parcels["parcel_id"].astype(str)).geometry
    figures: list[Figure] = []
    with mpl.rc_context(_RC):
        for row in polygons.itertuples(index=False):
            pid = str(row.parcel_id)
            page = _SitingPage(
                lot=lots.loc[pid],
                row=row,
                lines=setbacks.get(pid),
                town=town,
                size=size,
                date_text=date_text,
            )
            figures.append(page.render())
        written: list[Path] = []
        with output_group() if group else contextlib.nullcontext():
            if "pdf" in formats:
                target = out / "siting.pdf"
                with (
                    atomic_path(target, overwrite=overwrite) as tmp,
                    PdfPages(tmp, metadata={"Title": "Permissible device locations"}) as pdf,
                ):
                    for fig in figures:
                        pdf.savefig(fig)
                written.append(target)
            if "png" in formats:
                for pid, fig in zip(ids, figures, strict=True):
                    target = out / f"siting_{safe_name(pid)}.png"
                    with atomic_path(target, overwrite=overwrite) as tmp:
                        fig.savefig(tmp, format="png", dpi=PNG_DPI)
                    written.append(target)
    return written


class _SitingPage:
    def __init__(
        self,
        *,
        lot: Any,
        row: Any,
        lines: gpd.GeoDataFrame | None,
        town: TownData,
        size: Any,
        date_text: str,
    ) -> None:
        self.lot, self.row, self.town = lot, row, town
        self.layers, self.ruleset = town.layers, town.ruleset
        self.lines = lines if lines is not None else gpd.GeoDataFrame(geometry=[])
        self.size, self.date_text = size, date_text

    def render(self) -> Figure:
        size = self.size
        minx, miny, maxx, maxy = (float(v) for v in shapely.bounds(self.lot))
        plan = plan_sheets((minx, miny, maxx, maxy), size)
        view = plan.views[0] if not plan.is_book else plan.key  # a huge lot: its key map
        assert view is not None
        fig = Figure(figsize=(size.width_in, size.height_in), dpi=100)
        FigureCanvasAgg(fig)
        ax = furniture.map_frame(fig, size.frame_in)
        bounds = view.bounds
        ax.set_xlim(bounds[0], bounds[2])
        ax.set_ylim(bounds[1], bounds[3])
        ax.set_autoscale_on(False)
        handles = draw_town_layers(ax, self.town, bounds)
        allowed = self.row.geometry
        area = float(self.row.area_sqft)
        if allowed is not None and not shapely.is_empty(allowed):
            style = STYLES["siting"]
            add_polygons(ax, [allowed], style)
            label = f"Permissible device location ({area:,.0f} sq ft)"
            handles.append(legend_handle(style, kind="polygon", label=label))
        add_lines(ax, [self.lot], LOT_STYLE)
        handles.append(legend_handle(LOT_STYLE, kind="line"))
        self._setbacks(ax, handles)
        self._panel(fig, handles, view.scale_ft_per_in, bounds, area)
        return fig

    def _setbacks(self, ax: Any, handles: list[Any]) -> None:
        seen: set[str] = set()
        for line in self.lines.itertuples(index=False):
            style = SETBACK_STYLES.get(str(line.rule_id), SETBACK_STYLES["SW205"])
            add_lines(ax, [line.geometry], style)
            if line.rule_id not in seen:
                seen.add(str(line.rule_id))
                text = f"{style.label} ({line.distance_ft:g} ft, {line.citation})"
                handles.append(legend_handle(style, kind="line", label=text))
            at = shapely.line_interpolate_point(
                shapely.get_parts(line.geometry)[0], 0.5, normalized=True
            )
            ax.annotate(
                str(line.label),
                (float(at.x), float(at.y)),
                fontsize=6.5,
                ha="center",
                va="center",
                color=style.edgecolor,
                zorder=6,
                bbox={"fc": "white", "ec": style.edgecolor, "lw": 0.5, "alpha": 0.85},
            )

    def _panel(
        self, fig: Figure, handles: list[Any], scale: float, bounds: Any, area: float
    ) -> None:
        size = self.size
        x, width = size.panel_left_in, size.panel_in
        top, bottom = size.height_in - 0.5, 0.5
        trans = fig.dpi_scale_trans
        arrow = 0.85
        cx, cy = (bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2
        convergence = furniture.grid_convergence_deg(self.layers.crs, cx, cy)
        furniture.draw_north_arrow(fig, x, top - arrow, arrow, convergence)
        furniture.draw_scale_bar(fig, x + arrow + 0.25, top - 0.45, width - arrow - 0.45, scale)
        fig.text(
            x + arrow + 0.25,
            top - 0.8,
            furniture.north_arrow_note(convergence),
            transform=trans,
            fontsize=6,
            va="top",
        )
        row = self.row
        chars = int(width * 15)
        text = [
            f"Allowed area: {area:,.0f} sq ft ({row.device_class} device"
            + (f", {row.depth_ft:g} ft deep" if np.isfinite(row.depth_ft) else "")
            + ")",
            f"Outcome: {row.outcome}",
            *textwrap.wrap(f"Reason: {row.reason}", chars, subsequent_indent="  "),
            "Setbacks that shape it:",
        ]
        for line in self.lines.itertuples(index=False):
            text += textwrap.wrap(
                f"- {line.label} ({line.citation})", chars, subsequent_indent="   "
            )
        if len(self.lines) == 0:
            text.append("- none crosses the lot")
        y = top - arrow - 0.25
        fig.text(x, y, "\n".join(text), transform=trans, fontsize=7, va="top", linespacing=1.3)
        text_h = 0.145 * len(text) + 0.2
        block_h = 2.75
        furniture.draw_legend(
            fig,
            handles,
            left=x,
            top=y - text_h,
            width=width,
            height=y - text_h - bottom - block_h - 0.2,
        )
        title = furniture.TitleBlock(
            proposal=f"Siting on parcel {row.parcel_id}",
            parcels=[str(row.parcel_id)],
            zones=self._zones(),
            ruleset=self.ruleset.name,
            ruleset_version=self.ruleset.version,
            law=self.ruleset.title,
            run_date=self.date_text,
            scale=f"Scale {scale_text(scale)}",
            sheet=f"Siting sheet, {size.title}",
            counts=f"allowed area {area:,.0f} sq ft, {row.outcome}",
        )
        furniture.draw_title_block(fig, title, left=x, bottom=bottom, width=width, height=block_h)

    def _zones(self) -> list[str]:
        zoning = self.layers.get("zoning")
        column = self.ruleset.zones.zone_column
        if zoning is None or column not in zoning.columns:
            return []
        hits = zoning.sindex.query(self.lot, predicate="intersects")
        return sorted({str(z) for z in zoning[column].iloc[hits]})
