"""Read only the town layers a parcel screening uses.

``gis-sw batch`` without ``--proposals`` needs eight vector layers
(:data:`gis_sw.batch.chunks.CONTEXT_KINDS` and the parcels); a town's manifest often lists
more (soils, land cover, pavement, rasters) that only the proposal rules read.  Skipping
them saves time and memory at county scale.  Each layer goes through the same reader and
validation as :func:`gis_sw.layers.read.read_layers`, and problems are collected and raised
once, the same way.
"""

from __future__ import annotations

from pathlib import Path

from gis_sw.batch.chunks import CONTEXT_KINDS
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.read import read_layers
from gis_sw.ruleset import Ruleset

BATCH_KINDS: tuple[str, ...] = ("parcels", *CONTEXT_KINDS)


READ_THREADS = 2
"""Vector layers a batch reads at once (:func:`gis_sw.layers.read.read_layers`)."""


def read_town(
    source: str | Path, *, ruleset: Ruleset, everything: bool, threads: int = READ_THREADS
) -> LayerSet:
    """Return the town layers for a batch run: all of them, or only :data:`BATCH_KINDS`.

    Raises
    ------
    InputFileError
        If the source cannot be found or read.
    LayerError
        Naming every problem of every layer read (as ``read_layers`` does).
    """
    # one reader for both (realdata): declared absences, filters, skipped features and
    # coverage are read the same way as read_layers
    return read_layers(
        source, ruleset=ruleset, kinds=None if everything else BATCH_KINDS, threads=threads
    )
