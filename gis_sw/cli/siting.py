"""``gis-sw siting``: where on a parcel an infiltration device may legally go.

Writes ``siting.geojson`` (RFC 7946, WGS84, MultiPolygon; a parcel with no legal place has a
null geometry) and ``siting.gpkg`` (layer ``siting``, working CRS) into ``--out``, and the
siting sheet (:mod:`gis_sw.outputs.maps.siting_sheet`): ``siting.pdf`` with one page per
parcel and ``siting_<parcel>.png``, showing the allowed area, its square footage and each
setback with its reason (``--sheets none`` to skip; not drawn for more than
:data:`MAX_SHEET_PARCELS` parcels).  Every file appears together, or none.  Prints one line
per parcel.  The town is read with :func:`gis_sw.read_town`.
"""

from __future__ import annotations

from pathlib import Path

import click

from gis_sw.cli import options
from gis_sw.cli.profile import profiled
from gis_sw.outputs.atomic import check_writable, output_group

MAX_SHEET_PARCELS = 25
"""More parcels than this get no siting sheet (choose them with ``--parcel``)."""

DEVICE_CLASSES = ("roof", "vehicle")
"""``--device-class`` values: those of :class:`gis_sw.analysis.siting.DeviceClass`."""


@click.command("siting")
@options.layers_opt
@click.option(
    "--parcel",
    "parcel_ids",
    multiple=True,
    help="Parcel id to site (repeat for more; default: every parcel).",
)
@click.option(
    "--device-class",
    type=click.Choice(DEVICE_CLASSES),
    default="roof",
    show_default=True,
    help="vehicle: the device takes runoff from roadways, parking lots or driveways.",
)
@click.option(
    "--depth-ft",
    type=click.FloatRange(min=0),
    default=None,
    help="Depth of the device bottom below ground, ft (screens groundwater and bedrock).",
)
@options.out_opt()
@options.overwrite_opt
@options.ruleset_opt
@options.strict_opt
@options.formats_opt(
    "--sheets",
    "sheet_choice",
    f"Siting sheet: siting.pdf and siting_<parcel>.png (at most {MAX_SHEET_PARCELS} parcels).",
)
@options.profile_opt
def command(
    *,
    source: Path,
    parcel_ids: tuple[str, ...],
    device_class: str,
    depth_ft: float | None,
    out_dir: Path,
    overwrite: bool,
    ruleset_name: str | None,
    strict: bool,
    sheet_choice: str,
    profile: bool,
) -> None:
    """Where on each parcel an infiltration device may legally go (§ 183-12C(2)(c)).

    The polygon is the parcel less its 10-ft setback, 20 ft around buildings with a
    habitable basement, 50 ft around wells, wetlands and water bodies (vehicle class), the
    up-gradient part within 20 ft of septic fields, and the cells where a device of
    --depth-ft would not keep 2 ft above seasonal high groundwater or bedrock.  Writes
    siting.geojson, siting.gpkg and the siting sheet (siting.pdf, siting_<parcel>.png).
    """
    with profiled(profile) as prof:
        import gis_sw
        from gis_sw.api import setback_lines
        from gis_sw.outputs.maps.siting_sheet import siting_sheet_paths, write_siting_sheets
        from gis_sw.outputs.siting_files import write_siting
        from gis_sw.redact import shown
        from gis_sw.ruleset import load_ruleset

        prof.mark("import")
        ruleset = load_ruleset(ruleset_name)
        for name in ("siting.geojson", "siting.gpkg"):
            check_writable(out_dir / name, overwrite=overwrite)
        town = gis_sw.read_town(source, ruleset=ruleset, strict=strict)
        prof.mark("read")
        polygons = town.siting_polygons(
            list(parcel_ids) or None, device_class=device_class, depth_ft=depth_ft
        )
        formats = _sheet_formats(sheet_choice, len(polygons))
        ids = [str(p) for p in polygons["parcel_id"]]
        for path in siting_sheet_paths(out_dir, ids, formats):
            check_writable(path, overwrite=overwrite)
        setbacks = {pid: setback_lines(town, pid, device_class) for pid in ids} if formats else {}
        prof.mark("screen")
        with output_group():  # the polygons and their sheets appear together, or none
            written = write_siting(out_dir, polygons, overwrite=overwrite, group=False)
            prof.mark("write")
            if formats:
                written += write_siting_sheets(
                    out_dir,
                    polygons,
                    setbacks,
                    town=town,
                    formats=formats,
                    overwrite=overwrite,
                    group=False,
                )
                prof.mark("draw")
        for row in polygons.itertuples(index=False):
            click.echo(
                shown(
                    f"{row.parcel_id}: {row.outcome}, {row.area_sqft:,.0f} sq ft for a "
                    f"{row.device_class} device; {row.reason}"
                )
            )
        for path in written:
            click.echo(f"wrote {path}", err=True)


def _sheet_formats(choice: str, parcels: int) -> tuple[str, ...]:
    """Return the sheet formats to draw: none past :data:`MAX_SHEET_PARCELS`, with a note."""
    formats = options.FORMATS[choice]
    if formats and parcels > MAX_SHEET_PARCELS:
        click.echo(
            f"gis-sw: note: no siting sheet for {parcels} parcels (at most "
            f"{MAX_SHEET_PARCELS}); choose them with --parcel.",
            err=True,
        )
        return ()
    return formats
