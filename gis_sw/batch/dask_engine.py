"""Run the batch chunks on a Dask cluster: the same chunk function, the same results.

``--engine dask`` without ``--scheduler`` starts a ``LocalCluster`` of ``--workers`` worker
processes of one thread each.  On Linux they are *forked* from this process once the chunk
source is built (Dask's ``multiprocessing-method: fork``), so like the local engine's
workers (:mod:`gis_sw.batch.forked`) they inherit the layers, their STRtrees and the plan:
a task is a token and a chunk id, nothing is serialised on the way in, and each worker
sends back its chunk's rows (figures, no geometry).  Where there is no fork (macOS,
Windows) the cluster runs in this process, ``--workers`` threads sharing its memory.

Measured at 100,000 parcels (docs/batch.md): forked workers start in 0.2 s instead of about
4.5 s for spawned ones (start plus importing gis_sw in each), and cost nothing to feed,
where shipping the chunk source once costs 1.5 s of pickling here and 1.1 s of unpickling
in each worker; reading the chunks back from spill files costs about 0.15 s more CPU than
cutting them from memory (each chunk's features are one row group of each spilled layer).
The worker's statistical profiler, the 20 ms event-loop tick and the fast system and memory
monitors cost about 1.5 s of CPU per run on top of the 15 s of screening:
they are slowed or off for the local cluster (:data:`QUIET`), and so are work stealing and
the workers' memory limit (:data:`LOCAL_WORKER_OPTIONS`).  The scheduler and its client
start before the chunk source is built (:func:`start_local`); only the workers wait for
it, and each runs a no-op task before the first chunk.

To a running cluster (``--scheduler tcp://host:8786``), what travels is small: the
:class:`~gis_sw.batch.stream.DiskChunkSource` (paths of the spilled layers and the envelopes
of their row groups and the plan's parcel order, 8 bytes a parcel: 0.8 MB at 100,000
parcels, scattered once), and per task a chunk id.  Each
worker reads its chunk's parcels and halo from disk, screens them with
:func:`gis_sw.batch.parcels.screen_chunk` and sends the rows back; the part files are
written here, so ``--resume`` works the same with either engine.  On a real cluster the
spill folder (inside ``--out``) must be on a file system every worker reads.

The ruleset travels as its parsed TOML table and is rebuilt on the worker (a
:class:`~gis_sw.ruleset.Ruleset` holds read-only mappings that do not pickle).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pandas as pd

from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.parcels import screen_chunk
from gis_sw.batch.stream import DiskChunkSource
from gis_sw.ruleset import Ruleset, parse_ruleset

if TYPE_CHECKING:
    from concurrent.futures import Future

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
"""Sources of the runs on the local cluster, by token: its workers share or inherit them."""

QUIET: Mapping[str, object] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing": False,
    "distributed.client.scheduler-info-interval": "10s",
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}
"""Dask settings of the local cluster: no sampling profiler, slow ticks and monitors.

No work stealing either: every task is one chunk of the same size, queued on the scheduler
until a worker has a free thread (``worker-saturation``), so there is nothing to steal and
its balancing pass every 100 ms is wasted.  The client asks the scheduler for its workers'
state every 10 s instead of 2 s (nothing here reads it).  No HTTP routes: even with no
dashboard, the scheduler and each worker serve health, JSON and Prometheus pages (see
:data:`LOCAL_SCHEDULER_OPTIONS`)."""

LOCAL_SCHEDULER_OPTIONS: Mapping[str, object] = {"dashboard_address": "127.0.0.1:0"}
"""Options of the local cluster's scheduler: its HTTP server (kept by Dask with no dashboard
and no routes) on a free port of this machine only, not on 8787 (taken by the first of two
runs at once, and the second warned "Port 8787 is already in use" on stderr)."""

LOCAL_WORKER_OPTIONS: Mapping[str, object] = {"memory_limit": 0}
"""Options of the local cluster's workers: no memory limit.

A forked worker's resident size counts the layers it inherited, pages it shares with this
process: a limit would spill, pause or restart it (and its nanny would poll its size every
second) for memory that is not its own.  The local engine's workers have no limit either.
"""


def forks() -> bool:
    """Return True when the local cluster's workers are forked processes (Linux)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def screen_in_process_task(
    token: str, chunk_id: int, payload: tuple[str, str], quick: bool
) -> pd.DataFrame:
    """Build one chunk from a source of this process and screen it (in-process workers)."""
    return screen_chunk(_IN_PROCESS[token].chunk(chunk_id), _ruleset_from(payload), quick=quick)


def _client(options: RunOptions) -> tuple[Any, Any]:
    """Return a client of the scheduler, or of a new local cluster (and the cluster).

    The local cluster's workers are forked (:func:`forks`) with the sources registered in
    :data:`_IN_PROCESS` so far (see :func:`_add_workers`).
    """
    from dask.distributed import Client, LocalCluster

    # importing distributed sets its logger to INFO: keep its start-up chatter off stderr
    logging.getLogger("distributed").setLevel(logging.WARNING)
    if options.scheduler:
        return Client(options.scheduler), None
    workers = max(1, options.workers)
    if not forks():
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=workers,
            processes=False,
            dashboard_address=None,
            silence_logs=logging.WARNING,
        )
        return Client(cluster), cluster
    client, cluster = _scheduler_only()
    try:
        _add_workers(client, cluster, workers)
    except BaseException:
        _close(client, cluster)
        raise
    return client, cluster


def _scheduler_only() -> tuple[Any, Any]:
    """Start a local cluster with no workers yet (its scheduler), and a client of it.

    The settings (:data:`QUIET`) are read here by the scheduler and the client, and by
    each nanny when :func:`_add_workers` starts it.
    """
    import dask
    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.WARNING)
    with dask.config.set(_local_settings()):
        cluster = LocalCluster(
            n_workers=0,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.WARNING,
            scheduler_kwargs=dict(LOCAL_SCHEDULER_OPTIONS),
            **LOCAL_WORKER_OPTIONS,
        )
        try:
            client = Client(cluster)
        except BaseException:
            cluster.close()
            raise
    return client, cluster


def _local_settings() -> dict[str, object]:
    return {**QUIET, "distributed.worker.multiprocessing-method": "fork"}


def _add_workers(client: Any, cluster: Any, workers: int) -> None:
    """Fork ``workers`` worker processes of one thread, wait for them, run one task on each.

    They inherit the sources registered in :data:`_IN_PROCESS` so far; ``gc.freeze()``
    keeps the collector from copying every inherited object into each of them.  The first
    task of a worker pays for its thread, its connection back to the client and the first
    (de)serialising: a no-op task on each does that now, not on the first chunk.
    """
    import dask

    gc.collect()
    gc.freeze()
    try:
        with dask.config.set(_local_settings()):
            cluster.scale(workers)
            client.wait_for_workers(workers)
    finally:
        gc.unfreeze()
    addresses = list(client.run(os.getpid))  # every worker's (scheduler_info lists 5)
    ready = [client.submit(_ready, a, workers=[a], pure=False) for a in addresses]
    client.gather(ready)


def _ready(address: str) -> str:
    """Return ``address`` (a no-op task: the warm-up of a worker)."""
    return address


def _close(client: Any, cluster: Any) -> None:
    try:
        client.close()
    finally:
        if cluster is not None:
            cluster.close()


@dataclass(slots=True, eq=False)
class Cluster:
    """A client of a cluster and, for a local one, the cluster and the token of its source."""

    client: Any
    local: Any = None
    token: str = ""
    closed: bool = False

    def close(self) -> None:
        """Close the client and the local cluster, and forget the source (once)."""
        if self.closed:
            return
        self.closed = True
        _IN_PROCESS.pop(self.token, None)
        try:
            _close(self.client, self.local)
        finally:
            release_offload_thread()


_GONE = frozenset({"closed", "failed"})
"""Statuses of a Dask client (a text), worker or scheduler (``distributed.core.Status``) that
has ended."""


def release_offload_thread() -> bool:
    """End distributed's ``Dask-Offload`` thread once no Dask object lives in this process.

    Any client starts a one-thread executor (``distributed.utils._offload_executor``)
    that never ends, and the local engine forks its workers only in a process with one
    thread (:func:`gis_sw.batch.children.fork_ready`): without this, every batch run after
    a Dask run in the same process (a notebook) screened on threads, slower.  The idle
    executor is shut down (its thread joins) and replaced by a new one, whose thread
    starts only when Dask next offloads work.  Nothing is done while any client, worker or
    scheduler of this process is still open (one the user started, say); return whether
    the thread was ended.
    """
    from concurrent.futures import ThreadPoolExecutor

    utils = sys.modules.get("distributed.utils")
    if utils is None:
        return False  # distributed was never imported: no such thread
    from distributed.client import Client
    from distributed.scheduler import Scheduler
    from distributed.worker import Worker

    alive: list[Any] = [*Client._instances, *Worker._instances, *Scheduler._instances]
    if any(str(getattr(x.status, "value", x.status)) not in _GONE for x in alive):
        return False
    executor = getattr(utils, "_offload_executor", None)
    if not isinstance(executor, ThreadPoolExecutor) or not getattr(executor, "_threads", None):
        return False
    executor.shutdown(wait=True)
    fresh = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")
    setattr(utils, "_offload_executor", fresh)  # noqa: B010  # distributed's own global
    return True


def connect(source: ChunkSource | DiskChunkSource, options: RunOptions) -> Cluster:
    """Return a client of ``options.scheduler``, or start a local cluster for ``source``.

    A local cluster's workers inherit ``source`` (registered before they are forked), so
    it can be started as soon as the source is built, while the run does other work.

    Raises
    ------
    TypeError
        If a scheduler is given with a source that is not on disk.
    """
    if options.scheduler and not isinstance(source, DiskChunkSource):
        raise TypeError("a Dask scheduler needs chunks on disk (DiskChunkSource)")
    token = ""
    if not options.scheduler:
        token = f"{id(source):x}-{len(_IN_PROCESS)}"
        _IN_PROCESS[token] = source  # before the cluster starts: its workers inherit it
    try:
        client, local = _client(options)
    except BaseException:
        _IN_PROCESS.pop(token, None)
        raise
    return Cluster(client=client, local=local, token=token)


def start_local(building: Future[ChunkSource], options: RunOptions) -> Cluster:
    """Start the local cluster for the chunk source ``building`` is building.

    Importing distributed and starting the scheduler and a client of it (about half a
    second, the first time in a process) need no source: they run now, while the source
    is built; only the workers, forked to inherit it, wait for it.  With a ``scheduler``,
    or where there is no fork, this is :func:`connect` once the source is built.

    Raises
    ------
    Exception
        What building the source raised (the scheduler is closed first).
    """
    if options.scheduler or not forks():
        return connect(building.result(), options)
    client, local = _scheduler_only()
    token = ""
    try:
        source = building.result()
        token = f"{id(source):x}-{len(_IN_PROCESS)}"
        _IN_PROCESS[token] = source  # before the workers start: they inherit it
        _add_workers(client, local, max(1, options.workers))
    except BaseException:
        _IN_PROCESS.pop(token, None)
        _close(client, local)
        raise
    return Cluster(client=client, local=local, token=token)


def run_on_dask(
    source: ChunkSource | DiskChunkSource,
    todo: list[int],
    ruleset: Ruleset,
    finish: Callable[[int, pd.DataFrame], None],
    *,
    options: RunOptions,
    cluster: Cluster | None = None,
) -> None:
    """Screen the chunks ``todo`` on Dask, calling ``finish`` as each completes.

    At most ``4 * workers`` chunks are submitted ahead, so the client's memory stays
    bounded by the chunk size.  On the local cluster (no ``scheduler``) the workers
    inherit (forked) or share (in-process) this process's memory: a task is a token and a
    chunk id, and only the rows come back.  A running scheduler gets the
    :class:`DiskChunkSource` once (scattered) and its workers read their chunks from disk.
    ``cluster`` is one :func:`connect` started already for ``source``; it is closed at
    the end like one started here.

    Raises
    ------
    TypeError
        If a scheduler is given with a source that is not on disk.
    """
    from dask.distributed import as_completed

    payload = ruleset_payload(ruleset)
    try:
        if cluster is None:
            cluster = connect(source, options)
        client = cluster.client
        task: Callable[..., pd.DataFrame]
        shared: Any
        if cluster.local is not None:
            task, shared = screen_in_process_task, cluster.token
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

        # the first window goes in one message (one graph for the scheduler), then one
        # task per chunk finished
        first = [queue.pop() for _ in range(min(window, len(queue)))]
        n = len(first)
        started = client.map(
            task, [shared] * n, first, [payload] * n, [options.quick] * n, pure=False
        )
        futures.update(zip(started, first, strict=True))
        running = as_completed(started)
        for future in running:
            chunk_id = futures.pop(future)
            finish(chunk_id, future.result())
            future.release()
            if queue:
                running.add(submit())
    finally:
        if cluster is not None:
            cluster.close()
