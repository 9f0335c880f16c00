"""One task done aside, in a forked child, while this process goes on with its own work.

The batch's write stage is two independent pieces of CPU work: writing the parcels
(``parcels.parquet``, then ``parcels.gpkg`` through GDAL, the CSVs) and drawing
``overview.png``.  Run one after the other they keep one core busy while the other idles.
Threads do not split them: sampled with ``py-spy --gil`` at 100,000 parcels, GDAL's
GeoPackage writer holds the GIL for 93% of its time and the overview's matplotlib and
numpy steps for 65%, so two threads would still take most of the serial time.  A forked
child has a GIL of its own: it inherits the parcels copy-on-write (nothing is pickled on
the way in), renders the page to bytes and sends them back down a pipe (a few hundred kB
for a PNG); the parent writes the file itself, at the place in the serial order where it
always did, so what is published and when is unchanged.

Errors come out as in a serial run:

* the task's exception is raised again in the parent, with its type, arguments and
  message (:func:`gis_sw.batch.children.exception_payload`), when the parent asks for the
  result, i.e. at the task's place in the serial order: an earlier error of the parent
  wins, as it would have serially (the child is then stopped and reaped, its work
  discarded);
* a child that dies without answering (killed, out of memory) costs nothing but time: the
  task is run again in this process, which is what a serial run does.

Forking needs what :func:`gis_sw.batch.children.fork_ready` checks (Linux, no other thread
running); where it is not ready, the task runs in this process when its result is asked
for, exactly as before.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

from gis_sw.batch.children import die_with_parent, exception_payload, fork_ready, rebuild_exception

log = logging.getLogger(__name__)

T = TypeVar("T")

READ_BYTES = 1 << 20
"""Bytes read from the child's pipe at a time."""


class Aside(Generic[T]):
    """A task started by :func:`start_aside`: ask for its :meth:`result`, or :meth:`cancel` it.

    Not thread-safe; used by the thread that started it.  ``forked`` says whether the task
    runs in a child (False: it runs in this process when :meth:`result` is called).
    """

    __slots__ = ("_done", "_error", "_fd", "_pid", "_task", "_value")

    def __init__(self, task: Callable[[], T], pid: int | None, fd: int | None) -> None:
        self._task = task
        self._pid = pid
        self._fd = fd
        self._done = False
        self._value: T | None = None
        self._error: BaseException | None = None

    @property
    def forked(self) -> bool:
        """Whether the task was started in a forked child."""
        return self._pid is not None

    def result(self) -> T:
        """Return the task's value, waiting for the child; raise what the task raised.

        Raises
        ------
        Exception
            The task's own exception (rebuilt from the child's, or raised here).
        """
        if self._error is not None:
            raise self._error
        if self._done:
            return self._value  # type: ignore[return-value]
        reply = self._collect()
        if reply is None:  # no child, or it died without answering: do it here
            self._value = self._task()
        elif reply[0] == "ok":
            self._value = reply[1]  # type: ignore[assignment]
        else:
            _, payload, text = reply
            self._error = rebuild_exception(payload, text)  # type: ignore[arg-type]
            raise self._error
        self._done = True
        return self._value  # type: ignore[return-value]

    def cancel(self) -> None:
        """Stop the child, if any is still running, and reap it (its work is discarded)."""
        if self._pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        self._reap()

    def _collect(self) -> tuple[object, ...] | None:
        """Return the child's reply (None: no child, or no whole reply)."""
        if self._pid is None or self._fd is None:
            return None
        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(self._fd, READ_BYTES)
                if not chunk:
                    break
                chunks.append(chunk)
        except BaseException:  # interrupted (Ctrl-C): the child is not waited for
            self.cancel()
            raise
        status = self._reap()
        data = b"".join(chunks)
        if not data or status != 0:
            log.warning(
                "the task run aside ended without an answer (status %s): rerun here", status
            )
            return None
        try:
            reply = pickle.loads(data)  # noqa: S301  # our own child's bytes
        except Exception:  # noqa: BLE001  # a cut reply: do the work here instead
            log.warning("the task run aside sent a reply that does not load: rerun here")
            return None
        return reply if isinstance(reply, tuple) else None

    def _reap(self) -> int | None:
        """Close the pipe and wait for the child; return its wait status (None: reaped)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        pid, self._pid = self._pid, None
        if pid is None:
            return None
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return None
        return status

    def __del__(self) -> None:
        """Never leave a child behind (a result not asked for)."""
        with contextlib.suppress(Exception):
            self.cancel()


def start_aside(task: Callable[[], T], *, fork: bool = True) -> Aside[T]:
    """Start ``task()`` in a forked child and return at once (see the module docstring).

    ``task``'s value must pickle.  ``fork=False``, or a process where forking is not safe
    (:func:`~gis_sw.batch.children.fork_ready`), runs it in this process when the result is
    asked for.
    """
    if not fork or not fork_ready():
        return Aside(task, None, None)
    for stream in (sys.stdout, sys.stderr):  # what the child prints is its own, not ours
        with contextlib.suppress(Exception):
            stream.flush()
    read_fd, write_fd = os.pipe()
    # the inherited objects stay out of the child's collector (no page copies); no
    # gc.collect() first: 0.05 s of the parent's critical path at 100,000 parcels, and
    # garbage frozen in a child that lives a second costs nothing
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        gc.unfreeze()
        os.close(read_fd)
        os.close(write_fd)
        return Aside(task, None, None)
    if pid == 0:  # the child: never returns
        _child(task, read_fd, write_fd)
    gc.unfreeze()
    os.close(write_fd)
    return Aside(task, pid, read_fd)


def _child(task: Callable[[], object], read_fd: int, write_fd: int) -> None:
    """Run the task, send its value or its error down the pipe, and leave."""
    code = 1
    try:
        os.close(read_fd)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it cancels us
        die_with_parent()
        try:
            reply = pickle.dumps(("ok", task()), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001  # every error goes back to the parent
            reply = pickle.dumps(exception_payload(exc))
        with os.fdopen(write_fd, "wb") as out:
            out.write(reply)
        code = 0
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)


__all__ = ["Aside", "start_aside"]
