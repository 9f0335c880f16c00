"""What every forked child of the batch needs, whatever its task.

The batch's workers (:mod:`gis_sw.batch.forked`) and the task done aside
(:mod:`gis_sw.batch.aside`) share it.

Whether this process may fork now (:func:`fork_ready`), a child that dies with its parent
(:func:`die_with_parent`), and an exception sent home whole (:func:`exception_payload`
in the child, :func:`rebuild_exception` in the parent: the same type, arguments and
message, chained to the child's traceback).
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
import sys
import threading
import traceback
from typing import Any


def fork_ready() -> bool:
    """Return True when worker processes can be forked safely here and now.

    Needs Linux (``fork`` elsewhere is missing, or unsafe with the system's frameworks on
    macOS), no other Python thread running in this process, and a process allowed to
    have children (a daemonic one, a ``multiprocessing`` pool's worker, is not).
    """
    if not sys.platform.startswith("linux"):
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    if multiprocessing.current_process().daemon:
        return False
    return threading.active_count() == 1


class WorkerTracebackError(Exception):
    """The traceback of an exception raised in a worker process (its ``__cause__``)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        """Return the worker's traceback text."""
        return self.text


def exception_payload(exc: BaseException) -> tuple[Any, ...]:
    """Return what rebuilds ``exc`` in the parent without calling its ``__init__``.

    Pickling an exception calls its class with ``args`` again, which changes the message
    of an error whose ``__init__`` builds it (``LayerError`` from problems); the class,
    ``args`` and ``__dict__`` give the very same error back.
    """
    text = "".join(traceback.format_exception(exc))
    state = dict(getattr(exc, "__dict__", {}))
    try:
        payload = pickle.dumps((type(exc), exc.args, state))
    except Exception:  # noqa: BLE001  # an unpicklable error still gets its message home
        payload = pickle.dumps((RuntimeError, (f"{type(exc).__name__}: {exc}",), {}))
    return ("error", payload, text)


def rebuild_exception(payload: bytes, text: str) -> BaseException:
    """Return the worker's exception, its cause the worker's traceback."""
    kind, args, state = pickle.loads(payload)  # noqa: S301  # our own child's bytes
    exc = kind.__new__(kind, *args)
    exc.args = args
    for name, value in state.items():
        setattr(exc, name, value)
    exc.__cause__ = WorkerTracebackError(text)
    return exc


PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process gets when its parent dies."""


def die_with_parent() -> None:
    """Ask Linux to kill this worker if the parent dies (a killed run leaves no orphans)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux's libc: workers still end on EOF
        pass
