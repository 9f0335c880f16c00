"""Work for the core the screen's tail leaves idle: import the overview map's module.

The write stage draws ``overview.png`` in a forked child (:mod:`gis_sw.batch.aside`)
beside the other outputs, and that child is the stage's longest part: about 0.5 s of it
is importing matplotlib.  When the last chunks are being screened, fewer chunks are left
than workers, so one core waits: the parent imports the map's module then, and the child
forked at the write stage inherits it.  Nothing is drawn early and no figure changes;
only when the import happens.

The moment is found from the progress the screen already reports: with ``n`` chunks and
``w`` workers, the queue is empty once ``n - w`` chunks are finished, and the next one to
finish leaves its worker idle.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gis_sw.batch.chunks import ChunkPlan

log = logging.getLogger(__name__)

Progress = Callable[[int], None]


class TailWork:
    """Wrap a run's ``progress`` and ``on_plan`` hooks to run ``work`` once, at the tail.

    ``work`` runs on the thread that reports progress (the parent's, between two chunks'
    results), once, when the first worker has no chunk left; with one worker there is no
    idle core and it never runs (the write stage imports what it needs, as before).  An
    exception in ``work`` is logged and dropped: it only warms a cache.
    """

    def __init__(
        self,
        work: Callable[[], object],
        *,
        workers: int,
        progress: Progress | None,
        on_plan: Callable[[ChunkPlan], None] | None,
    ) -> None:
        self._work = work
        self._workers = workers
        self._progress = progress
        self._on_plan = on_plan
        self._left: int | None = None  # chunks to finish before a worker idles
        self._lock = threading.Lock()

    def on_plan(self, plan: ChunkPlan) -> None:
        """Note the plan's chunk count; pass the plan on."""
        if self._workers > 1 and plan.n_chunks > self._workers:
            self._left = plan.n_chunks - self._workers + 1
        if self._on_plan is not None:
            self._on_plan(plan)

    def progress(self, finished: int) -> None:
        """Pass the count on; run the work when the first worker has nothing left."""
        if self._progress is not None:
            self._progress(finished)
        with self._lock:
            if self._left is None:
                return
            self._left -= finished
            due = self._left <= 0
            if due:
                self._left = None
        if due:
            try:
                self._work()
            except Exception:  # a cache warmed or not changes no output
                log.debug("tail work failed; the write stage does it itself", exc_info=True)


def importer(module: str) -> Callable[[], object]:
    """Return the work of importing ``module``."""

    def work() -> object:
        return importlib.import_module(module)

    return work
