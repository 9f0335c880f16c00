"""Every map of a screening run in one call: the sheets and ``webmap.html``.

``gis-sw map`` and ``gis-sw check --map`` both end here, so they draw the same thing:
:func:`map_paths` says which files a run will write (to refuse an existing one before
anything is written), :func:`write_maps` writes them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gis_sw.outputs.maps.sheets import sheet_paths, write_sheets

if TYPE_CHECKING:
    from gis_sw.screening import Screening

log = logging.getLogger(__name__)

MAP_CHOICES: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",),
    "png": ("png",),
    "both": ("pdf", "png"),
    "none": (),
}
"""``--map`` / ``--format`` values and the sheet formats they mean."""

WEBMAP_NAME = "webmap.html"


def map_paths(
    out_dir: str | Path,
    screening: Screening,
    *,
    formats: Sequence[str],
    sheet: str = "ansi_b",
    webmap: bool = True,
    proposal_ids: Sequence[str] | None = None,
) -> list[Path]:
    """Return the files :func:`write_maps` will write (none: no format and no web map)."""
    paths: list[Path] = []
    if formats:
        paths += sheet_paths(
            out_dir, screening, formats=formats, sheet=sheet, proposal_ids=proposal_ids
        )
    if webmap:
        paths.append(Path(out_dir) / WEBMAP_NAME)
    return paths


def write_maps(
    out_dir: str | Path,
    screening: Screening,
    *,
    formats: Sequence[str] = ("pdf", "png"),
    sheet: str = "ansi_b",
    webmap: bool = True,
    siting: bool = True,
    basemap: str | Path | None = None,
    overwrite: bool = False,
    proposal_ids: Sequence[str] | None = None,
) -> list[Path]:
    """Write the sheets (``formats``) and ``webmap.html`` of the screening's proposals.

    Parameters
    ----------
    out_dir
        The folder written into.
    screening
        What is drawn (:class:`gis_sw.screening.Screening`).
    formats, sheet
        Sheet formats (``pdf``, ``png``) and paper size.
    webmap
        Also write ``webmap.html``.
    siting
        Draw the screening's siting polygons on both.
    basemap
        A local GeoTIFF under the sheets.
    overwrite
        Replace existing files.
    proposal_ids
        Only these proposals (default: every one).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    OutputError
        When an output exists without ``overwrite`` or cannot be written.
    """
    from gis_sw.outputs.webmap import write_webmap

    ids = list(proposal_ids) if proposal_ids is not None else screening.proposals.ids
    written: list[Path] = []
    if formats:
        written += write_sheets(
            out_dir,
            screening,
            formats=formats,
            sheet=sheet,
            siting=siting,
            basemap=basemap,
            overwrite=overwrite,
            proposal_ids=ids,
        )
    if webmap:
        target = Path(out_dir) / WEBMAP_NAME
        written.append(
            write_webmap(target, screening, siting=siting, overwrite=overwrite, proposal_ids=ids)
        )
    log.info("maps: %d file(s) in %s", len(written), out_dir)
    return written
