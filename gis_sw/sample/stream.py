"""Write a sample town as GeoParquet block by block, so memory is set by the block, not the town.

The layers that stand on lots (:data:`gis_sw.sample.town.LOT_LAYERS`: parcels, buildings,
wells, septic fields, land cover, pavement) and those drawn along the streams
(:data:`gis_sw.sample.town.WATER_LAYERS`) grow with the town: 5,000,000 parcels held whole
would take about 16 GB.  :func:`stream_town` makes them a block of whole band cycles at a time
(south to north, :data:`BLOCK_LOTS` lots or so, with the streams of those bands) and appends
each block to one GeoParquet file per layer as row groups (``pyarrow.parquet.ParquetWriter``,
by way of a spill file: see :class:`GeoParquetBlocks`).  Zoning (a polygon per band), soils
(500 ft squares) and the rasters (at most 4,000 cells a side) are made whole, as
:func:`gis_sw.sample.build_town` makes them.

The files hold the same rows, in the same order, with the same schema, CRS and GeoParquet
``geo`` metadata (its ``bbox`` and ``geometry_types`` are those of the whole layer, merged
over the blocks) as :func:`gis_sw.sample.write.write_town` writes for the town built whole;
only the row-group boundaries differ (one or more per block).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from geopandas.io.arrow import _geopandas_to_arrow
from pyproj import CRS

from gis_sw.outputs.atomic import atomic_path, check_writable
from gis_sw.sample.cases import build_cases
from gis_sw.sample.layout import (
    BAND_CYCLE,
    WORKING_CRS,
    Layout,
    band_parcel_count,
    pavement_polygons,
    plan_layout,
)
from gis_sw.sample.rasters import make_rasters
from gis_sw.sample.town import (
    CASE_LOTS,
    LAYER_ORDER,
    LOT_LAYERS,
    WATER_LAYERS,
    SampleTown,
    area_vectors,
    lot_vectors,
    name_draws,
    town_lots,
    water_vectors,
)
from gis_sw.sample.water import Streams, make_streams
from gis_sw.sample.write import (
    TownSummary,
    manifest_text,
    town_targets,
    write_parquet,
    write_proposals,
    write_rasters_and_manifest,
)

logger = logging.getLogger(__name__)

BLOCK_LOTS = 200_000
"""Lots per block, rounded down to whole band cycles (at least one cycle per block)."""
COMPRESSION = "zstd"
"""As :func:`gis_sw.sample.write.write_parquet` writes a whole layer."""
SPILL_COMPRESSION = "lz4"
"""Of the Arrow IPC stream a layer's blocks wait in until the layer's bbox is known."""


class GeoParquetBlocks:
    """One GeoParquet file written a GeoDataFrame block at a time.

    A Parquet file's Arrow schema, ``geo`` metadata included, is fixed when its writer opens,
    but the layer's bounding box is known only after the last block.  So each block, encoded
    as the file will hold it (WKB), is spilled to an Arrow IPC stream beside the file
    (lz4-compressed); :meth:`close` merges the blocks' ``geo`` metadata (bbox, geometry
    types) and copies the spilled batches, one at a time, into the GeoParquet file.  The
    schema is the first block's; later blocks are cast to it (a block with no features of a
    layer has untyped empty columns).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = 0
        self._spill = path.with_name(path.name + ".arrows")
        self._sink: pa.OSFile | None = None
        self._ipc: pa.ipc.RecordBatchStreamWriter | None = None
        self._schema: pa.Schema | None = None
        self._geo: dict[str, Any] = {}

    def write(self, frame: gpd.GeoDataFrame) -> None:
        """Encode ``frame`` and spill it as the next block."""
        table = _geopandas_to_arrow(frame, index=False)
        geo = json.loads(table.schema.metadata[b"geo"])
        if self._ipc is None:
            self._schema = table.schema
            self._geo = geo
            self._sink = pa.OSFile(str(self._spill), "wb")
            options = pa.ipc.IpcWriteOptions(compression=SPILL_COMPRESSION)
            self._ipc = pa.ipc.new_stream(self._sink, self._schema, options=options)
        else:
            table = table.cast(self._schema)
            _merge_geo(self._geo, geo)
        if table.num_rows:  # no empty row group for a block without such features
            self._ipc.write_table(table)
        self.rows += table.num_rows

    def close(self) -> None:
        """Write the GeoParquet file from the spilled blocks (nothing if none was written)."""
        if self._ipc is None or self._schema is None:
            return
        self._ipc.close()
        self._close_sink()
        metadata = dict(self._schema.metadata or {})
        metadata[b"geo"] = json.dumps(self._geo).encode("utf-8")
        schema = self._schema.with_metadata(metadata)
        with (
            pa.OSFile(str(self._spill), "rb") as source,
            pa.ipc.open_stream(source) as blocks,
            pq.ParquetWriter(self.path, schema, compression=COMPRESSION) as writer,
        ):
            for batch in blocks:
                writer.write_batch(batch)
        self.discard()

    def discard(self) -> None:
        """Remove the spill file (after :meth:`close`, or when the writing failed)."""
        self._close_sink()
        self._spill.unlink(missing_ok=True)

    def _close_sink(self) -> None:
        if self._sink is not None and not self._sink.closed:
            self._sink.close()
        self._sink = None


def _merge_geo(into: dict[str, Any], block: dict[str, Any]) -> None:
    """Grow ``into``'s per-column bbox and geometry types by a block's (GeoParquet 1.x)."""
    for name, column in block["columns"].items():
        whole = into["columns"][name]
        whole["geometry_types"] = sorted(
            set(whole["geometry_types"]) | set(column["geometry_types"])
        )
        if "bbox" not in column:
            continue
        if "bbox" not in whole:
            whole["bbox"] = column["bbox"]
            continue
        low = np.minimum(whole["bbox"][:2], column["bbox"][:2])
        high = np.maximum(whole["bbox"][2:], column["bbox"][2:])
        whole["bbox"] = [float(v) for v in (*low, *high)]


def lot_blocks(layout: Layout, block_lots: int = BLOCK_LOTS) -> Iterator[range]:
    """Bands of each block: whole cycles of :data:`BAND_CYCLE`, about ``block_lots`` lots."""
    per_cycle = sum(band_parcel_count(spec, layout.columns) for spec in BAND_CYCLE)
    step = len(BAND_CYCLE) * max(1, block_lots // per_cycle)
    count = len(layout.bands)
    for start in range(0, count, step):
        yield range(start, min(start + step, count))


def stream_town(
    out_dir: str | Path,
    *,
    parcels: int,
    seed: int,
    overwrite: bool = False,
    cell_size_ft: float | None = None,
    proposals: bool | None = None,
    command: str = "",
    block_lots: int = BLOCK_LOTS,
) -> TownSummary:
    """Generate a town and write it as GeoParquet by blocks (see the module docstring).

    Parameters are those of :func:`gis_sw.sample.generate_town`, and ``block_lots``.

    Raises
    ------
    ValueError
        For fewer than 1 parcel.
    KeyError
        If ``proposals`` is True but the town is too small for the cases.
    OutputError
        If a file exists without ``overwrite``, or cannot be written.
    """
    crs = CRS.from_user_input(WORKING_CRS)
    plan = plan_layout(parcels=parcels)
    streams = make_streams(plan, seed)
    out = Path(out_dir)
    for target in town_targets(out, LAYER_ORDER, fmt="parquet"):  # refuse before writing anything
        check_writable(target, overwrite=overwrite)
    area = area_vectors(plan, streams, seed, crs, water=False)
    counts = {kind: len(frame) for kind, frame in area.items()}
    for kind, frame in area.items():
        write_parquet(frame, out / f"{kind}.parquet", overwrite=overwrite)
    del area
    head = _write_blocks(out, plan, streams, seed, crs, overwrite=overwrite, block_lots=block_lots)
    counts |= {kind: sink.rows for kind, sink in head.pop("sinks").items()}
    rasters = make_rasters(plan, streams, seed, crs=crs, cell_size_ft=cell_size_ft)
    features = {kind: counts[kind] for kind in LAYER_ORDER}
    text = manifest_text(
        parcels=parcels,
        seed=seed,
        features=features,
        rasters=rasters,
        fmt="parquet",
        command=command or "gis_sw.sample.generate_town",
    )
    write_rasters_and_manifest(out, rasters, text, overwrite=overwrite)
    files = town_targets(out, LAYER_ORDER, fmt="parquet")
    lots = head["lots"]
    fits = set(CASE_LOTS.values()) <= set(lots["parcel_id"])
    if proposals or (proposals is None and fits):
        # the cases stand on lots of the first cycle and read only the water layers near
        # them and the rasters: the first block (whole cycles) gives them as the town does
        town = SampleTown(
            parcels,
            seed,
            dataclasses.replace(plan, lots=lots),
            streams,
            head["water"],
            rasters,
            crs,
        )
        files += write_proposals(build_cases(town), out, overwrite=overwrite)
    dem = rasters["dem"]
    logger.info("streamed sample town: %d parcels, seed %d", parcels, seed)
    return TownSummary(
        parcels=parcels,
        seed=seed,
        width_ft=plan.width_ft,
        height_ft=plan.height_ft,
        raster_shape=dem.shape,
        cell_size_ft=float(dem.cell_size[0]),
        features=features,
        files=tuple(files),
    )


def _write_blocks(
    out: Path,
    plan: Layout,
    streams: Streams,
    seed: int,
    crs: CRS,
    *,
    overwrite: bool,
    block_lots: int,
) -> dict[str, Any]:
    """Write the lot and water layers block by block.

    Returns the sinks (row counts), and the first block's lots and water frames.
    """
    parcels = int(plan.bands["lots"].sum())
    names = name_draws(seed, parcels)
    roads = pavement_polygons(plan)
    no_roads = np.empty(0, dtype=object)
    head: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        sinks: dict[str, GeoParquetBlocks] = {}
        for kind in (*LOT_LAYERS, *WATER_LAYERS):
            tmp = stack.enter_context(atomic_path(out / f"{kind}.parquet", overwrite=overwrite))
            sinks[kind] = GeoParquetBlocks(tmp)
            stack.callback(sinks[kind].discard)
        for bands in lot_blocks(plan, block_lots):
            lots = town_lots(plan, bands, seed, parcels=parcels)
            start = int(plan.bands["first_lot"].iloc[bands.start])
            block = slice(start, start + len(lots))
            vectors = lot_vectors(
                lots,
                plan,
                (names[0][block], names[1][block]),
                crs,
                roads=roads if bands.start == 0 else no_roads,
            )
            first, stop = np.searchsorted(streams.bands, [bands.start, bands.stop])
            water = water_vectors(plan, streams, seed, crs, which=range(first, stop))
            for kind, frame in (vectors | water).items():
                sinks[kind].write(frame)
            head.setdefault("lots", lots)
            head.setdefault("water", water)
            logger.debug("block of bands %d-%d: %d lots", bands.start, bands.stop - 1, len(lots))
        for sink in sinks.values():
            sink.close()
    head["sinks"] = sinks
    return head
