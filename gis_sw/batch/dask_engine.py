"""Run the batch chunks on a Dask cluster: the same chunk function, the same results.

``--engine dask`` without ``--scheduler`` starts an in-process ``LocalCluster``
(``processes=False``: on one machine, threads beat process workers, see DESIGN.md); with
``--scheduler tcp://host:8786`` the chunks go to a running cluster.  In process, workers
build their chunks from the layers in this process's memory (nothing is serialised).  To
a running cluster, what travels is small: the
:class:`~gis_sw.batch.stream.DiskChunkSource` (paths of the spilled layers and the envelopes
of their row groups, a few kilobytes, scattered once), and per task a chunk id.  Each
worker reads its chunk's parcels and halo from disk, screens them with
:func:`gis_sw.batch.parcels.screen_chunk` and sends the rows back; the part files are
written here, so ``--resume`` works the same with either engine.  On a real cluster the
spill folder (inside ``--out``) must be on a file system every worker reads.

The ruleset travels as its parsed TOML table and is rebuilt on the worker (a
:class:`~gis_sw.ruleset.Ruleset` holds read-only mappings that do not pickle).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pandas as pd

from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.parcels import screen_chunk
from gis_sw.batch.stream import DiskChunkSource
from gis_sw.ruleset import Ruleset, parse_ruleset

if TYPE_CHECKING:
    from gis_sw.batch.run import RunOptions

log = logging.getLogger(__name__)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def ruleset_payload(ruleset: Ruleset) -> tuple[str, str]:
    """Return the ruleset as (TOML-like JSON text, source), cheap to ship and hashable."""
    import json

    return json.dumps(_plain(ruleset.raw), sort_keys=True), ruleset.source


@lru_cache(maxsize=4)
def _ruleset_from(payload: tuple[str, str]) -> Ruleset:
    import json

    text, source = payload
    return parse_ruleset(json.loads(text), source=source)


def screen_chunk_task(
    source: DiskChunkSource, chunk_id: int, payload: tuple[str, str], quick: bool
) -> pd.DataFrame:
    """Read one chunk from disk and screen it (what a Dask worker runs)."""
    return screen_chunk(source.chunk(chunk_id), _ruleset_from(payload), quick=quick)


_IN_PROCESS: dict[str, ChunkSource | DiskChunkSource] = {}
"""Sources of the runs on an in-process cluster, by token: its workers share this memory."""


def screen_in_process_task(
    token: str, chunk_id: int, payload: tuple[str, str], quick: bool
) -> pd.DataFrame:
    """Build one chunk from a source of this process and screen it (in-process workers)."""
    return screen_chunk(_IN_PROCESS[token].chunk(chunk_id), _ruleset_from(payload), quick=quick)


def _client(options: RunOptions) -> tuple[Any, Any]:
    from dask.distributed import Client, LocalCluster

    # importing distributed sets its logger to INFO: keep its start-up chatter off stderr
    logging.getLogger("distributed").setLevel(logging.WARNING)
    if options.scheduler:
        return Client(options.scheduler), None
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=max(1, options.workers),
        processes=False,
        dashboard_address=None,
        silence_logs=logging.WARNING,
    )
    return Client(cluster), cluster


def run_on_dask(
    source: ChunkSource | DiskChunkSource,
    todo: list[int],
    ruleset: Ruleset,
    finish: Callable[[int, pd.DataFrame], None],
    *,
    options: RunOptions,
) -> None:
    """Screen the chunks ``todo`` on Dask, calling ``finish`` as each completes.

    At most ``4 * workers`` chunks are submitted ahead, so the client's memory stays
    bounded by the chunk size.  On the in-process cluster (no ``scheduler``) the workers
    share this process's memory: a task is a token and a chunk id, and nothing is
    serialised.  A running scheduler gets the :class:`DiskChunkSource` once (scattered)
    and its workers read their chunks from disk.

    Raises
    ------
    TypeError
        If a scheduler is given with a source that is not on disk.
    """
    from dask.distributed import as_completed

    if options.scheduler and not isinstance(source, DiskChunkSource):
        raise TypeError("a Dask scheduler needs chunks on disk (DiskChunkSource)")
    payload = ruleset_payload(ruleset)
    client, cluster = _client(options)
    token = f"{id(source):x}-{len(_IN_PROCESS)}"
    try:
        task: Callable[..., pd.DataFrame]
        shared: Any
        if cluster is not None:
            _IN_PROCESS[token] = source
            task, shared = screen_in_process_task, token
        else:
            task, shared = screen_chunk_task, client.scatter(source, broadcast=True)
        window = 4 * max(1, options.workers)
        queue = list(reversed(todo))
        futures: dict[Any, int] = {}

        def submit() -> Any:
            chunk_id = queue.pop()
            future = client.submit(task, shared, chunk_id, payload, options.quick, pure=False)
            futures[future] = chunk_id
            return future

        running = as_completed([submit() for _ in range(min(window, len(queue)))])
        for future in running:
            chunk_id = futures.pop(future)
            finish(chunk_id, future.result())
            future.release()
            if queue:
                running.add(submit())
    finally:
        _IN_PROCESS.pop(token, None)
        client.close()
        if cluster is not None:
            cluster.close()
