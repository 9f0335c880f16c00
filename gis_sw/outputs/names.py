"""File names made from proposal ids: unique by construction, and listed in ``index.csv``.

A proposal id is text the user chose (``Lot 7/A``, ``東京-1``, ``calcsheet``); a file name
must hold only characters every file system takes, and two proposals must never share a
file.  :func:`file_stems` gives each id of a run its stem:

* the id itself when it is already a safe name (``[A-Za-z0-9._-]``, not starting or
  ending with ``.``, ``_`` or ``-``, at most :data:`MAX_STEM` characters) and cannot be
  taken for another file;
* otherwise the sanitised id (unsafe runs become ``_``) followed by ``-`` and a short hash
  of the whole id (:data:`HASH_CHARS` hex digits of SHA-256), which depends on the id alone,
  so a proposal keeps its file name from run to run.

An id "could be taken for another file" when its stem, folded to lower case (file systems
on macOS and Windows ignore case), is one of the set's own names (:data:`RESERVED`: a
proposal named ``calcsheet`` must not write ``calcsheet.pdf``), starts with a reserved
prefix (``timeline_``), ends like the pages of a map book (``_key``, ``_sheet-3``), looks
like a hashed stem itself, is a Windows device name, or is shared with another kept id of
the run after case folding (``Lot7`` and ``lot7``).  Every such id gets the hash; stems
without a hash never end in one and differ after case folding, and stems with one differ
by the hash of distinct ids, so no two ids of a run share a stem.  An id's stem depends on
the other ids only in that case-folding clash.

:func:`index_frame` is the id-to-file table written as ``index.csv`` beside the files.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from gis_sw.outputs.atomic import write_text_atomic
from gis_sw.outputs.csvcells import excel_text

HASH_CHARS = 10
"""Hex digits of the hash suffix (40 bits: a clash of two ids is a one-in-a-trillion event,
and :func:`file_stems` checks for it anyway)."""

MAX_STEM = 80
"""Longest stem kept before the hash (file names stay well under 255 bytes)."""

RESERVED: frozenset[str] = frozenset(
    {
        "findings",
        "findings_lines",
        "findings_points",
        "summary",
        "waivers",
        "calcsheet",
        "webmap",
        "index",
        "parcels",
        "problems",
        "overview",
        "parts",
        "manifest",
        "layers",
        "proposals",
        "town",
    }
)
"""Stems of the files a run writes for its whole set (compared in lower case)."""

RESERVED_PREFIXES: tuple[str, ...] = ("timeline_", "calendar_")
"""Stems other per-proposal files start with (``timeline_<stem>.png``, ``calendar_<stem>.csv``)."""

_BOOK_PAGE = re.compile(r"_(key|sheet-[A-Za-z0-9]+)$", re.IGNORECASE)
_HASHED = re.compile(rf"-[0-9a-f]{{{HASH_CHARS}}}$", re.IGNORECASE)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)
FALLBACK_STEM = "proposal"
"""Stem of an id with no safe character at all (before its hash)."""


def sanitise(proposal_id: str) -> str:
    """Return the id with each run of unsafe characters turned into ``_`` (not unique)."""
    text = _UNSAFE.sub("_", str(proposal_id)).strip("._-")
    return text[:MAX_STEM].rstrip("._-") or FALLBACK_STEM


def id_hash(proposal_id: str) -> str:
    """Return the stable short hash of an id (:data:`HASH_CHARS` hex digits of SHA-256)."""
    return hashlib.sha256(str(proposal_id).encode("utf-8", "surrogatepass")).hexdigest()[
        :HASH_CHARS
    ]


def _clashes_with_set(stem: str) -> bool:
    folded = stem.casefold()
    return (
        folded in RESERVED
        or folded.split(".", 1)[0] in _WINDOWS_DEVICES
        or any(folded.startswith(p) for p in RESERVED_PREFIXES)
        or bool(_BOOK_PAGE.search(stem))
        or bool(_HASHED.search(stem))
    )


def file_stems(proposal_ids: Iterable[str]) -> dict[str, str]:
    """Return a unique file stem for each id of a run (see the module docstring).

    Pass every id of the run (not only the ones drawn now), so that an id's stem does not
    depend on which subset is written.

    Raises
    ------
    ValueError
        If two distinct ids hash to the same stem (never seen; the hash is 40 bits).
    """
    ids = list(dict.fromkeys(str(i) for i in proposal_ids))
    clean = {pid: sanitise(pid) for pid in ids}
    # ids kept as they are can only meet each other by case (a changed id always gets a hash)
    folded = Counter(stem.casefold() for pid, stem in clean.items() if stem == pid)
    stems: dict[str, str] = {}
    for pid in ids:
        stem = clean[pid]
        if stem != pid or folded[stem.casefold()] > 1 or _clashes_with_set(stem):
            stem = f"{stem}-{id_hash(pid)}"
        stems[pid] = stem
    taken = Counter(s.casefold() for s in stems.values())
    if any(count > 1 for count in taken.values()):
        twins = sorted(pid for pid, s in stems.items() if taken[s.casefold()] > 1)
        raise ValueError(f"proposal ids {twins} give the same file name")
    return stems


def file_stem(proposal_id: str, proposal_ids: Iterable[str] | None = None) -> str:
    """Return the stem of one id among ``proposal_ids`` (the whole run; default: the id)."""
    ids = [proposal_id] if proposal_ids is None else [*proposal_ids, proposal_id]
    return file_stems(ids)[str(proposal_id)]


INDEX_NAME = "index.csv"
INDEX_COLUMNS: tuple[str, ...] = ("proposal_id", "file_stem", "files")


def index_frame(stems: Mapping[str, str], files: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Write the id-to-file table: one row per id, its stem and the files written for it.

    Parameters
    ----------
    stems
        Proposal id to stem (:func:`file_stems`).
    files
        Proposal id to the names of the files written for it (``;``-joined in the table).
    """
    return pd.DataFrame(
        {
            "proposal_id": list(stems),
            "file_stem": list(stems.values()),
            "files": [";".join(sorted(files.get(pid, ()))) for pid in stems],
        },
        columns=list(INDEX_COLUMNS),
    )


_PAGE_SUFFIX = re.compile(r"_(?:key|sheet-[A-Za-z0-9]+)$")


def files_by_id(stems: Mapping[str, str], paths: Iterable[Path]) -> dict[str, list[str]]:
    """Return which proposal each per-proposal file belongs to.

    Files ``<stem>.pdf``, ``<stem>_key.png``, ``<stem>_sheet-2.png``,
    ``timeline_<stem>.png``; files of the whole set are left out.

    Unambiguous because no stem ends like a map book page or starts with a reserved prefix.
    """
    owner = {stem: pid for pid, stem in stems.items()}
    found: dict[str, list[str]] = {}
    for path in paths:
        base = Path(path).stem
        for prefix in RESERVED_PREFIXES:
            base = base.removeprefix(prefix)
        pid = owner.get(base) or owner.get(_PAGE_SUFFIX.sub("", base))
        if pid is not None:  # in the application's own folder: named with it
            nested = Path(path).parent.name == stems[pid]
            name = f"{stems[pid]}/{Path(path).name}" if nested else Path(path).name
            found.setdefault(pid, []).append(name)
    return found


def write_index(
    path: str | Path, stems: Mapping[str, str], paths: Iterable[Path], *, overwrite: bool
) -> Path:
    """Write ``index.csv``: every proposal id, its file stem and its files (atomically).

    Raises
    ------
    OutputError
        If the file exists without ``overwrite`` or cannot be written.
    """
    buffer = io.StringIO()
    index_frame(stems, files_by_id(stems, paths)).to_csv(buffer, index=False, lineterminator="\n")
    return write_text_atomic(path, excel_text(buffer.getvalue()), overwrite=overwrite)
