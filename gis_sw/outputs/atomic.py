"""Atomic output: write to a temporary file beside the target, then rename over it.

A crash (or SIGKILL) mid-write leaves the old file whole, never half a new one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from gis_sw.errors import OutputError


def check_writable(path: Path, *, overwrite: bool) -> None:
    """Refuse to replace an existing output without ``overwrite``.

    Raises
    ------
    OutputError
        If ``path`` exists and ``overwrite`` is False, or its folder cannot be created.
    """
    if path.exists() and not overwrite:
        raise OutputError(
            f"output {path} already exists. Fix: pass --overwrite to replace it, or choose "
            "another --out folder."
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(
            f"cannot create output folder {path.parent}: {exc.strerror}. Fix: choose an --out "
            "folder you may write to (a path whose parents are folders, not files)."
        ) from None


_GROUP: ContextVar[list[tuple[Path, Path]] | None] = ContextVar("gis_sw_output_group", default=None)


@contextlib.contextmanager
def output_group() -> Iterator[None]:
    """Outputs written inside appear together at the end, or (on any error) not at all.

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
    for tmp, target in pending:
        tmp.replace(target)


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
    """An error of pyogrio's writers (DataSourceError, FeatureError ...), without importing it."""
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
