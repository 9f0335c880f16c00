"""One drawn page of a proposal's map sheets: the map frame and the side panel.

:class:`Page` draws on a fresh :class:`matplotlib.figure.Figure` what
:mod:`gis_sw.outputs.maps.sheets` planned: the town's layers, the proposal, its findings and
their labels in the frame; the location map, north arrow, scale bar, legend, notes and title
block in the panel.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from gis_sw.outputs.maps import furniture
from gis_sw.outputs.maps.labels import place_labels
from gis_sw.outputs.maps.scale import SheetPlan, SheetSize, View
from gis_sw.outputs.maps.site import (
    SiteData,
    device_label_items,
    draw_basemap,
    draw_contours,
    draw_findings,
    draw_proposal,
    finding_items,
    in_view,
)
from gis_sw.outputs.maps.town_layers import TownData, draw_town_layers

__all__ = ["Page"]

_TAB: dict[str, dict[str, Any]] = {
    "right": {"ha": "right", "va": "center", "rotation": 90},
    "left": {"ha": "left", "va": "center", "rotation": 90},
    "top": {"ha": "center", "va": "top"},
    "bottom": {"ha": "center", "va": "bottom"},
}
"""Where a match-line tab sits against each edge of the frame."""


class Page:
    """Draws one page on a fresh figure."""

    def __init__(
        self,
        *,
        plan: SheetPlan,
        view: View,
        number: int,
        site: SiteData,
        town: TownData,
        title: furniture.TitleBlock,
        unplaced: Sequence[str],
        basemap: str | Path | None,
        site_bounds: tuple[float, float, float, float],
    ) -> None:
        self.plan, self.view, self.number, self.site = plan, view, number, site
        self.town, self.title = town, title
        self.layers, self.ruleset = town.layers, town.ruleset
        self.unplaced, self.basemap, self.site_bounds = unplaced, basemap, site_bounds

    def render(self) -> Figure:
        """Draw the page; the figure is also kept in ``self.figure``."""
        sheet: SheetSize = self.plan.sheet
        fig = Figure(figsize=(sheet.width_in, sheet.height_in), dpi=100)
        FigureCanvasAgg(fig)
        ax = furniture.map_frame(fig, sheet.frame_in)
        for spine in ax.spines.values():
            spine.set_linewidth(1.2)
        bounds = self.view.bounds
        ax.set_xlim(bounds[0], bounds[2])
        ax.set_ylim(bounds[1], bounds[3])
        ax.set_autoscale_on(False)
        if self.basemap is not None:
            draw_basemap(ax, self.basemap, self.layers.crs, bounds)
        handles = draw_town_layers(ax, self.town, bounds)
        if self.view.label != "key":
            handles += draw_contours(ax, self.layers, bounds)
        handles += draw_proposal(ax, self.site, self.ruleset, bounds)
        handles += draw_findings(ax, self.site.findings, bounds)
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        self.label_boxes: list[Any] = []
        self.avoided: list[Any] = []
        if self.view.label == "key":
            self._draw_tiles(ax)
        else:
            tabs = self._match_lines(ax) if self.plan.is_book else []
            zone_names = [t for t in ax.texts if t.get_gid() == "zone-label"]
            self.avoided = [t.get_window_extent(renderer).padded(2.0) for t in tabs + zone_names]
            items, _ = finding_items(self.site.findings)
            devices = in_view(self.site.devices, bounds)
            if devices is not None:
                items += device_label_items(devices)
            placement = place_labels(ax, items, renderer=renderer, avoid=self.avoided)
            self.label_boxes = placement.boxes
            self.unplaced = [*self.unplaced, *(i.text for i in placement.unplaced)]
        self._panel(fig, handles)
        self.figure = fig
        return fig

    def _match_lines(self, ax: Any) -> list[Any]:
        """On a map-book sheet, name the sheet that continues past each edge; the tabs."""
        tabs: list[Any] = []
        x0, y0, x1, y1 = self.view.bounds
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        box = {"fc": "white", "ec": "black", "lw": 0.6, "boxstyle": "round,pad=0.25"}
        for other in self.plan.views:
            ox0, oy0, ox1, oy1 = other.bounds
            text = f"See sheet {other.label}"
            # (the other sheet lies past this edge, where the tab goes, its text and place)
            edges = (
                (math.isclose(ox0, x1) and math.isclose(oy0, y0), (x1, cy), text + " →", "right"),
                (math.isclose(ox1, x0) and math.isclose(oy0, y0), (x0, cy), "← " + text, "left"),
                (math.isclose(oy0, y1) and math.isclose(ox0, x0), (cx, y1), text + " ↑", "top"),
                (math.isclose(oy1, y0) and math.isclose(ox0, x0), (cx, y0), text + " ↓", "bottom"),
            )
            for matched, (x, y), words, side in edges:
                if matched:  # the first edge it continues past
                    tabs.append(ax.text(x, y, words, fontsize=8, zorder=7, bbox=box, **_TAB[side]))
                    break
        return tabs

    def _draw_tiles(self, ax: Any) -> None:
        for view in self.plan.views:
            x0, y0, x1, y1 = view.bounds
            ax.add_patch(
                Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec="black", lw=1.6, zorder=7)
            )
            ax.text(
                x0 + (x1 - x0) * 0.04,
                y1 - (y1 - y0) * 0.05,
                f"Sheet {view.label}",
                ha="left",
                va="top",
                fontsize=12,
                fontweight="bold",
                zorder=7,
                bbox={"fc": "white", "ec": "black", "lw": 0.8},
            )

    def _panel(self, fig: Figure, handles: list[Any]) -> None:
        sheet = self.plan.sheet
        x = sheet.panel_left_in
        width = sheet.panel_in
        top = sheet.height_in - 0.5
        bottom = 0.5
        loc_h = min(width * 0.78, 3.6)
        furniture.draw_location_map(
            fig,
            (x, top - loc_h, width, loc_h),
            zoning=self.layers.get("zoning"),
            parcels=self.layers.get("parcels"),
            site_bounds=self.site_bounds,
            zone_column=self.ruleset.zones.zone_column,
            low_threshold_zones=self.ruleset.zones.low_threshold_zones,
        )
        y = top - loc_h - 0.15
        arrow_size = 0.85
        cx = (self.view.bounds[0] + self.view.bounds[2]) / 2
        cy = (self.view.bounds[1] + self.view.bounds[3]) / 2
        convergence = furniture.grid_convergence_deg(self.layers.crs, cx, cy)
        furniture.draw_north_arrow(fig, x, y - arrow_size, arrow_size, convergence)
        bar_left = x + arrow_size + 0.25
        furniture.draw_scale_bar(
            fig, bar_left, y - 0.45, width - arrow_size - 0.45, self.view.scale_ft_per_in
        )
        fig.text(
            bar_left,
            y - 0.8,
            furniture.north_arrow_note(convergence),
            transform=fig.dpi_scale_trans,
            fontsize=6,
            va="top",
        )
        y -= arrow_size + 0.2
        block_h = 2.75
        notes = self._notes(width)
        notes_h = 0.14 * len(notes) + (0.1 if notes else 0)
        furniture.draw_legend(
            fig, handles, left=x, top=y, width=width, height=y - bottom - block_h - notes_h - 0.2
        )
        if notes:
            fig.text(
                x,
                bottom + block_h + 0.1 + notes_h,
                "\n".join(notes),
                transform=fig.dpi_scale_trans,
                fontsize=6.5,
                va="top",
                color="#b2182b",
            )
        furniture.draw_title_block(
            fig, self.title, left=x, bottom=bottom, width=width, height=block_h
        )

    def _notes(self, width_in: float) -> list[str]:
        if not self.unplaced:
            return []
        lines = ["Findings with no place on the map:"]
        for text in self.unplaced[:6]:
            lines.extend(textwrap.wrap(text, int(width_in * 17), subsequent_indent="   "))
        if len(self.unplaced) > 6:
            lines.append(f"... and {len(self.unplaced) - 6} more (see the findings table)")
        return lines
