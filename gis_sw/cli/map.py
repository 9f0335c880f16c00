"""``gis-sw map``: engineering-scale map sheets and the offline web map of proposals.

A thin caller of the public API: the ruleset, the proposals (:func:`gis_sw.read_proposals`),
the town (:func:`gis_sw.read_town`), :meth:`gis_sw.Town.screen`, then
:func:`gis_sw.outputs.maps.bundle.write_maps` draws what the rules found: one sheet per
proposal at the largest of 1" = 10' ... 50' that fits (a map book with a key map when even
1" = 50' does not), and ``webmap.html``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from gis_sw.cli import options
from gis_sw.cli.profile import profiled

log = logging.getLogger("gis_sw.cli.map")

SHEET_SIZES = ("ansi_b", "ansi_d", "arch_d")
"""``--sheet`` values: the keys of :data:`gis_sw.outputs.maps.scale.SHEETS` (a test says so)."""


@click.command("map")
@options.proposal_arg
@options.layers_opt
@options.out_opt()
@click.option(
    "--sheet",
    type=click.Choice(SHEET_SIZES),
    default="ansi_b",
    show_default=True,
    help="Paper: ANSI B 11x17 in, ANSI D 22x34 in, ARCH D 24x36 in (landscape).",
)
@options.formats_opt("--format", "fmt", "Sheet format.", none=False)
@click.option(
    "--basemap",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A local GeoTIFF (orthophoto) drawn under the sheets.",
)
@click.option("--id", "proposal_ids", multiple=True, help="Only this proposal id (repeatable).")
@options.ruleset_opt
@options.crs_opt
@options.strict_opt
@click.option(
    "--siting/--no-siting",
    default=True,
    show_default=True,
    help="Draw where a device may go on the parcels under the proposal's devices.",
)
@click.option("--webmap/--no-webmap", default=True, show_default=True, help="Write webmap.html.")
@options.overwrite_opt
@options.profile_opt
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
    strict: bool,
    siting: bool,
    webmap: bool,
    overwrite: bool,
    profile: bool,
) -> None:
    """Draw map sheets and an offline web map of PROPOSAL (a proposals GeoPackage).

    Each proposal gets <id>.pdf and <id>.png at a true engineering scale (§ 183-12C(3)(a)),
    with north arrow, scale bar, legend, title block and location map, and webmap.html
    shows them all; the findings of the rules are highlighted and labelled.  A screening,
    not a permit decision.
    """
    with profiled(profile) as prof:
        import gis_sw
        from gis_sw.cli.guard import refuse_outputs_over_inputs
        from gis_sw.errors import OutputError
        from gis_sw.outputs.atomic import check_writable
        from gis_sw.outputs.maps.bundle import map_paths, write_maps
        from gis_sw.outputs.names import INDEX_NAME, file_stems, files_by_id, write_index
        from gis_sw.ruleset import load_ruleset
        from gis_sw.screening import Screening

        prof.imported("gis_sw.api")
        ruleset = load_ruleset(ruleset_name)
        if webmap:
            check_writable(out_dir / "webmap.html", overwrite=overwrite)
        proposals = gis_sw.read_proposals(proposal, ruleset=ruleset, crs=crs, strict=strict)
        ids = list(proposal_ids) or proposals.ids
        unknown = [i for i in ids if i not in proposals.ids]
        if unknown:
            raise OutputError(
                f"{proposal}: no proposal {unknown[0]!r}. Fix: use one of "
                f"{', '.join(proposals.ids)}."
            )
        town = gis_sw.read_town(source, ruleset=ruleset, strict=strict)
        prof.mark("read")
        log.info("screening %d proposal(s)", len(ids))
        findings = town.screen(proposals.subset(ids)).findings
        prof.mark("screen")
        # the sheets name files after every proposal of the file, the findings are the subset's
        screening = Screening(town, proposals, findings)
        drawn: dict[str, Any] = {
            "formats": options.FORMATS[fmt],
            "sheet": sheet,
            "webmap": webmap,
            "proposal_ids": ids,
        }
        targets = map_paths(out_dir, screening, **drawn)
        stems = file_stems(proposals.ids)
        index = out_dir / INDEX_NAME if files_by_id(stems, targets) else None
        planned = [*targets, *([index] if index else [])]
        refuse_outputs_over_inputs(planned, source=source, proposals=proposal, ruleset=ruleset)
        for path in planned:
            check_writable(path, overwrite=overwrite)
        written = write_maps(
            out_dir,
            screening,
            siting=siting,
            basemap=basemap,
            overwrite=overwrite,
            **drawn,
        )
        if index is not None:  # the id-to-file map (names from ids are unique by construction)
            written.append(write_index(index, stems, written, overwrite=overwrite))
        prof.mark("draw")
        for path in written:
            click.echo(str(path))
        click.echo(f"Wrote {len(written)} files to {out_dir}.", err=True)
