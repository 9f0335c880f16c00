"""Screen chunks in forked worker processes that inherit the layers (the local engine's default).

Two threads over chunks reach only about 1.7x on 2 cores: shapely releases the GIL inside
each GEOS call, but the numpy and pandas work between the calls holds it.  Processes have
no shared GIL.  They are *forked* (``multiprocessing`` "fork" context) once the chunk source
is built, so each worker inherits the whole layers, their STRtrees and the chunk plan
copy-on-write: nothing is serialised on the way in, a task is one chunk id down a pipe.
What comes back is the chunk's result table (figures and text, no geometry), pickled:
about a millisecond per 5,000-parcel chunk.

Forking is safe only in a process with one thread (a lock another thread holds at the
fork stays locked in the child forever), and only where ``fork`` exists and is sound:
:func:`~gis_sw.batch.children.fork_ready` says whether it is, and the caller falls back
to threads where it is not (macOS, Windows, or a program with other threads running).
``gc.freeze()`` before the fork keeps the collector from writing into every inherited
object's page (which would copy the whole town into each worker).

The parent hands out one chunk at a time to each idle worker (the next id goes out before
the finished chunk's rows are stored, so workers never wait on the parent), stores and
reports each chunk as it comes back, and waits on the workers' pipes and process sentinels
together, so a worker that dies (killed, out of memory) is an error at once, not a hang.
An exception in a worker is raised again in the parent with its type, arguments and
message (the same error a thread run raises), chained to the worker's traceback.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import multiprocessing
import os
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from gis_sw.batch.children import (
    die_with_parent,
    exception_payload,
    rebuild_exception,
)
from gis_sw.errors import GisSwError

log = logging.getLogger(__name__)

T = TypeVar("T")

_TASK: Callable[[int], Any] | None = None
"""The task of the pool being started: set just before the fork, read by the children."""

STOP_SECONDS = 5.0
"""How long workers get to leave after the last chunk before they are terminated."""


def _serve(conn: Connection, parent: int) -> None:
    """Worker loop: screen each chunk id received, send back its rows or its error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers on Ctrl-C
    die_with_parent()
    if os.getppid() != parent:  # the parent died before the request took effect
        return
    task = _TASK
    while True:
        try:
            chunk_id = conn.recv()
        except (EOFError, OSError):
            return
        if chunk_id is None or task is None:
            return
        try:
            reply = (chunk_id, "ok", task(chunk_id), "")
        except Exception as exc:  # noqa: BLE001  # every error goes back to the parent
            reply = (chunk_id, *exception_payload(exc))
        try:
            conn.send(reply)
        except OSError:  # the parent is gone
            return
        except Exception as exc:  # noqa: BLE001  # rows that do not pickle: say so
            conn.send((chunk_id, *exception_payload(exc)))


class _Worker:
    """One forked worker: its process, its end of the pipe, the chunk it is screening."""

    def __init__(self, context: Any) -> None:
        parent_end, child_end = multiprocessing.Pipe(duplex=True)
        self.process = context.Process(
            target=_serve, args=(child_end, os.getpid()), name="gis-sw-worker", daemon=True
        )
        self.process.start()
        child_end.close()
        self.conn = parent_end
        self.chunk: int | None = None

    def give(self, chunk_id: int) -> None:
        self.chunk = chunk_id
        try:
            self.conn.send(chunk_id)
        except OSError:  # it died after its last answer
            raise self.died() from None

    def stop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)

    def died(self) -> GisSwError:
        self.process.join(STOP_SECONDS)
        code = self.process.exitcode
        how = (
            f"was killed by signal {-code}"
            if code is not None and code < 0
            else (f"ended with exit code {code}")
        )
        return GisSwError(
            f"a batch worker process (pid {self.process.pid}) {how} while screening chunk "
            f"{self.chunk} (out of memory?). Fix: run again with --resume (finished chunks "
            "are kept), with fewer --workers, a smaller --chunk-size or --parallel threads."
        )


def run_forked(
    task: Callable[[int], T],
    todo: list[int],
    finish: Callable[[int, T], None],
    *,
    workers: int,
) -> None:
    """Run ``task(chunk_id)`` for every id of ``todo`` in ``workers`` forked processes.

    ``task`` (and everything it reaches) is inherited by the fork, never pickled; only its
    results are.  ``finish(chunk_id, result)`` is called in this process as each chunk
    comes back (in completion order).

    Raises
    ------
    Exception
        The first exception a task raised, rebuilt with its type and arguments.
    GisSwError
        When a worker process dies (killed, out of memory) before it answers.
    """
    global _TASK  # noqa: PLW0603  # what the forked children inherit
    if not todo:
        return
    context = multiprocessing.get_context("fork")
    workers = max(1, min(workers, len(todo)))
    # inherited objects stay out of the collector's writes in the children; no
    # gc.collect() first (0.05 to 0.1 s at 100,000 parcels, before any chunk starts): the
    # garbage it would free is frozen too, shared with the children and never touched
    gc.freeze()
    _TASK = task
    pool: list[_Worker] = []
    try:
        try:
            for _ in range(workers):
                pool.append(_Worker(context))
        finally:
            _TASK = None
            gc.unfreeze()
        _dispatch(pool, list(reversed(todo)), finish)
    finally:
        _shut(pool)  # also the workers started before one failed to start


def _dispatch(pool: list[_Worker], queue: list[int], finish: Callable[[int, Any], None]) -> None:
    """Hand out chunk ids to idle workers and take back their rows until all are done."""
    by_conn = {worker.conn: worker for worker in pool}
    by_sentinel = {worker.process.sentinel: worker for worker in pool}
    for worker in pool:
        if queue:
            worker.give(queue.pop())
    while any(worker.chunk is not None for worker in pool):
        busy = [worker for worker in pool if worker.chunk is not None]
        ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
        for item in ready:
            if item in by_sentinel and not by_sentinel[item].conn.poll():
                raise by_sentinel[item].died()
            worker = by_conn.get(item)  # type: ignore[call-overload]
            if worker is None or worker.chunk is None:
                continue
            try:
                chunk_id, status, body, text = worker.conn.recv()
            except (EOFError, OSError):
                raise worker.died() from None
            worker.chunk = None
            if status == "error":
                raise rebuild_exception(body, text)
            if queue:
                worker.give(queue.pop())  # before storing: the worker never waits on us
            else:
                worker.stop()  # nothing left for it: it leaves while the others finish
            finish(chunk_id, body)


def _shut(pool: list[_Worker]) -> None:
    """Stop every worker: ask, wait a little, then terminate what is left."""
    for worker in pool:
        if worker.chunk is None:
            worker.stop()
    for worker in pool:
        if worker.chunk is not None:  # still screening: nothing to wait for
            worker.process.terminate()
        worker.process.join(STOP_SECONDS)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()
        worker.conn.close()
    log.debug("%d worker processes of pid %d stopped", len(pool), os.getpid())
