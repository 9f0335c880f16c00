"""``gis-sw map``: engineering-scale map sheets and the offline web map of proposals.

Runs the rules (:func:`gis_sw.analysis.engine.run_rules`) and draws what they found: one sheet
per proposal at the largest of 1" = 10' ... 50' that fits (a map book with a key map when even
1" = 50' does not), and ``webmap.html``.  Exit 0 when the maps were written, 2 for bad input.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click

from gis_sw.analysis.engine import run_rules
from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import check_writable
from gis_sw.outputs.maps.scale import SHEETS
from gis_sw.ruleset import load_ruleset

log = logging.getLogger("gis_sw.cli.map")


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
    type=click.Choice(["pdf", "png", "both"]),
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
@click.option(
    "--crs",
    default=None,
    help="CRS of the proposals file's coordinates: for a file with none (DXF), and it "
    "overrides a wrong one (a state-plane GeoJSON without a crs member).",
)
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
    from gis_sw.outputs.maps.bundle import MAP_CHOICES, map_paths, write_maps
    from gis_sw.outputs.names import INDEX_NAME, file_stems, files_by_id, write_index

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
    from gis_sw.api import Town
    from gis_sw.screening import Screening

    screening = Screening(Town(layers, ruleset), proposals, findings)
    formats = MAP_CHOICES[fmt]
    targets = map_paths(
        out_dir,
        screening,
        formats=formats,
        sheet=sheet,
        webmap=webmap,
        proposal_ids=ids,
    )
    stems = file_stems(proposals.ids)
    index = out_dir / INDEX_NAME if files_by_id(stems, targets) else None
    for path in [*targets, *([index] if index else [])]:
        check_writable(path, overwrite=overwrite)
    written = write_maps(
        out_dir,
        screening,
        formats=formats,
        sheet=sheet,
        webmap=webmap,
        siting=siting,
        basemap=basemap,
        overwrite=overwrite,
        proposal_ids=ids,
    )
    if index is not None:  # the id-to-file map (names from ids are unique by construction)
        written.append(write_index(index, stems, written, overwrite=overwrite))
    for path in written:
        click.echo(str(path))
    click.echo(f"Wrote {len(written)} files to {out_dir}.", err=True)
