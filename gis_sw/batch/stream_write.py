"""Write a streamed batch run's outputs one chunk at a time, never the whole town at once.

The same files as :func:`gis_sw.batch.write.write_batch_outputs`, from the part files and
the spilled parcels, read back chunk by chunk:

* ``parcels.parquet`` (GeoParquet 1.0, WKB) and ``parcels.gpkg``: the same columns and
  figures, one row group (GeoPackage: one Arrow batch of one write) per chunk, so the rows
  are in **chunk order** (along the Hilbert curve), not in the parcel layer's order: sort
  by ``row`` for that.  Spatially ordered row groups are what a reader filtering by area
  wants;
* ``summary.csv``: the per-chunk tables of :func:`gis_sw.batch.write.summary_table`
  summed, equal to the whole run's;
* ``problems.csv``: as the whole run's;
* ``overview.png``: drawn chunk by chunk on a raster
  (:class:`gis_sw.outputs.maps.overview.OverviewCanvas`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import shapely

from gis_sw.batch.gpkg_out import gpkg_fields, gpkg_geometry, write_parcels_gpkg
from gis_sw.batch.resume import part_name
from gis_sw.batch.stream_run import StreamedRun
from gis_sw.batch.write import (
    SUMMARY_COLUMNS,
    missing_layers,
    planned_batch_outputs,
    summary_table,
)
from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import atomic_path, check_all_writable, output_group
from gis_sw.outputs.csvcells import CSV_ENCODING, csv_frame
from gis_sw.ruleset import Ruleset


def _geo_metadata(crs: Any, types: set[str], bounds: list[float]) -> bytes:
    column: dict[str, Any] = {"encoding": "WKB", "geometry_types": sorted(types)}
    if crs is not None:
        column["crs"] = crs.to_json_dict()
    if all(np.isfinite(bounds)):
        column["bbox"] = bounds
    meta = {
        "version": "1.0.0",
        "primary_column": "geometry",
        "columns": {"geometry": column},
        "creator": {"library": "gis_sw"},
    }
    return json.dumps(meta).encode()


@dataclass(slots=True)
class _ParquetSink:
    """Row groups appended to one GeoParquet file, its ``geo`` metadata added at the end."""

    path: Path
    crs: Any
    writer: pq.ParquetWriter | None = None
    schema: pa.Schema | None = None
    types: set[str] = field(default_factory=set)
    bounds: list[float] = field(default_factory=lambda: [np.inf, np.inf, -np.inf, -np.inf])

    def add(self, rows: pa.Table, geoms: np.ndarray, wkb: pa.Array | None = None) -> None:
        """Append one row group: ``rows`` and their geometries (``wkb``: already encoded)."""
        present = geoms[~shapely.is_missing(geoms)]
        self.types.update(str(t) for t in np.unique(shapely.get_type_id(present)).tolist())
        if len(present):
            minx, miny, maxx, maxy = shapely.total_bounds(present)
            self.bounds = [
                min(self.bounds[0], minx),
                min(self.bounds[1], miny),
                max(self.bounds[2], maxx),
                max(self.bounds[3], maxy),
            ]
        if wkb is None:
            wkb = pa.array(shapely.to_wkb(geoms), pa.binary())
        table = rows.append_column("geometry", wkb.cast(pa.binary()))
        if self.schema is None:
            fields = [
                pa.field(f.name, pa.string()) if pa.types.is_null(f.type) else f
                for f in table.schema
            ]
            self.schema = pa.schema(fields, metadata=table.schema.metadata)
            self.writer = pq.ParquetWriter(str(self.path), self.schema)
        assert self.writer is not None
        self.writer.write_table(table.cast(self.schema), row_group_size=max(1, len(table)))

    def close(self) -> None:
        if self.writer is None:
            return
        names = {0: "Point", 1: "LineString", 3: "Polygon", 4: "MultiPoint", 6: "MultiPolygon"}
        types = {names.get(int(t), "Unknown") for t in self.types}
        self.writer.add_key_value_metadata({"geo": _geo_metadata(self.crs, types, self.bounds)})
        self.writer.close()


def _chunk_table(run: StreamedRun, chunk_id: int) -> pa.Table:
    """One chunk's part, as Arrow (checked to hold the chunk's rows)."""
    path = run.store.folder / part_name(chunk_id)
    if not path.exists():
        raise OutputError(
            f"part {path} is missing: the run did not finish. Fix: rerun with --resume."
        )
    table = pq.read_table(path)
    if not np.array_equal(table.column("row").to_numpy(), run.town.plan.rows(chunk_id)):
        raise OutputError(
            f"part {path} changed while the run was finishing. Fix: rerun with --resume."
        )
    return table


def write_streamed_outputs(
    out_dir: Path,
    run: StreamedRun,
    ruleset: Ruleset,
    *,
    overwrite: bool,
    formats: tuple[str, ...] = ("parquet", "gpkg"),
    overview: bool = True,
) -> tuple[dict[str, Path], pd.DataFrame]:
    """Write every output of a streamed run into ``out_dir``, a chunk at a time.

    Returns
    -------
    tuple
        Name to path of what was written, and the summary table.

    Raises
    ------
    OutputError
        If an output exists without ``overwrite``, cannot be written, or a part is
        missing or changed.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = planned_batch_outputs(findings=False, formats=formats, overview=overview)
    check_all_writable([out_dir / name for name in names], overwrite=overwrite)
    with output_group():
        return _write_set(
            out_dir, run, ruleset, overwrite=overwrite, formats=formats, overview=overview
        )


def _canvas(run: StreamedRun) -> Any:
    from gis_sw.outputs.maps.overview import OverviewCanvas

    plan = run.town.plan
    halo = plan.halo_ft
    if not np.isfinite(plan.bounds).any():
        return None
    bounds = (
        float(np.nanmin(plan.bounds[:, 0]) + halo),
        float(np.nanmin(plan.bounds[:, 1]) + halo),
        float(np.nanmax(plan.bounds[:, 2]) - halo),
        float(np.nanmax(plan.bounds[:, 3]) - halo),
    )
    return OverviewCanvas(bounds, crs=run.town.layers.crs, by_class=True)


def _write_set(
    out_dir: Path,
    run: StreamedRun,
    ruleset: Ruleset,
    *,
    overwrite: bool,
    formats: tuple[str, ...],
    overview: bool,
) -> tuple[dict[str, Path], pd.DataFrame]:
    crs = run.town.layers.crs
    missing = missing_layers(run.town.layers)
    written: dict[str, Path] = {}
    counts = _Counts(missing)
    canvas = _canvas(run) if overview else None
    with ExitStack() as stack:
        tmp = {
            fmt: stack.enter_context(atomic_path(out_dir / f"parcels.{fmt}", overwrite=overwrite))
            for fmt in formats
        }
        sink = _ParquetSink(tmp["parquet"], crs) if "parquet" in tmp else None

        def chunks() -> Iterator[tuple[pa.Table, np.ndarray, pa.Array]]:
            """Each chunk's rows, geometries and WKB, after the parquet, summary and map."""
            for chunk_id in range(run.town.plan.n_chunks):
                table = _chunk_table(run, chunk_id)
                rows = table.to_pandas()
                wkb = run.town.source.parcel_wkb(chunk_id)
                geoms = shapely.from_wkb(wkb.to_numpy(zero_copy_only=False))
                counts.add(rows)
                if sink is not None:
                    sink.add(table, geoms, wkb)
                if canvas is not None:
                    frame = gpd.GeoDataFrame(rows, geometry=gpd.GeoSeries(geoms, crs=crs), crs=crs)
                    canvas.add(frame)
                yield table, geoms, wkb

        if "gpkg" in tmp:
            _write_gpkg(tmp["gpkg"], chunks(), crs)
        else:
            for _ in chunks():
                pass
        if sink is not None:
            sink.close()
    written.update({f"parcels.{fmt}": out_dir / f"parcels.{fmt}" for fmt in formats})
    with atomic_path(out_dir / "problems.csv", overwrite=overwrite) as path:
        csv_frame(run.town.prepared.problems).to_csv(path, index=False, encoding=CSV_ENCODING)
    written["problems.csv"] = out_dir / "problems.csv"
    summary = counts.total()
    with atomic_path(out_dir / "summary.csv", overwrite=overwrite) as path:
        csv_frame(summary).to_csv(path, index=False, encoding=CSV_ENCODING)
    written["summary.csv"] = out_dir / "summary.csv"
    if canvas is not None:
        written["overview.png"] = canvas.write(
            out_dir / "overview.png", ruleset=ruleset, overwrite=overwrite
        )
    return written, summary


def _write_gpkg(
    path: Path, chunks: Iterator[tuple[pa.Table, np.ndarray, pa.Array]], crs: Any
) -> None:
    """Write every chunk to ``parcels.gpkg`` in one stream of Arrow batches.

    One layer creation and one R-tree build at the end (not an append, and an index
    update, per chunk).  The layer takes the first chunk's geometry type and every
    chunk's columns the first's types, and a chunk mixing single and multi parts has its
    single parts made multi, as appending chunk by chunk did.
    """
    first = next(chunks, None)
    if first is None:
        return
    wkb, kind = gpkg_geometry(first[1], first[2])
    head = gpkg_fields(first[0].replace_schema_metadata(None)).append_column("geometry", wkb)
    schema = head.schema

    def batches() -> Iterator[pa.RecordBatch]:
        yield from head.to_batches()
        for table, geoms, chunk_wkb in chunks:
            wkb, _ = gpkg_geometry(geoms, chunk_wkb)
            rest = gpkg_fields(table.replace_schema_metadata(None)).append_column("geometry", wkb)
            yield from rest.cast(schema).to_batches()

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    write_parcels_gpkg(path, reader, geometry_type=kind, crs=crs)


SUMMARY_BATCH_ROWS = 200_000
"""Rows counted at a time for ``summary.csv`` (a table per batch of chunks, not per chunk:
:func:`gis_sw.batch.write.summary_table` costs about 7 ms CPU a call, whatever the rows:
7 s of a 1,000-chunk write when called per chunk)."""

SUMMARY_INPUTS = ("zone_main", "result", "screen", "zones", "area_sqft")
"""The columns :func:`gis_sw.batch.write.summary_table` reads."""


@dataclass(slots=True)
class _Counts:
    """The summary table of every chunk added, counted a batch of chunks at a time."""

    missing: tuple[str, ...]
    pending: list[pd.DataFrame] = field(default_factory=list)
    rows: int = 0
    tables: list[pd.DataFrame] = field(default_factory=list)

    def add(self, rows: pd.DataFrame) -> None:
        self.pending.append(rows[list(SUMMARY_INPUTS)])
        self.rows += len(rows)
        if self.rows >= SUMMARY_BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            rows = pd.concat(self.pending, ignore_index=True)
            self.tables.append(summary_table(rows, None, None, missing=self.missing))
        self.pending, self.rows = [], 0

    def total(self) -> pd.DataFrame:
        """Return the summary table of every row added."""
        self._flush()
        return _sum(self.tables)


def _sum(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Add up per-chunk summary tables into the table of the whole run."""
    keys = [c for c in SUMMARY_COLUMNS if c != "count"]
    if not tables:
        return pd.DataFrame({c: [] for c in SUMMARY_COLUMNS})
    both = pd.concat(tables, ignore_index=True)
    total = both.groupby(keys, sort=False, dropna=False)["count"].sum().reset_index()
    total = total[list(SUMMARY_COLUMNS)]
    return total.sort_values(keys, kind="stable").reset_index(drop=True)
