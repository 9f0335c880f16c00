"""A synthetic sample town of any size, and the named proposals that exercise every rule.

>>> from gis_sw.sample import build_town, sample_proposals
>>> town = build_town(parcels=323, seed=183)          # doctest: +SKIP
>>> cases = sample_proposals(town)                     # doctest: +SKIP

:func:`generate_town` writes both to a folder (``gis-sw sample`` calls it); the committed
``data/sample/`` was made with ``gis-sw sample --out data/sample --parcels 323 --seed 183``.
"""

from __future__ import annotations

from pathlib import Path

from gis_sw.sample.cases import SampleProposals, build_cases
from gis_sw.sample.stream import stream_town
from gis_sw.sample.town import CASE_LOTS, SampleTown, build_town
from gis_sw.sample.write import TownSummary, write_proposals, write_town

SAMPLE_PARCELS = 323
"""Parcels of the committed sample: exactly one cycle of bands on three block columns."""
SAMPLE_SEED = 183
"""Seed of the committed sample (the chapter's number)."""

__all__ = [
    "CASE_LOTS",
    "SAMPLE_PARCELS",
    "SAMPLE_SEED",
    "SampleProposals",
    "SampleTown",
    "TownSummary",
    "build_town",
    "generate_town",
    "sample_proposals",
]


def sample_proposals(town: SampleTown) -> SampleProposals:
    """Build the named cases on ``town`` (which needs at least the first cycle of bands).

    Raises
    ------
    KeyError
        If the town is too small to hold every case lot.
    """
    return build_cases(town)


def generate_town(
    out_dir: str | Path,
    *,
    parcels: int = SAMPLE_PARCELS,
    seed: int = SAMPLE_SEED,
    fmt: str = "gpkg",
    overwrite: bool = False,
    cell_size_ft: float | None = None,
    proposals: bool | None = None,
    command: str = "",
) -> TownSummary:
    """Generate a town and write it (and, when it holds them, the named cases) to ``out_dir``.

    GeoParquet is written block by block (:func:`gis_sw.sample.stream.stream_town`: memory
    grows with the block, not the town); a GeoPackage is written from the town built whole.

    Parameters
    ----------
    out_dir
        Folder for ``town.gpkg`` (or one GeoParquet per layer), the GeoTIFFs and
        ``layers.toml``; ``proposals.gpkg`` and ``expected.csv`` too when written.
    parcels, seed
        Size and seed; the same pair always gives the same town.
    fmt
        ``gpkg`` or ``parquet``.
    overwrite
        Replace existing files.
    cell_size_ft
        Raster cell size (default 10 ft, coarser for very large towns).
    proposals
        Write the named cases; by default when the town is large enough to hold them.
    command
        The command line, recorded in ``layers.toml``.

    Raises
    ------
    ValueError
        For fewer than 1 parcel or an unknown format.
    KeyError
        If ``proposals`` is True but the town is too small for the cases.
    OutputError
        If a file exists without ``overwrite``, or cannot be written.
    """
    if fmt == "parquet":
        return stream_town(
            out_dir,
            parcels=parcels,
            seed=seed,
            overwrite=overwrite,
            cell_size_ft=cell_size_ft,
            proposals=proposals,
            command=command,
        )
    town = build_town(parcels=parcels, seed=seed, cell_size_ft=cell_size_ft)
    ids = set(town.layout.lots["parcel_id"])
    fits = all(pid in ids for pid in CASE_LOTS.values())
    files = write_town(town, out_dir, fmt=fmt, overwrite=overwrite, command=command)
    if proposals or (proposals is None and fits):
        files += write_proposals(build_cases(town), out_dir, overwrite=overwrite)
    dem = town.rasters["dem"]
    return TownSummary(
        parcels=len(town.layout.lots),
        seed=seed,
        width_ft=town.layout.width_ft,
        height_ft=town.layout.height_ft,
        raster_shape=dem.shape,
        cell_size_ft=float(dem.cell_size[0]),
        features={kind: len(frame) for kind, frame in town.vectors.items()},
        files=tuple(files),
    )
