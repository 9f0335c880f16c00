"""``gis-sw siting``: where on a parcel an infiltration device may legally go.

Writes ``siting.geojson`` (RFC 7946, WGS84, MultiPolygon; a parcel with no legal place has a
null geometry) and ``siting.gpkg`` (layer ``siting``, working CRS) into ``--out``, and the
siting sheet (:mod:`gis_sw.outputs.maps.siting_sheet`): ``siting.pdf`` with one page per
parcel and ``siting_<parcel>.png``, showing the allowed area, its square footage and each
setback with its reason (``--sheets none`` to skip; not drawn for more than
:data:`MAX_SHEET_PARCELS` parcels).  Every file appears together, or none.  Prints one line
per parcel.  Exit 0 when the polygons were written (whatever they show), 2 on bad input.
"""

from __future__ import annotations

from pathlib import Path

import click

from gis_sw.analysis.siting import DeviceClass, siting_polygons
from gis_sw.layers.read import read_layers
from gis_sw.outputs.atomic import check_writable, output_group
from gis_sw.outputs.maps.siting_sheet import siting_sheet_paths, write_siting_sheets
from gis_sw.outputs.siting_files import write_siting
from gis_sw.redact import shown
from gis_sw.ruleset import load_ruleset

MAX_SHEET_PARCELS = 25
"""More parcels than this get no siting sheet (choose them with ``--parcel``)."""

SHEET_CHOICES = {"pdf": ("pdf",), "png": ("png",), "both": ("pdf", "png"), "none": ()}


@click.command("siting")
@click.option(
    "--layers",
    "source",
    required=True,
    type=click.Path(path_type=Path),
    help="Layers manifest (layers.toml), GeoPackage of town layers, or a folder with one.",
)
@click.option(
    "--parcel",
    "parcel_ids",
    multiple=True,
    help="Parcel id to site (repeat for more; default: every parcel).",
)
@click.option(
    "--device-class",
    type=click.Choice([c.value for c in DeviceClass]),
    default=DeviceClass.ROOF.value,
    show_default=True,
    help="vehicle: the device takes runoff from roadways, parking lots or driveways.",
)
@click.option(
    "--depth-ft",
    type=click.FloatRange(min=0),
    default=None,
    help="Depth of the device bottom below ground, ft (screens groundwater and bedrock).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Folder for siting.geojson and siting.gpkg.",
)
@click.option("--overwrite", is_flag=True, help="Replace existing output files.")
@click.option("--ruleset", "ruleset_name", default=None, help="Ruleset name or TOML path.")
@click.option(
    "--sheets",
    "sheet_choice",
    type=click.Choice(list(SHEET_CHOICES)),
    default="both",
    show_default=True,
    help=f"Siting sheet: siting.pdf and siting_<parcel>.png (at most {MAX_SHEET_PARCELS} parcels).",
)
def command(  # noqa: PLR0917 (click passes options as arguments)
    source: Path,
    parcel_ids: tuple[str, ...],
    device_class: str,
    depth_ft: float | None,
    out_dir: Path,
    overwrite: bool,
    ruleset_name: str | None,
    sheet_choice: str,
) -> None:
    """Where on each parcel an infiltration device may legally go (§ 183-12C(2)(c)).

    The polygon is the parcel less its 10-ft setback, 20 ft around buildings with a
    habitable basement, 50 ft around wells, wetlands and water bodies (vehicle class), the
    up-gradient part within 20 ft of septic fields, and the cells where a device of
    --depth-ft would not keep 2 ft above seasonal high groundwater or bedrock.
    """
    ruleset = load_ruleset(ruleset_name)
    for name in ("siting.geojson", "siting.gpkg"):
        check_writable(out_dir / name, overwrite=overwrite)
    layers = read_layers(source, ruleset=ruleset)
    polygons = siting_polygons(
        layers,
        ruleset,
        parcel_ids=list(parcel_ids) or None,
        device_class=device_class,
        depth_ft=depth_ft,
    )
    formats = SHEET_CHOICES[sheet_choice]
    if formats and len(polygons) > MAX_SHEET_PARCELS:
        click.echo(
            f"gis-sw: note: no siting sheet for {len(polygons)} parcels (at most "
            f"{MAX_SHEET_PARCELS}); choose them with --parcel.",
            err=True,
        )
        formats = ()
    ids = [str(p) for p in polygons["parcel_id"]]
    for path in siting_sheet_paths(out_dir, ids, formats):
        check_writable(path, overwrite=overwrite)
    setbacks = {}
    if formats:
        from gis_sw.api import Town, setback_lines

        town = Town(layers, ruleset)
        setbacks = {pid: setback_lines(town, pid, device_class) for pid in ids}
    with output_group():  # the polygons and their sheets appear together, or none
        written = write_siting(out_dir, polygons, overwrite=overwrite, group=False)
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
    for row in polygons.itertuples(index=False):
        click.echo(
            shown(
                f"{row.parcel_id}: {row.outcome}, {row.area_sqft:,.0f} sq ft for a "
                f"{row.device_class} device; {row.reason}"
            )
        )
    for path in written:
        click.echo(f"wrote {path}", err=True)
