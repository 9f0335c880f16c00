"""``gis-sw map``: engineering-scale map sheets and the offline web map of proposals.

Runs the rules (:func:`gis_sw.analysis.engine.run_rules`) and draws what they found: one sheet
per proposal at the largest of 1" = 10' ... 50' that fits (a map book with a key map when even
1" = 50' does not), and ``webmap.html``.  Exit 0 when the maps were written, 2 for bad input.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click
import geopandas as gpd
import pandas as pd

from gis_sw.analysis.engine import run_rules
from gis_sw.errors import OutputError
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.atomic import check_writable
from gis_sw.outputs.maps.scale import SHEETS
from gis_sw.ruleset import Ruleset, load_ruleset

log = logging.getLogger("gis_sw.cli.map")

FORMATS = {"pdf": ("pdf",), "png": ("png",), "both": ("pdf", "png")}


def siting_for(
    layers: LayerSet, proposals: Proposals, ruleset: Ruleset, ids: list[str]
) -> gpd.GeoDataFrame | None:
    """Siting polygons of the parcels under each proposal's devices (roof class, and the
    vehicle class for devices serving vehicle traffic); None when nothing can be sited."""
    from gis_sw.analysis.siting import siting_polygons

    parcels = layers.get("parcels")
    devices = proposals.devices[proposals.devices["proposal_id"].isin(ids)]
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


@click.command("map")
@click.argument("proposal", type=click.Path(path_type=Path))
@click.option(
    "--layers",
    "source",
    required=True,
    type=click.Path(path_type=Path),
    help="Layers manifest (layers.toml), GeoPackage of town layers, or a folder with layers.toml.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the sheets and webmap.html.",
)
@click.option(
    "--sheet",
    type=click.Choice(list(SHEETS)),
    default="ansi_b",
    show_default=True,
    help="Paper: ANSI B 11x17 in, ANSI D 22x34 in, ARCH D 24x36 in (landscape).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(FORMATS)),
    default="both",
    show_default=True,
    help="Sheet format.",
)
@click.option(
    "--basemap",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A local GeoTIFF (orthophoto) drawn under the sheets.",
)
@click.option("--id", "proposal_ids", multiple=True, help="Only this proposal id (repeatable).")
@click.option("--ruleset", "ruleset_name", default=None, help="Ruleset name or TOML path.")
@click.option("--crs", default=None, help="CRS of a proposals file that carries none (DXF).")
@click.option(
    "--siting/--no-siting",
    default=True,
    show_default=True,
    help="Draw where a device may go on the parcels under the proposal's devices.",
)
@click.option("--webmap/--no-webmap", default=True, show_default=True, help="Write webmap.html.")
@click.option("--overwrite", is_flag=True, help="Replace existing files in --out.")
def command(
    *,
    proposal: Path,
    source: Path,
    out_dir: Path,
    sheet: str,
    fmt: str,
    basemap: Path | None,
    proposal_ids: tuple[str, ...],
    ruleset_name: str | None,
    crs: str | None,
    siting: bool,
    webmap: bool,
    overwrite: bool,
) -> None:
    """Draw map sheets and an offline web map of PROPOSAL (a proposals GeoPackage).

    Each proposal gets <id>.pdf and <id>.png at a true engineering scale (§ 183-12C(3)(a)),
    with north arrow, scale bar, legend, title block and location map; the findings of the
    rules are highlighted and labelled.  A screening, not a permit decision.
    """
    from gis_sw.layers.read import read_layers, read_proposals
    from gis_sw.outputs.maps import write_sheets
    from gis_sw.outputs.webmap import write_webmap

    ruleset = load_ruleset(ruleset_name)
    if webmap:
        check_writable(out_dir / "webmap.html", overwrite=overwrite)
    layers = read_layers(source, ruleset=ruleset)
    proposals = read_proposals(proposal, ruleset=ruleset, crs=crs)
    ids = list(proposal_ids) or proposals.ids
    unknown = [i for i in ids if i not in proposals.ids]
    if unknown:
        raise OutputError(
            f"{proposal}: no proposal {unknown[0]!r}. Fix: use one of {', '.join(proposals.ids)}."
        )
    log.info("screening %d proposal(s)", len(ids))
    findings = run_rules(layers, proposals.subset(ids), ruleset)
    sited = siting_for(layers, proposals, ruleset, ids) if siting else None
    written = write_sheets(
        out_dir,
        layers=layers,
        proposals=proposals,
        findings=findings,
        ruleset=ruleset,
        formats=FORMATS[fmt],
        sheet=sheet,
        siting=sited,
        basemap=basemap,
        overwrite=overwrite,
        proposal_ids=ids,
    )
    if webmap:
        written.append(
            write_webmap(
                out_dir / "webmap.html",
                layers=layers,
                proposals=proposals,
                findings=findings,
                ruleset=ruleset,
                siting=sited,
                overwrite=overwrite,
                proposal_ids=ids,
            )
        )
    for path in written:
        click.echo(str(path))
    click.echo(f"Wrote {len(written)} files to {out_dir}.", err=True)
