"""Proposal column names as GIS exports write them: case, Shapefile truncation, typos.

A proposal column under another name is a silent wrong answer: ``approved_SWPPP = true``
ignored gives SW301 "fail ... with no approved SWPPP"; a Shapefile's ``proposal_i`` (its
10-character limit) ignored makes the whole file one proposal.  So, for every layer of a
proposal and its attribute table, :func:`resolve_columns` sorts the source's columns into:

* **read under the known name, and said so**: the same name in another case
  (``PROPOSAL_ID``, ``approved_SWPPP``), or a Shapefile's cut of exactly one known name
  (``proposal_i``, ``serves_veh``, ``bottom_ele``, ``has_sedime``);
* **refused, with the fix**: a cut that could be several known names (``test_hole_`` is
  ``test_hole_logged`` or ``test_hole_groundwater_elevation_ft``; ``constructi`` is
  ``construction_cost_usd``, ``construction_start`` or ``construction_end``; GDAL's
  ``construc_1`` for the second of them), and two source columns that would both be read as
  the same known one;
* **warned and ignored**: an unknown column within a small edit distance of a known one
  (``landuse``, ``aproved_swppp``), naming the column it probably means.  When the known
  column is required (``proposal_id``), the near miss is an error instead: a layer read
  without its ids would merge or lose proposals.

Only names are looked at here; values are checked by the layer's spec afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

SHAPEFILE_NAME_LIMIT = 10
"""Characters a dBASE (Shapefile) column name keeps."""
MAX_TYPO_DISTANCE = 2
"""Edits (insert, delete, substitute, swap) between a column and a known name it may mean."""
MIN_TYPO_LENGTH = 4
"""Names shorter than this are never taken for typos (``id``, ``ft``)."""

_GDAL_DUPLICATE = re.compile(r"^(?P<stem>.+)_(?P<n>\d{1,2})$")
"""GDAL names the second column cut to the same 10 characters ``stem_1``, ``stem_2`` ..."""


@dataclass(frozen=True, slots=True)
class ColumnPlan:
    """What to do with a source's column names.

    Attributes
    ----------
    rename
        Source name to known name (case or Shapefile cut).
    notes
        One sentence per renamed column and per near miss (warnings).
    errors
        ``(message, fix)`` for every column that cannot be read safely.
    """

    rename: Mapping[str, str]
    notes: tuple[str, ...]
    errors: tuple[tuple[str, str], ...]


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance (Levenshtein with adjacent swaps) of two names."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _cut_of(name: str, known: Iterable[str]) -> list[str]:
    """Known names longer than the Shapefile limit whose cut is ``name`` (any case)."""
    low = name.lower()
    out = [k for k in known if len(k) > SHAPEFILE_NAME_LIMIT and k[:SHAPEFILE_NAME_LIMIT] == low]
    if not out and len(low) == SHAPEFILE_NAME_LIMIT:
        match = _GDAL_DUPLICATE.match(low)
        if match:  # ``construc_1``: the 2nd column whose cut clashed with another
            stem = match["stem"]
            out = [k for k in known if len(k) > SHAPEFILE_NAME_LIMIT and k.startswith(stem)]
            return out if len(out) > 1 else []
    return out


def _near(name: str, known: Iterable[str]) -> str | None:
    """Return the known name within :data:`MAX_TYPO_DISTANCE` edits of ``name`` (closest)."""
    low = name.lower()
    if len(low) < MIN_TYPO_LENGTH:
        return None
    best: tuple[int, str] | None = None
    for k in known:
        if abs(len(k) - len(low)) > MAX_TYPO_DISTANCE:
            continue
        limit = MAX_TYPO_DISTANCE if len(k) > MIN_TYPO_LENGTH + 1 else 1
        squeezed = low.replace("_", "").replace(" ", "").replace("-", "")
        d = min(edit_distance(low, k), edit_distance(squeezed, k.replace("_", "")))
        if d <= limit and (best is None or d < best[0]):
            best = (d, k)
    return best[1] if best else None


def resolve_columns(
    columns: Sequence[str],
    known: Sequence[str],
    *,
    required: Iterable[str] = (),
    ignore: Iterable[str] = (),
) -> ColumnPlan:
    """Sort a source's column names against the names gis-sw reads.

    Parameters
    ----------
    columns
        The source's attribute columns (geometry column excluded).
    known
        Every name read from this layer (its spec's columns, and for a disturbance layer
        the proposal attributes).
    required
        Known names without which the layer is not read as intended (``proposal_id``).
    ignore
        Source names never taken for a typo (``fid``, a DXF's ``Layer``).

    Returns
    -------
    ColumnPlan
    """
    known_set = set(known)
    required_set = set(required)
    skipped = {c.lower() for c in ignore}
    rename: dict[str, str] = {}
    notes: list[str] = []
    errors: list[tuple[str, str]] = []
    ambiguous: dict[tuple[str, ...], list[str]] = {}
    exact = {c for c in columns if c in known_set}
    for column in columns:
        if column in exact or column.lower() in skipped:
            continue
        low = column.lower()
        if low in known_set:
            rename[column] = low
            notes.append(f"column {column!r} read as {low!r}.")
            continue
        cuts = _cut_of(column, known_set)
        if len(cuts) == 1:
            rename[column] = cuts[0]
            notes.append(
                f"column {column!r} read as {cuts[0]!r} (a Shapefile keeps "
                f"{SHAPEFILE_NAME_LIMIT} characters of a column name)."
            )
            continue
        if len(cuts) > 1:
            ambiguous.setdefault(tuple(sorted(cuts)), []).append(column)
            continue
        meant = _near(column, known_set)
        if meant is None or meant in exact:
            continue
        if meant in required_set:
            errors.append(
                (
                    (
                        f"required column {meant!r} is missing, and column {column!r} looks "
                        "like a misspelling of it."
                    ),
                    f"rename column {column!r} to {meant!r}.",
                )
            )
        else:
            notes.append(
                f"column {column!r} is not read: did you mean {meant!r}? (it was ignored; "
                f"rename it to {meant!r} to use it)."
            )
    for candidates, sources in ambiguous.items():
        names = ", ".join(repr(c) for c in sources)
        errors.append(
            (
                (
                    f"column{'s' if len(sources) > 1 else ''} {names}: "
                    f"name{'s' if len(sources) > 1 else ''} cut to {SHAPEFILE_NAME_LIMIT} "
                    f"characters (a Shapefile's limit) that could be any of "
                    f"{', '.join(candidates)}."
                ),
                (
                    "save the layer as a GeoPackage or GeoJSON, which keep full column names "
                    "(or rename each column to its full name)."
                ),
            )
        )
    taken: dict[str, list[str]] = {}
    for source, target in rename.items():
        taken.setdefault(target, []).append(source)
    for target, sources in taken.items():
        clash = sorted(sources + ([target] if target in exact else []))
        if len(clash) > 1:
            errors.append(
                (
                    f"columns {', '.join(repr(c) for c in clash)} would all be read as {target!r}.",
                    f"keep one column named {target!r} and rename or delete the others.",
                )
            )
            for source in sources:
                rename.pop(source, None)
    return ColumnPlan(rename=rename, notes=tuple(notes), errors=tuple(errors))
