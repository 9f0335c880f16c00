"""Atomic output: write to a temporary file beside the target, then rename over it.

A crash (or SIGKILL) mid-write leaves the old file whole, never half a new one.  The
temporary file is hidden and named ``.<stem>.<8 random>.tmp<suffix>`` (GDAL may add
``-journal``, ``-wal``, ``-shm``); :func:`clean_stale_temps` removes the ones a killed run
left, and only those.

What is refused (docs/outputs.md): an existing output (a dangling symlink included) without
``overwrite``; an output name that is a folder, always; a target that is one of the run's
inputs (same resolved path, or same file by ``(st_dev, st_ino)``: a hard link or a symlink
to it), always (:func:`refuse_inputs`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path

from gis_sw.errors import OutputError


def check_writable(path: Path, *, overwrite: bool) -> None:
    """Refuse to replace an existing output without ``overwrite``.

    Raises
    ------
    OutputError
        If ``path`` exists (a dangling symlink counts) and ``overwrite`` is False; if it is
        a folder (whatever ``overwrite`` says: a folder is never replaced by a file); or if
        its folder cannot be created.
    """
    path = Path(path)
    if path.is_dir():
        raise OutputError(
            f"output {path} is a folder: gis-sw writes a file by that name and never replaces "
            "a folder, even with --overwrite. Fix: move or rename that folder, or choose "
            "another --out folder."
        )
    if os.path.lexists(path) and not overwrite:
        what = "already exists"
        if path.is_symlink() and not path.exists():
            what = f"already exists (a symlink to {path.readlink()}, which is missing)"
        raise OutputError(
            f"output {path} {what}. Fix: pass --overwrite to replace it, or choose "
            "another --out folder."
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create output folder {path.parent}: {exc.strerror}. Fix: choose an --out "
            "folder you may write to (a path whose parents are folders, not files)."
        ) from None


def check_all_writable(paths: Iterable[Path], *, overwrite: bool) -> None:
    """Run :func:`check_writable` over a whole set, folders first.

    An output name that is a folder is reported before any existing file, since
    ``--overwrite`` cannot fix it.

    Raises
    ------
    OutputError
        As :func:`check_writable`.
    """
    paths = [Path(p) for p in paths]
    for path in paths:
        if path.is_dir():
            check_writable(path, overwrite=True)
    for path in paths:
        check_writable(path, overwrite=overwrite)


_GROUP: ContextVar[list[tuple[Path, Path]] | None] = ContextVar("gis_sw_output_group", default=None)


@contextlib.contextmanager
def output_group() -> Iterator[None]:
    """Publish the outputs written inside together at the end, or (on any error) none.

    Within the block, :func:`atomic_path` writes and syncs each temporary file but defers
    its rename; the renames happen one after another when the block ends without error.  On
    an error every temporary file is removed and every target is left as it was, so a run
    that fails at its third file does not leave two new files beside old ones.  The group
    belongs to the current context (thread): worker threads rename as usual.
    """
    pending: list[tuple[Path, Path]] = []
    token = _GROUP.set(pending)
    try:
        yield
    except BaseException:
        for tmp, _target in pending:
            _cleanup(tmp)
        raise
    finally:
        _GROUP.reset(token)
    _publish(pending)


def readable(path: str | Path) -> Path:
    """Return where ``path``'s content is now.

    Inside an :func:`output_group`, a file written but not yet published is still its
    temporary file; otherwise ``path`` itself.

    Lets an output built from earlier outputs of the same set (a report that appends the
    sheets) read them before the set is published.
    """
    target = Path(path)
    pending = _GROUP.get()
    for tmp, destination in reversed(pending or []):
        if destination == target:
            return tmp
    return target


def _publish(pending: list[tuple[Path, Path]]) -> None:
    """Rename every temporary file of a group into place, after checking every target."""
    try:
        for _tmp, target in pending:
            if target.is_dir():
                raise OutputError(
                    f"output {target} became a folder while the run was writing; nothing was "
                    "replaced. Fix: move that folder away and run again."
                )
    except OutputError:
        for tmp, _target in pending:
            _cleanup(tmp)
        raise
    for at, (tmp, target) in enumerate(pending):
        try:
            tmp.replace(target)
        except OSError as exc:
            for rest, _target in pending[at:]:
                _cleanup(rest)
            done = ", ".join(t.name for _tmp, t in pending[:at]) or "none"
            raise OutputError(
                f"replacing {target} failed ({exc.strerror or exc}); replaced before it: "
                f"{done}. Fix: free the file (or disk space) and run again with --overwrite."
            ) from None


@contextlib.contextmanager
def atomic_path(path: str | Path, *, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temporary path in the same folder; on success rename it to ``path``.

    The temporary file keeps the target's suffix so GDAL picks the right driver.

    Raises
    ------
    OutputError
        When the target exists without ``overwrite``, or the folder is not writable, or the
        disk is full.  The target is left as it was.
    """
    target = Path(path)
    check_writable(target, overwrite=overwrite)
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}", dir=target.parent
        )
    except OSError as exc:
        raise OutputError(
            f"cannot write in {target.parent}: {exc.strerror}. Fix: choose a writable --out folder."
        ) from None
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()  # GDAL drivers want to create the file themselves
    try:
        yield tmp
        if not tmp.exists():
            raise OutputError(f"nothing was written for {target}")
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        group = _GROUP.get()
        if group is None:
            tmp.replace(target)
        else:
            group.append((tmp, target))
    except OSError as exc:
        _cleanup(tmp)
        if isinstance(exc, OutputError):
            raise
        raise OutputError(
            f"writing {target} failed: {exc.strerror or exc}. The previous file, if any, is "
            "unchanged. Fix: free disk space or choose another --out folder."
        ) from None
    except BaseException as exc:
        _cleanup(tmp)
        if _is_gdal_error(exc):  # GDAL reports a full disk as a failed feature or table
            raise OutputError(
                f"writing {target} failed: {_gdal_reason(exc, target.parent)}. The previous "
                "file, if any, is unchanged. Fix: free disk space or choose another --out folder."
            ) from None
        raise


LOW_SPACE_BYTES = 1 << 20
"""Free space under which a failed GDAL write is reported as a full disk."""


def _is_gdal_error(exc: BaseException) -> bool:
    """Return True for an error of pyogrio's writers (DataSourceError ...), not importing it."""
    return type(exc).__module__.startswith("pyogrio")


def _gdal_reason(exc: BaseException, folder: Path) -> str:
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = None
    if free is not None and free < LOW_SPACE_BYTES:
        return f"No space left on device ({free:,} bytes free in {folder})"
    return str(exc).split(": sqlite3_exec", 1)[0]


def _cleanup(tmp: Path) -> None:
    for extra in (tmp, *tmp.parent.glob(tmp.name + "-*")):
        with contextlib.suppress(OSError):
            extra.unlink()


def write_text_atomic(path: str | Path, text: str, *, overwrite: bool = True) -> Path:
    """Write a text file atomically (UTF-8)."""
    with atomic_path(path, overwrite=overwrite) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes_atomic(path: str | Path, data: bytes, *, overwrite: bool = True) -> Path:
    """Write a binary file atomically."""
    with atomic_path(path, overwrite=overwrite) as tmp:
        tmp.write_bytes(data)
    return Path(path)


_TEMP_RANDOM = r"[a-z0-9_]{8}"
_GDAL_SIDECARS = r"(?:-journal|-wal|-shm)?"


def temp_pattern(target: Path) -> re.Pattern[str]:
    """Return the names :func:`atomic_path` gives temporary files of ``target`` (and sidecars)."""
    target = Path(target)
    return re.compile(
        rf"^\.{re.escape(target.stem)}\.{_TEMP_RANDOM}\.tmp{re.escape(target.suffix)}"
        rf"{_GDAL_SIDECARS}$"
    )


def clean_stale_temps(folder: Path, names: Iterable[str]) -> list[Path]:
    """Remove temporary files a killed run left for the outputs ``names`` in ``folder``.

    Only hidden files matching :func:`temp_pattern` of one of ``names`` are removed: a
    user's file, or a temporary file of another output, is never touched.  Returns the
    files removed.
    """
    folder = Path(folder)
    patterns = [temp_pattern(folder / name) for name in names]
    removed: list[Path] = []
    try:
        candidates = [p for p in folder.iterdir() if p.name.startswith(".") and ".tmp" in p.name]
    except OSError:
        return removed
    for path in candidates:
        if any(p.match(path.name) for p in patterns) and path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def input_identities(inputs: Mapping[str, Path]) -> dict[object, str]:
    """Return the resolved path and ``(st_dev, st_ino)`` of each input file, to what it is.

    ``inputs`` maps a description (``"the parcels layer"``) to a path; missing paths are
    skipped (a PostGIS source has none).
    """
    known: dict[object, str] = {}
    for what, path in inputs.items():
        try:
            resolved = Path(path).resolve()
            info = resolved.stat()
        except OSError:
            continue
        known[resolved] = what
        known[(info.st_dev, info.st_ino)] = what
    return known


def refuse_inputs(targets: Iterable[Path], identities: Mapping[object, str]) -> None:
    """Refuse to write any of ``targets`` that is one of the run's inputs.

    Raises
    ------
    OutputError
        Naming the output and the input it would replace (whatever ``--overwrite`` says).
    """
    for given in targets:
        target = Path(given)
        found = identities.get(target.resolve())
        if found is None:
            with contextlib.suppress(OSError):
                info = target.stat()
                found = identities.get((info.st_dev, info.st_ino))
        if found is not None:
            raise OutputError(
                f"output {target} is {found}, an input of this run: gis-sw never writes over "
                "its inputs, even with --overwrite. Fix: choose an --out folder apart from the "
                "input files."
            )
