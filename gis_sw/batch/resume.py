"""Part files and a manifest, so a killed batch run can resume where it stopped.

Layout inside the output folder::

    parts/manifest.json        what the run is (inputs, ruleset, chunk plan fingerprints)
    parts/chunk-000012.parquet one finished chunk's per-parcel rows

A part file is written to a temporary name and renamed into place (atomic on POSIX), so a
part that exists is whole: a run killed by SIGKILL leaves only whole parts (and maybe a
temporary file, removed on resume).  A resumed run checks that the manifest describes the
same inputs and chunk plan, then screens only the chunks with no part file.  Each chunk's
rows are in exactly one part, so nothing is lost or duplicated.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import atomic_path, write_text_atomic

log = logging.getLogger(__name__)

PARTS_DIR = "parts"
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1


def part_name(chunk_id: int) -> str:
    return f"chunk-{chunk_id:06d}.parquet"


@dataclass(frozen=True, slots=True)
class PartStore:
    """The part files of one run in ``out/parts``."""

    folder: Path

    @classmethod
    def in_output(cls, out_dir: Path) -> PartStore:
        return cls(Path(out_dir) / PARTS_DIR)

    @property
    def manifest_path(self) -> Path:
        return self.folder / MANIFEST

    def start(self, manifest: dict[str, Any], *, resume: bool, overwrite: bool) -> set[int]:
        """Prepare the folder and return the chunk ids already done.

        Raises
        ------
        OutputError
            When parts of another run are present and neither ``--resume`` (same run)
            nor ``--overwrite`` was given, or ``--resume`` meets a different run.
        """
        manifest = {"version": MANIFEST_VERSION, **manifest}
        if self.manifest_path.exists():
            old = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            same = old == manifest
            if resume and same:
                for tmp in self.folder.glob(".*.tmp*"):
                    tmp.unlink()
                done = self.done()
                log.info(
                    "resuming: %d of %d chunks already done", len(done), len(manifest["chunks"])
                )
                return done
            if resume and not overwrite:
                raise OutputError(
                    f"{self.folder} holds parts of a different run (inputs, ruleset or chunk "
                    "size differ), so --resume cannot continue it. Fix: rerun with the same "
                    "options, or pass --overwrite to start again."
                )
            if not overwrite and not resume:
                raise OutputError(
                    f"{self.folder} holds parts of an earlier run. Fix: pass --resume to "
                    "finish it, or --overwrite to start again."
                )
            shutil.rmtree(self.folder)
        elif self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.manifest_path, json.dumps(manifest, indent=1, sort_keys=True))
        return set()

    def done(self) -> set[int]:
        """Chunk ids with a whole part file."""
        ids = set()
        for path in self.folder.glob("chunk-*.parquet"):
            stem = path.stem.removeprefix("chunk-")
            if stem.isdigit():
                ids.add(int(stem))
        return ids

    def write(self, chunk_id: int, rows: pd.DataFrame) -> Path:
        """Write one chunk's rows atomically."""
        target = self.folder / part_name(chunk_id)
        with atomic_path(target, overwrite=True) as tmp:
            rows.to_parquet(tmp, index=False)
        return target

    def read_all(self, n_chunks: int) -> pd.DataFrame:
        """Every chunk's rows, concatenated and ordered by parcel row.

        Raises
        ------
        OutputError
            If a part is missing (the run did not finish).
        """
        frames = []
        for chunk_id in range(n_chunks):
            path = self.folder / part_name(chunk_id)
            if not path.exists():
                raise OutputError(
                    f"part {path} is missing: the run did not finish. Fix: rerun with --resume."
                )
            frames.append(pd.read_parquet(path))
        rows = pd.concat(frames, ignore_index=True)
        return rows.sort_values("row", kind="stable").reset_index(drop=True)
