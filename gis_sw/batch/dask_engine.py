"""Run the batch chunks on a Dask cluster: the same chunk function, the same results.

``--engine dask`` without ``--scheduler`` starts an in-process ``LocalCluster``
(``processes=False``: on one machine, threads beat process workers, see DESIGN.md); with
``--scheduler tcp://host:8786`` the chunks go to a running cluster.  Chunk inputs are built
here and shipped to the workers; each worker screens its chunk with
:func:`gis_sw.batch.parcels.screen_chunk` and sends the rows back, and the part files are
written here, so ``--resume`` works the same with either engine.

The ruleset travels as its parsed TOML table and is rebuilt on the worker (a
:class:`~gis_sw.ruleset.Ruleset` holds read-only mappings that do not pickle).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pandas as pd

from gis_sw.batch.chunks import Chunk, ChunkSource
from gis_sw.batch.parcels import screen_chunk
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
    """The ruleset as (TOML-like JSON text, source), cheap to ship and hashable."""
    import json

    return json.dumps(_plain(ruleset.raw), sort_keys=True), ruleset.source


@lru_cache(maxsize=4)
def _ruleset_from(payload: tuple[str, str]) -> Ruleset:
    import json

    text, source = payload
    return parse_ruleset(json.loads(text), source=source)


def screen_chunk_task(chunk: Chunk, payload: tuple[str, str], quick: bool) -> pd.DataFrame:
    """What a Dask worker runs for one chunk."""
    return screen_chunk(chunk, _ruleset_from(payload), quick=quick)


def run_on_dask(
    source: ChunkSource,
    todo: list[int],
    ruleset: Ruleset,
    finish: Callable[[int, pd.DataFrame], None],
    *,
    options: RunOptions,
) -> None:
    """Screen the chunks ``todo`` on Dask, calling ``finish`` as each completes.

    At most ``4 * workers`` chunks are submitted ahead, so the client's memory stays
    bounded by the chunk size.
    """
    from dask.distributed import Client, LocalCluster, as_completed

    # importing distributed sets its logger to INFO: keep its start-up chatter off stderr
    logging.getLogger("distributed").setLevel(logging.WARNING)

    payload = ruleset_payload(ruleset)
    cluster = None
    if options.scheduler:
        client = Client(options.scheduler)
    else:
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=max(1, options.workers),
            processes=False,
            dashboard_address=None,
            silence_logs=logging.WARNING,
        )
        client = Client(cluster)
    try:
        window = 4 * max(1, options.workers)
        queue = list(reversed(todo))
        futures: dict[Any, int] = {}

        def submit() -> Any:
            chunk_id = queue.pop()
            future = client.submit(
                screen_chunk_task, source.chunk(chunk_id), payload, options.quick, pure=False
            )
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
        client.close()
        if cluster is not None:
            cluster.close()
