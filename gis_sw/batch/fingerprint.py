"""What a batch run was made from, so ``--resume`` can tell it is still the same run.

The resume manifest (``parts/manifest.json``, :mod:`gis_sw.batch.resume`) holds
:func:`run_fingerprint`:

* ``gis_sw``: the version that wrote the parts;
* ``ruleset``: its name, version, source and the SHA-256 of its TOML text (an edited
  threshold is a different run);
* ``options``: chunk size, ``--quick`` and the halo width;
* ``layers``: per layer kind read, a hash of the layer *as read* (every attribute column,
  its dtype and every geometry's WKB): re-keyed parcel ids or an edited wetland change it,
  whether the layer came from a file or from PostGIS;
* ``files``: per input file (the layers manifest, each layer's file, rasters, the ruleset
  file, the proposals file), its size and modification time (nanoseconds), and the SHA-256
  of the small text inputs (manifest, ruleset);
* ``proposals``: the proposals file's SHA-256, when one was given;
* ``parcels`` and ``chunks``: the parcel count and the chunk plan's fingerprints.

:func:`describe_change` compares two of them and names the first thing that changed, in
the words the CLI prints.  A file whose modification time alone changed (it was touched or
copied) while every layer read from it hashes the same is not a change, and neither is a
moved folder: paths are recorded for the reader, contents are compared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

import gis_sw
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.manifest import Manifest
from gis_sw.layers.specs import RASTER_LAYERS
from gis_sw.ruleset import Ruleset

SHAPEFILE_SIDECARS = (".dbf", ".shx", ".prj", ".cpg")
HASH_BYTES_LIMIT = 64 << 20
"""Input files up to this size get a SHA-256 of their bytes; bigger ones size and mtime
(their layers are hashed as read)."""


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def layer_hash(frame: gpd.GeoDataFrame) -> str:
    """Return a hash of a layer as read: column names, dtypes, every value and every geometry."""
    digest = hashlib.sha256()
    geometry = frame.geometry.name
    attributes = pd.DataFrame(frame.drop(columns=geometry))
    digest.update(repr([(str(c), str(t)) for c, t in attributes.dtypes.items()]).encode())
    if len(attributes.columns):
        # each column hashed in its own dtype (the dtypes are in the digest above); not
        # categorized first: the same hash of every value, 2.5 to 4x faster for columns of
        # distinct ids (measured at 100,000 parcels), but a null in a text column then
        # hashes like the text "None" or "nan", so where a text column has a null, the
        # places of those nulls go in too (a layer without one hashes exactly as it did)
        values = pd.util.hash_pandas_object(attributes, index=False, categorize=False)
        digest.update(np.ascontiguousarray(values.to_numpy()).tobytes())
        texts = [c for c, t in attributes.dtypes.items() if _text_dtype(t)]
        nulls = attributes[texts].isna().to_numpy()
        if nulls.any():
            digest.update(b"text nulls" + np.packbits(nulls).tobytes())
    geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)
    missing = shapely.is_missing(geoms)
    digest.update(np.packbits(missing).tobytes())
    # WKB delimits itself, so the concatenation of the features' WKB is unambiguous
    filled = geoms.copy()
    filled[missing] = shapely.Point()
    wkb = np.asarray(shapely.to_wkb(filled), dtype=object)
    digest.update(b"".join(wkb.tolist()))
    return digest.hexdigest()


def _text_dtype(dtype: object) -> bool:
    """Return True for a column dtype whose nulls hash like texts when not categorized.

    Object and string columns (pandas' and pyarrow's); a null of a numeric, boolean,
    datetime or categorical column hashes the same either way.
    """
    if isinstance(dtype, np.dtype):
        return dtype.kind == "O"
    return isinstance(dtype, (pd.StringDtype, pd.ArrowDtype))


def layer_hashes_of(layers: LayerSet) -> dict[str, str]:
    """Return :func:`layer_hash` of every vector layer of ``layers`` (kind to hash).

    It needs no chunk plan, so a run starts it first, beside planning and building the
    chunk source (:func:`gis_sw.batch.run_store.run_chunks_to_store`); none of them changes a
    layer.
    """
    return {kind: layer_hash(frame) for kind, frame in layers.vectors.items()}


def ruleset_text_hash(ruleset: Ruleset) -> str:
    """SHA-256 of the ruleset's TOML (a packaged one or the file given to ``--ruleset``)."""
    source = ruleset.source
    if source.endswith(" (packaged)"):
        name = source.removesuffix(" (packaged)")
        data = resources.files("gis_sw.rulesets").joinpath(f"{name}.toml").read_bytes()
        return hashlib.sha256(data).hexdigest()
    path = Path(source)
    if path.is_file():
        return sha256_file(path)
    return hashlib.sha256(repr(ruleset).encode()).hexdigest()  # built in memory


def input_files(
    manifest: Manifest | None,
    *,
    ruleset: Ruleset,
    proposals: Path | None,
    kinds: tuple[str, ...] | None = None,
) -> dict[str, Path]:
    """Every input file of a run, described for messages (``"the parcels layer (town.gpkg)"``).

    Several kinds read from one file are described together.
    """
    by_path: dict[Path, list[str]] = {}
    if manifest is not None:
        if manifest.source.suffix.lower() == ".toml":
            by_path.setdefault(manifest.source, []).append("the layers manifest")
        for kind, entry in manifest.entries.items():
            if entry.path is None or (kinds is not None and kind not in kinds):
                continue
            by_path.setdefault(entry.path, []).append(kind)
            if entry.path.suffix.lower() == ".shp":
                for suffix in SHAPEFILE_SIDECARS:
                    sidecar = entry.path.with_suffix(suffix)
                    if sidecar.exists():
                        by_path.setdefault(sidecar, []).append(kind)
    ruleset_path = Path(ruleset.source)
    if not ruleset.source.endswith(" (packaged)") and ruleset_path.is_file():
        by_path.setdefault(ruleset_path, []).append("the ruleset file")
    if proposals is not None:
        by_path.setdefault(Path(proposals), []).append("the proposals file")
    described: dict[str, Path] = {}
    for path, whats in by_path.items():
        vectors = [w for w in whats if not w.startswith("the ") and w not in RASTER_LAYERS]
        rasters = [w for w in whats if w in RASTER_LAYERS]
        parts = [w for w in whats if w.startswith("the ")]
        for names, noun in ((vectors, "layer"), (rasters, "raster")):
            if names:
                parts.append(f"the {', '.join(names)} {noun}{'s' if len(names) > 1 else ''}")
        described[f"{' and '.join(parts)} ({path.name})"] = path
    return described


def _file_record(path: Path) -> dict[str, Any]:
    try:
        info = path.stat()
    except OSError:
        return {"path": str(path), "missing": True}
    record: dict[str, Any] = {"path": str(path), "size": info.st_size, "mtime_ns": info.st_mtime_ns}
    if info.st_size <= HASH_BYTES_LIMIT and path.suffix.lower() in (".toml", ".json", ".csv"):
        record["sha256"] = sha256_file(path)
    return record


def run_fingerprint(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    files: Mapping[str, Path],
    proposals: Path | None,
    chunk_size: int,
    quick: bool,
    halo_ft: float,
    chunks: tuple[str, ...],
    layer_hashes: Mapping[str, str] | None = None,
    n_parcels: int | None = None,
) -> dict[str, Any]:
    """Return what identifies a batch run (see the module docstring).

    ``layer_hashes`` and ``n_parcels`` stand for the layers' hashes and the parcel count
    when the layers were hashed as read and are no longer in memory (a streamed run).
    """
    if layer_hashes is None:
        layer_hashes = layer_hashes_of(layers)
    if n_parcels is None:
        n_parcels = len(layers.vectors["parcels"]) if "parcels" in layers.vectors else 0
    return {
        "gis_sw": gis_sw.__version__,
        "ruleset": {
            "name": ruleset.name,
            "version": ruleset.version,
            "source": ruleset.source,
            "sha256": ruleset_text_hash(ruleset),
        },
        "options": {"chunk_size": chunk_size, "quick": quick, "halo_ft": halo_ft},
        "layers": dict(sorted(layer_hashes.items())),
        "files": {what: _file_record(Path(path)) for what, path in sorted(files.items())},
        "proposals": sha256_file(proposals) if proposals is not None else None,
        "parcels": n_parcels,
        "chunks": list(chunks),
    }


_OPTION_WORDS = {"chunk_size": "--chunk-size", "quick": "--quick", "halo_ft": "the chunk halo"}


def describe_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Return the first difference of two fingerprints (``"X changed ..."``), None if none."""
    if old.get("gis_sw") != new.get("gis_sw"):
        return f"gis-sw changed ({old.get('gis_sw')} then, {new.get('gis_sw')} now)"
    rules_old, rules_new = old.get("ruleset") or {}, new.get("ruleset") or {}
    if any(rules_old.get(k) != rules_new.get(k) for k in ("name", "version", "sha256")):
        return f"the ruleset {rules_new.get('source') or rules_new.get('name')} changed"
    options_old, options_new = old.get("options") or {}, new.get("options") or {}
    for key in sorted(set(options_old) | set(options_new)):
        if options_old.get(key) != options_new.get(key):
            word = _OPTION_WORDS.get(key, key)
            return f"{word} changed ({options_old.get(key)} then, {options_new.get(key)} now)"
    what = _layer_change(old, new) or _file_change(old, new)
    if what is not None:
        return what
    if old.get("proposals") != new.get("proposals"):
        return "the proposals file"
    if old.get("parcels") != new.get("parcels") or old.get("chunks") != new.get("chunks"):
        return "the parcels (or their chunk plan)"
    return None


def _layer_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Return the first layer kind whose hash changed, added or gone (None if none)."""
    layers_old, layers_new = old.get("layers") or {}, new.get("layers") or {}
    for kind in sorted(set(layers_old) | set(layers_new)):
        if kind not in layers_new:
            return f"the {kind} layer is no longer given"
        if kind not in layers_old:
            return f"the {kind} layer was added"
        if layers_old[kind] != layers_new[kind]:
            return kind
    return None


def _file_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Return the first input file that changed (None if none did)."""
    files_old, files_new = old.get("files") or {}, new.get("files") or {}
    if set(files_old) != set(files_new):
        gone = sorted(set(files_old) - set(files_new))
        came = sorted(set(files_new) - set(files_old))
        return (gone or came)[0]
    for what in sorted(files_new):
        a, b = files_old[what], files_new[what]
        if a.get("missing") != b.get("missing"):
            return what
        if a.get("size") != b.get("size") or a.get("sha256") != b.get("sha256"):
            return what
        touched = a.get("mtime_ns") != b.get("mtime_ns")
        if touched and "sha256" not in b and not _layers_only(what):
            return what  # a raster or other file: size and time are all there is
    return None


def _layers_only(what: str) -> bool:
    """Return True for a file description naming only vector layers (hashed as read)."""
    head = what.rsplit(" (", 1)[0]
    return head.startswith("the ") and head.endswith(("layer", "layers")) and "manifest" not in head
