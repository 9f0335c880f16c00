"""Townwide batch screening: every parcel, in spatial chunks, resumable, optionally on Dask.

Modules: :mod:`~gis_sw.batch.chunks` (Hilbert chunks with a halo),
:mod:`~gis_sw.batch.areas` (whole-array overlay measures), :mod:`~gis_sw.batch.parcels`
(the per-parcel screening of one chunk), :mod:`~gis_sw.batch.prepare` (bad rows reported,
not fatal), :mod:`~gis_sw.batch.run` (threads), :mod:`~gis_sw.batch.dask_engine`,
:mod:`~gis_sw.batch.resume` (part files and manifest), :mod:`~gis_sw.batch.write`.
"""

from __future__ import annotations

from gis_sw.batch.run import Engine, RunOptions, ScreenResult, screen_layers

__all__ = ["Engine", "RunOptions", "ScreenResult", "screen_layers"]
