"""Part files and a manifest, so a killed batch run can resume where it stopped.

Layout inside the output folder::

    parts/manifest.json        what the run is (:mod:`gis_sw.batch.fingerprint`)
    parts/parts.jsonl          one line per finished part: chunk, rows, row and id range,
                               size and SHA-256 of the file
    parts/chunk-000012.parquet one finished chunk's per-parcel rows

A part is written to a hidden temporary name and renamed into place, then its line is
appended to ``parts.jsonl`` and synced.  A run killed by SIGKILL leaves whole parts, maybe
one part without its line (recomputed), maybe a half line (ignored) and hidden temporary
files (removed by the next run).

``--resume`` continues only the same run: every input, the ruleset, gis-sw's version and
the chunk options must match the manifest, else one line names what changed.  A part is
kept only when its file has the size and hash of its line and holds exactly the rows of
its chunk; any other part (truncated, zero bytes, swapped with another, edited) is
recomputed.  A manifest that cannot be read is a clear error suggesting ``--overwrite``.

The store owns only the files named like its own (``manifest.json``, ``parts.jsonl``,
``chunk-NNNNNN.parquet`` and their hidden temporaries): ``--overwrite`` removes those and
nothing else; a user's other file in ``parts/`` is never touched.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from gis_sw.batch.fingerprint import describe_change, sha256_file
from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import atomic_path, check_writable, write_text_atomic

log = logging.getLogger(__name__)

PARTS_DIR = "parts"
MANIFEST = "manifest.json"
JOURNAL = "parts.jsonl"
MANIFEST_VERSION = 2
_PART_NAME = re.compile(r"^chunk-(\d{6,})\.parquet$")

RowsOf = Callable[[int], npt.NDArray[np.int64]]


def part_name(chunk_id: int) -> str:
    """Return the file name of a chunk's part."""
    return f"chunk-{chunk_id:06d}.parquet"


_OWN_TEMP = re.compile(
    r"^\.(?:manifest\.[a-z0-9_]{8}\.tmp\.json|chunk-\d{6,}\.[a-z0-9_]{8}\.tmp\.parquet)$"
)


def _ours(path: Path) -> bool:
    """Return True for a file named like one the store writes (or a temporary of one)."""
    name = path.name
    return name in (MANIFEST, JOURNAL) or bool(_PART_NAME.match(name) or _OWN_TEMP.match(name))


@dataclass(frozen=True, slots=True)
class Resumed:
    """What :meth:`PartStore.start` found: chunks kept and parts recomputed (with why)."""

    done: frozenset[int] = frozenset()
    damaged: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PartStore:
    """The part files of one run in ``out/parts``."""

    folder: Path

    @classmethod
    def in_output(cls, out_dir: Path) -> PartStore:
        """Return the store of an output folder (its ``parts/``)."""
        return cls(Path(out_dir) / PARTS_DIR)

    @property
    def manifest_path(self) -> Path:
        """Return the path of the resume manifest."""
        return self.folder / MANIFEST

    @property
    def journal_path(self) -> Path:
        """Return the path of the parts journal."""
        return self.folder / JOURNAL

    def own_files(self) -> list[Path]:
        """Files in the folder named like the store's own."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if _ours(p) and not p.is_dir())

    def start(
        self,
        manifest: dict[str, Any],
        *,
        resume: bool,
        overwrite: bool,
        rows_of: RowsOf | None = None,
    ) -> Resumed:
        """Prepare the folder; return the chunks already done (with ``resume``).

        Parameters
        ----------
        manifest
            What the run is (:func:`gis_sw.batch.fingerprint.run_fingerprint`).
        resume, overwrite
            The CLI flags.
        rows_of
            Chunk id to its parcel rows (ascending): a kept part must hold exactly these.

        Raises
        ------
        OutputError
            When parts of another run are present without ``--resume`` or ``--overwrite``;
            when ``--resume`` meets a different run (naming what changed) or a manifest it
            cannot read; when ``parts`` is not a folder.
        """
        check_writable(self.manifest_path, overwrite=True)  # parts/ a file: clear error
        manifest = {"version": MANIFEST_VERSION, **manifest}
        old, problem = self._read_manifest()
        if old is None and problem is None:
            if self.own_files() and not overwrite:
                raise OutputError(
                    f"{self.folder} holds gis-sw part files but no {MANIFEST}. Fix: pass "
                    "--overwrite to start again (only gis-sw's own files there are removed)."
                )
            return self._fresh(manifest)
        if problem is not None:
            if overwrite:
                log.warning("%s; starting again (--overwrite)", problem)
                return self._fresh(manifest)
            raise self._damaged(problem)
        assert old is not None
        change = _change(old, manifest)
        if resume and change is None:
            return self._resume(manifest, rows_of)
        if overwrite:
            return self._fresh(manifest)
        if resume:
            raise OutputError(
                f"{change} since the interrupted run, so --resume would mix two different "
                "runs: run again without --resume (with --overwrite, to replace the parts "
                f"in {self.folder})."
            )
        raise OutputError(
            f"{self.folder} holds parts of an earlier run. Fix: pass --resume to finish it, or "
            "--overwrite to start again."
        )

    def _damaged(self, problem: str) -> OutputError:
        return OutputError(
            f"{problem}, so it cannot say what the interrupted run was. Fix: pass "
            f"--overwrite to start again (only gis-sw's own files in {self.folder} are removed)."
        )

    def refuse_damaged(self, *, overwrite: bool) -> None:
        """Raise at once when the manifest cannot be read and ``overwrite`` is False.

        So a ``--resume`` says that first, before any other refusal.

        Raises
        ------
        OutputError
            Naming the manifest and suggesting ``--overwrite``.
        """
        _old, problem = self._read_manifest()
        if problem is not None and not overwrite:
            raise self._damaged(problem)

    def publishing(self) -> bool:
        """Return True when the run of this folder's manifest began to write its outputs."""
        old, _problem = self._read_manifest()
        return bool(old and old.get("publishing"))

    def mark_publishing(self) -> None:
        """Record in the manifest that the outputs are being written (see :meth:`publishing`).

        A resumed run may then replace outputs that the interrupted run itself published.
        """
        old, problem = self._read_manifest()
        if old is None or problem is not None:
            return
        old["publishing"] = True
        write_text_atomic(self.manifest_path, json.dumps(old, indent=1, sort_keys=True))

    def _read_manifest(self) -> tuple[dict[str, Any] | None, str | None]:
        path = self.manifest_path
        if not os.path.lexists(path):
            return None, None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            if isinstance(exc, ValueError):
                reason = "not JSON: it is truncated or damaged"
            return None, f"the resume manifest {path} cannot be read ({reason})"
        if not isinstance(data, dict) or not isinstance(data.get("version"), int):
            return None, f"the resume manifest {path} is not one gis-sw wrote"
        if data["version"] != MANIFEST_VERSION:
            return None, (
                f"the resume manifest {path} was written by another gis-sw (manifest version "
                f"{data['version']}, this one reads {MANIFEST_VERSION})"
            )
        return data, None

    def _clear(self) -> None:
        for path in self.own_files():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _fresh(self, manifest: dict[str, Any]) -> Resumed:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._clear()
        write_text_atomic(self.manifest_path, json.dumps(manifest, indent=1, sort_keys=True))
        self.journal_path.touch()
        return Resumed()

    def _resume(self, manifest: dict[str, Any], rows_of: RowsOf | None) -> Resumed:
        for path in self.own_files():
            if path.name.startswith("."):
                path.unlink()  # temporaries of the killed run
        entries = self._journal()
        n_chunks = len(manifest.get("chunks", []))
        done: set[int] = set()
        damaged: dict[int, str] = {}
        for path in self.folder.glob("chunk-*.parquet"):
            found = _PART_NAME.match(path.name)
            if not found:
                continue
            chunk_id = int(found.group(1))
            why = self._check_part(path, chunk_id, entries.get(chunk_id), n_chunks, rows_of)
            if why is None:
                done.add(chunk_id)
            else:
                damaged[chunk_id] = why
                path.unlink()
        for chunk_id, why in sorted(damaged.items()):
            log.info("part %s %s: recomputed", part_name(chunk_id), why)
        log.info("resuming: %d of %d chunks already done", len(done), n_chunks)
        return Resumed(done=frozenset(done), damaged=damaged)

    def _journal(self) -> dict[int, dict[str, Any]]:
        entries: dict[int, dict[str, Any]] = {}
        try:
            text = self.journal_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return entries
        for line in text.splitlines():
            try:
                entry = json.loads(line)
                entries[int(entry["chunk"])] = entry
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by the kill: its part is recomputed
        return entries

    def _check_part(
        self,
        path: Path,
        chunk_id: int,
        entry: Mapping[str, Any] | None,
        n_chunks: int,
        rows_of: RowsOf | None,
    ) -> str | None:
        """Why a part cannot be kept, or None when it is whole and the chunk's own."""
        if chunk_id >= n_chunks:
            return "is not a chunk of this run"
        if entry is None:
            return "was not recorded as finished"
        size = path.stat().st_size
        if size != entry.get("size"):
            return f"has {size} bytes, {entry.get('size')} were written"
        if sha256_file(path) != entry.get("sha256"):
            return "differs from the part that was written (hash)"
        try:
            rows = pd.read_parquet(path, columns=["row", "parcel_id"])
        except Exception as exc:  # noqa: BLE001  # pyarrow raises several kinds for a bad file
            return f"cannot be read ({type(exc).__name__})"
        if len(rows) != entry.get("rows"):
            return f"holds {len(rows)} rows, {entry.get('rows')} were written"
        if rows_of is not None:
            expected = rows_of(chunk_id)
            if not np.array_equal(rows["row"].to_numpy(), expected):
                return "holds the rows of another chunk"
        return None

    def write(self, chunk_id: int, rows: pd.DataFrame) -> Path:
        """Write one chunk's rows atomically and record the part in the journal."""
        target = self.folder / part_name(chunk_id)
        with atomic_path(target, overwrite=True) as tmp:
            rows.to_parquet(tmp, index=False)
        ids = rows["parcel_id"]
        entry = {
            "chunk": chunk_id,
            "file": target.name,
            "rows": len(rows),
            "first_row": int(rows["row"].iloc[0]) if len(rows) else None,
            "last_row": int(rows["row"].iloc[-1]) if len(rows) else None,
            "first_id": None if not len(rows) or pd.isna(ids.iloc[0]) else str(ids.iloc[0]),
            "last_id": None if not len(rows) or pd.isna(ids.iloc[-1]) else str(ids.iloc[-1]),
            "size": target.stat().st_size,
            "sha256": sha256_file(target),
        }
        with self.journal_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return target

    def read_part(self, chunk_id: int, rows_of: RowsOf | None = None) -> pd.DataFrame:
        """One chunk's rows, read from its part (as :meth:`read_all` reads each).

        A run reads each part back as soon as it wrote it, while the workers screen the
        next chunks, so :meth:`read_all` at the end has only the resumed parts to read.

        Raises
        ------
        OutputError
            If the part is missing or does not hold its chunk's rows.
        """
        path = self.folder / part_name(chunk_id)
        if not path.exists():
            raise OutputError(
                f"part {path} is missing: the run did not finish. Fix: rerun with --resume."
            )
        frame = pd.read_parquet(path)
        if rows_of is not None and not np.array_equal(frame["row"].to_numpy(), rows_of(chunk_id)):
            raise OutputError(
                f"part {path} changed while the run was finishing. Fix: rerun with --resume."
            )
        return frame

    def read_all(
        self,
        n_chunks: int,
        rows_of: RowsOf | None = None,
        *,
        read: Mapping[int, pd.DataFrame] | None = None,
    ) -> pd.DataFrame:
        """Every chunk's rows, concatenated and ordered by parcel row.

        ``read`` holds the parts already read back (:meth:`read_part`), by chunk id; the
        others are read here.

        Raises
        ------
        OutputError
            If a part is missing or does not hold its chunk's rows.
        """
        read = read or {}
        frames = [
            read[chunk_id] if chunk_id in read else self.read_part(chunk_id, rows_of)
            for chunk_id in range(n_chunks)
        ]
        rows = pd.concat(frames, ignore_index=True)
        return rows.sort_values("row", kind="stable").reset_index(drop=True)


def _change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Return the first difference between two manifests, as a sentence start."""
    what = describe_change(old, new)
    if what is None:
        return None
    return (
        what
        if " changed" in what or " added" in what or " no longer" in what
        else (f"{what} changed")
    )
