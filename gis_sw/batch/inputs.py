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
from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.build import make_layerset
from gis_sw.layers.layerset import LayerReport, LayerSet
from gis_sw.layers.manifest import resolve_source
from gis_sw.layers.read import read_layers, read_vector_entry
from gis_sw.ruleset import Ruleset

BATCH_KINDS: tuple[str, ...] = ("parcels", *CONTEXT_KINDS)


def read_town(source: str | Path, *, ruleset: Ruleset, everything: bool) -> LayerSet:
    """The town layers for a batch run: all of them, or only :data:`BATCH_KINDS`.

    Raises
    ------
    InputFileError
        If the source cannot be found or read.
    LayerError
        Naming every problem of every layer read (as ``read_layers`` does).
    """
    if everything:
        return read_layers(source, ruleset=ruleset)
    manifest = resolve_source(source)
    problems: list[Problem] = []
    vectors = {}
    reports: dict[str, LayerReport] = {}
    for kind in BATCH_KINDS:
        entry = manifest.entries.get(kind)
        if entry is None:
            if kind in ("parcels", "zoning"):
                problems.append(
                    Problem(
                        kind,
                        f"required layer is not provided by {manifest.source}.",
                        f"add a [{kind}] table to the layers manifest, or a layer named "
                        f"{kind!r} to the GeoPackage.",
                    )
                )
            continue
        try:
            vectors[kind], reports[kind] = read_vector_entry(entry, working_crs=ruleset.working_crs)
        except LayerError as exc:
            problems.extend(exc.problems)
        except GisSwError as exc:
            problems.append(Problem(kind, str(exc)))
    if problems:
        raise LayerError(problems)
    return make_layerset(ruleset.working_crs, vectors, reports=reports, source=str(manifest.source))
