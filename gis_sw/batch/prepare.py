"""Check a parcel layer before a batch run: report problems, never crash on them.

A townwide layer always has a few bad rows.  Instead of stopping, the batch run

* repairs invalid geometries with ``make_valid`` (keeping the polygonal part) and flags them,
* keeps every row of a duplicated ``parcel_id`` (each keeps its own figures) and flags them,
* screens a parcel with no geometry as ``review``,
* screens identical geometries once (a condominium stack: one lot drawn three times with
  three ids): the first row of each group stands for all, lists every id in
  ``parcel_ids``, and the other rows are left out of the chunks (so the lot is counted
  once in the summary),

and lists every such row in ``problems.csv`` (row, parcel id, problem, value, fix).
"""

from __future__ import annotations

from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import numpy.typing as npt
import pandas as pd
import shapely

from gis_sw.layers.geoms import unlocated

PROBLEM_COLUMNS: tuple[str, ...] = ("row", "parcel_id", "problem", "value", "fix")


@dataclass(frozen=True, slots=True, eq=False)
class PreparedParcels:
    """Parcels ready to chunk, plus what was wrong with them.

    Attributes
    ----------
    parcels
        ``parcel_id``, ``parcel_ids`` (every id of the rows sharing this row's geometry,
        ``;``-joined, in row order; the row's own id for most), ``geometry``,
        ``_repaired``, ``_duplicate`` and ``_same_as`` (the row standing for this one's
        identical geometry, or -1) (RangeIndex = row).
    problems
        One row per problem, columns :data:`PROBLEM_COLUMNS`.
    """

    parcels: gpd.GeoDataFrame
    problems: pd.DataFrame

    @property
    def screened(self) -> npt.NDArray[np.bool_]:
        """Rows screened (every row but the repeats of an identical geometry)."""
        return np.asarray(self.parcels["_same_as"].to_numpy() < 0, dtype=bool)

    def summary(self) -> str:
        """One line for the CLI (empty when there were no problems)."""
        if len(self.problems) == 0:
            return ""
        counts = self.problems["problem"].value_counts().sort_index()
        parts = []
        for problem, count in counts.items():
            ids = self.problems.loc[self.problems["problem"] == problem, "parcel_id"]
            shown = ", ".join(str(i) for i in ids.head(5))
            more = f" and {count - 5} more" if count > 5 else ""
            parts.append(f"{count} parcel(s) with {problem} ({shown}{more})")
        return "; ".join(parts) + " (see problems.csv)"


def _polygonal(geom: shapely.Geometry) -> shapely.Geometry:
    parts = [p for p in shapely.get_parts(geom) if shapely.get_type_id(p) in (3, 6)]
    if not parts:
        return shapely.Polygon()
    merged = shapely.union_all(parts)
    return merged


def prepare_parcels(parcels: gpd.GeoDataFrame) -> PreparedParcels:
    """Repair and flag a parcel layer (``parcel_id`` and geometry columns needed).

    Raises
    ------
    KeyError
        If there is no ``parcel_id`` column (the layer readers guarantee one).
    """
    frame = gpd.GeoDataFrame(
        {"parcel_id": parcels["parcel_id"].to_numpy()},
        geometry=np.asarray(parcels.geometry.to_numpy(), dtype=object),
        crs=parcels.crs,
    )
    geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)
    ids = frame["parcel_id"]
    problems: list[dict[str, object]] = []
    missing = unlocated(geoms)
    invalid = ~missing & ~shapely.is_valid(geoms)
    repaired = np.zeros(len(frame), dtype=bool)
    if invalid.any():
        reasons = shapely.is_valid_reason(geoms[invalid])
        fixed = shapely.make_valid(geoms[invalid])
        # Rare path: only the invalid rows are visited.
        fixed = np.asarray([_polygonal(g) for g in fixed], dtype=object)
        geoms[invalid] = fixed
        repaired[invalid] = True
        for row, reason in zip(np.flatnonzero(invalid), reasons, strict=True):
            problems.append(
                {
                    "row": int(row),
                    "parcel_id": ids.iloc[row],
                    "problem": "invalid geometry",
                    "value": str(reason),
                    "fix": "repaired with make_valid; correct the parcel in the source layer",
                }
            )
    for row in np.flatnonzero(missing):
        problems.append(
            {
                "row": int(row),
                "parcel_id": ids.iloc[row],
                "problem": "no geometry",
                "value": "empty" if geoms[row] is not None else "null",
                "fix": "draw the parcel or remove the row; it is screened as review",
            }
        )
    no_id = ids.isna().to_numpy()
    for row in np.flatnonzero(no_id):
        problems.append(
            {
                "row": int(row),
                "parcel_id": None,
                "problem": "no parcel_id",
                "value": "null",
                "fix": "give the parcel an id; rows are told apart by 'row'",
            }
        )
    duplicate = ids.duplicated(keep=False).to_numpy() & ~no_id
    for row in np.flatnonzero(duplicate):
        problems.append(
            {
                "row": int(row),
                "parcel_id": ids.iloc[row],
                "problem": "duplicate parcel_id",
                "value": str(ids.iloc[row]),
                "fix": "give each parcel its own id; every row is screened and kept",
            }
        )
    same_as, listed = _same_geometry(geoms, ids, missing)
    for row in np.flatnonzero(same_as >= 0):
        first = int(same_as[row])
        problems.append(
            {
                "row": int(row),
                "parcel_id": ids.iloc[row],
                "problem": "same geometry as another parcel",
                "value": f"row {first}, parcel_id {ids.iloc[first]}",
                "fix": (
                    f"screened once with {ids.iloc[first]} (all ids in parcel_ids); merge "
                    "the rows in the source layer if they are one lot"
                ),
            }
        )
    frame = frame.set_geometry(gpd.GeoSeries(geoms, crs=parcels.crs))
    frame.insert(1, "parcel_ids", listed)
    frame["_repaired"] = repaired
    frame["_duplicate"] = duplicate
    frame["_same_as"] = same_as
    table = pd.DataFrame(problems, columns=list(PROBLEM_COLUMNS))
    if len(table):
        table = table.sort_values(["row", "problem"], kind="stable").reset_index(drop=True)
    return PreparedParcels(parcels=frame, problems=table)


def _same_geometry(
    geoms: npt.NDArray[np.object_], ids: pd.Series, missing: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]:
    """Return each row's first row of identical geometry, and each group's ids.

    The first row is -1 for the row itself or none; the ids of each group are
    ``;``-joined, distinct, in row order, on every row of the group.

    Identical means the same normalised coordinates (``shapely.normalize``: ring start and
    orientation do not matter); rows without a geometry are never grouped.
    """
    n = len(geoms)
    same_as = np.full(n, -1, dtype=np.int64)
    text = ids.astype(object).where(ids.notna(), "").astype(str).to_numpy(dtype=object)
    listed = text.copy()
    present = np.flatnonzero(~missing)
    if len(present) < 2:
        return same_as, listed
    # identical geometries share their envelope and vertex count: only rows that share
    # both with another row are normalised and compared (most towns have few or none)
    envelope = pd.DataFrame(shapely.bounds(geoms[present]), index=present)
    envelope["n"] = shapely.get_num_coordinates(geoms[present])
    present = present[envelope.duplicated(keep=False).to_numpy()]
    if len(present) < 2:
        return same_as, listed
    keys = pd.Series(shapely.to_wkb(shapely.normalize(geoms[present])), index=present)
    repeated = keys.duplicated(keep=False).to_numpy()
    if not repeated.any():
        return same_as, listed
    groups = keys[repeated].groupby(keys[repeated], sort=False).groups
    for members in groups.values():  # rare path: one step per group of identical lots
        rows = np.sort(np.asarray(members, dtype=np.int64))
        same_as[rows[1:]] = rows[0]
        listed[rows] = ";".join(dict.fromkeys(t for t in text[rows] if t))
    return same_as, listed
