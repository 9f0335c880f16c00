"""``gis-sw sample``: generate a synthetic sample town of any size.

The same seed and size always give the same town, so ``data/sample/`` can be regenerated::

    gis-sw sample --out data/sample --parcels 323 --seed 183 --overwrite
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import click

from gis_sw.cli import options
from gis_sw.sample import SAMPLE_PARCELS, SAMPLE_SEED, generate_town

logger = logging.getLogger(__name__)


@click.command(name="sample")
@options.out_opt()
@click.option(
    "--parcels",
    type=click.IntRange(min=1),
    default=SAMPLE_PARCELS,
    show_default=True,
    help="Number of parcels (323 holds every named case; 1,000,000 for benchmarks).",
)
@click.option("--seed", type=int, default=SAMPLE_SEED, show_default=True, help="Random seed.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["gpkg", "parquet"]),
    default="gpkg",
    show_default=True,
    help="town.gpkg, or one GeoParquet file per layer (faster for big towns).",
)
@click.option(
    "--cell-size-ft",
    type=click.FloatRange(min=1.0),
    default=None,
    help="Raster cell size (default 10 ft, coarser for towns wider than 40,000 ft).",
)
@options.overwrite_opt
def command(  # noqa: PLR0917  (click passes every option)
    out_dir: Path,
    parcels: int,
    seed: int,
    fmt: str,
    cell_size_ft: float | None,
    overwrite: bool,
) -> None:
    """Generate a synthetic sample town of any size into --out.

    It holds parcels, zoning, water, wells, septic fields, buildings, soils, DEM,
    groundwater and bedrock rasters, a layers.toml manifest, and (for towns of 323 parcels
    or more) the named sample proposals with expected.csv.
    """
    started = time.perf_counter()
    line = f"gis-sw sample --out DIR --parcels {parcels} --seed {seed}"
    if fmt != "gpkg":
        line += f" --format {fmt}"
    town = generate_town(
        out_dir,
        parcels=parcels,
        seed=seed,
        fmt=fmt,
        overwrite=overwrite,
        cell_size_ft=cell_size_ft,
        command=line,
    )
    elapsed = time.perf_counter() - started
    rows, cols = town.raster_shape
    click.echo(
        f"sample town: {town.features['parcels']} parcels, seed {seed}, "
        f"{town.width_ft:,.0f} x {town.height_ft:,.0f} ft, "
        f"rasters {cols} x {rows} cells of {town.cell_size_ft:g} ft, "
        f"written to {out_dir} in {elapsed:.1f} s",
        err=True,
    )
