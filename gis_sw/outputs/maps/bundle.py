"""Every map of a screening run in one call: the sheets and ``webmap.html``.

``gis-sw map`` and ``gis-sw check --map`` both end here, so they draw the same thing:
:func:`map_paths` says which files a run will write (to refuse an existing one before
anything is written), :func:`write_maps` writes them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import geopandas as gpd
import pandas as pd

from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.maps.sheets import sheet_paths, write_sheets
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

MAP_CHOICES: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",),
    "png": ("png",),
    "both": ("pdf", "png"),
    "none": (),
}
"""``--map`` / ``--format`` values and the sheet formats they mean."""

WEBMAP_NAME = "webmap.html"


def siting_for(
    layers: LayerSet, proposals: Proposals, ruleset: Ruleset, ids: Sequence[str]
) -> gpd.GeoDataFrame | None:
    """Siting polygons of the parcels under each proposal's devices.

    Roof class for devices that do not serve vehicle traffic, vehicle class for those that
    do, at the deepest device depth given; None when no device sits on a parcel.
    """
    from gis_sw.analysis.siting import siting_polygons

    parcels = layers.get("parcels")
    devices = proposals.devices[proposals.devices["proposal_id"].isin(list(ids))]
    if parcels is None or len(devices) == 0:
        return None
    frames = []
    vehicle = devices["serves_vehicle_traffic"].astype("boolean").fillna(value=False)
    for device_class, mask in (("roof", ~vehicle), ("vehicle", vehicle)):
        chosen = devices[mask.to_numpy(dtype=bool)]
        if len(chosen) == 0:
            continue
        left, right = parcels.sindex.query(chosen.geometry.to_numpy(), predicate="intersects")
        if len(left) == 0:
            continue
        parcel_ids = sorted({str(p) for p in parcels.iloc[right]["parcel_id"]})
        depth = pd.to_numeric(chosen["depth_ft"], errors="coerce").max()
        polygons = siting_polygons(
            layers,
            ruleset,
            parcel_ids=parcel_ids,
            device_class=device_class,
            depth_ft=None if pd.isna(depth) else float(depth),
        )
        owner = dict(
            zip(
                parcels.iloc[right]["parcel_id"].astype(str),
                chosen.iloc[left]["proposal_id"].astype(str),
                strict=True,
            )
        )
        polygons["proposal_id"] = polygons["parcel_id"].map(owner)
        frames.append(polygons)
    if not frames:
        return None
    return gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=frames[0].crs)


def map_paths(
    out_dir: str | Path,
    *,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    formats: Sequence[str],
    sheet: str = "ansi_b",
    webmap: bool = True,
    proposal_ids: Sequence[str] | None = None,
) -> list[Path]:
    """Files :func:`write_maps` will write (none when ``formats`` is empty and no web map)."""
    paths: list[Path] = []
    if formats:
        paths += sheet_paths(
            out_dir,
            proposals=proposals,
            findings=findings,
            formats=formats,
            sheet=sheet,
            proposal_ids=proposal_ids,
        )
    if webmap:
        paths.append(Path(out_dir) / WEBMAP_NAME)
    return paths


def write_maps(
    out_dir: str | Path,
    *,
    layers: LayerSet,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    ruleset: Ruleset,
    formats: Sequence[str] = ("pdf", "png"),
    sheet: str = "ansi_b",
    webmap: bool = True,
    siting: bool = True,
    basemap: str | Path | None = None,
    overwrite: bool = False,
    proposal_ids: Sequence[str] | None = None,
) -> list[Path]:
    """Write the sheets (``formats``) and ``webmap.html`` of the proposals.

    Raises
    ------
    OutputError
        When an output exists without ``overwrite`` or cannot be written.
    """
    from gis_sw.outputs.webmap import write_webmap

    ids = list(proposal_ids) if proposal_ids is not None else proposals.ids
    sited = siting_for(layers, proposals, ruleset, ids) if siting else None
    written: list[Path] = []
    if formats:
        written += write_sheets(
            out_dir,
            layers=layers,
            proposals=proposals,
            findings=findings,
            ruleset=ruleset,
            formats=formats,
            sheet=sheet,
            siting=sited,
            basemap=basemap,
            overwrite=overwrite,
            proposal_ids=ids,
        )
    if webmap:
        written.append(
            write_webmap(
                Path(out_dir) / WEBMAP_NAME,
                layers=layers,
                proposals=proposals,
                findings=findings,
                ruleset=ruleset,
                siting=sited,
                overwrite=overwrite,
                proposal_ids=ids,
            )
        )
    log.info("maps: %d file(s) in %s", len(written), out_dir)
    return written
