"""The one guard of every command that writes: no output replaces one of the run's inputs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from gis_sw.ruleset import Ruleset


def refuse_outputs_over_inputs(
    targets: Iterable[Path],
    *,
    source: Path,
    proposals: Path | None,
    ruleset: Ruleset,
    extra: Mapping[str, Path | None] | None = None,
) -> None:
    """Refuse any of ``targets`` that is an input of the run, before anything is read.

    The inputs are the layers source's files (manifest, layers, rasters), the proposals
    file, the ruleset file and ``extra`` (description to path, e.g. the waivers file),
    compared by resolved path and by file identity (docs/outputs.md).

    Raises
    ------
    OutputError
        Naming the output and the input it would replace (whatever ``--overwrite`` says).
    """
    from gis_sw.batch.fingerprint import input_files
    from gis_sw.errors import GisSwError
    from gis_sw.layers.manifest import resolve_source
    from gis_sw.outputs.atomic import input_identities, refuse_inputs

    try:
        manifest = resolve_source(source)
    except GisSwError:  # reading the layers reports it, after the proposals
        manifest = None
    files = input_files(manifest, ruleset=ruleset, proposals=proposals)
    files.update({what: path for what, path in (extra or {}).items() if path is not None})
    refuse_inputs(targets, input_identities(files))
