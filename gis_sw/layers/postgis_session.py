"""A read-only PostgreSQL session: what every PostGIS read of :mod:`gis_sw.layers.postgis` opens.

Reading never writes: the session starts with ``default_transaction_read_only=on``, every
statement runs in one ``READ ONLY`` transaction that is rolled back, and a server that does
not report ``transaction_read_only = on`` is refused.  Messages name the layer's label and
never carry the connection string's password (:mod:`gis_sw.redact`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from gis_sw.errors import InputFileError
from gis_sw.redact import dsn_secrets, scrub

CONNECT_TIMEOUT_S = 10
READ_ONLY_OPTION = "-c default_transaction_read_only=on"
"""Added to the connection's ``options``: every transaction of the session is read-only."""


def driver(label: str) -> Any:
    """Return the psycopg module.

    Raises
    ------
    InputFileError
        If psycopg (the ``postgis`` extra) is not installed.
    """
    try:
        import psycopg
        import psycopg.sql
    except ImportError as exc:  # pragma: no cover - the postgis extra is in dev
        raise InputFileError(
            f"{label}: reading PostGIS needs psycopg. Fix: pip install 'gis_sw[postgis]'."
        ) from exc
    return psycopg


@contextlib.contextmanager
def read_only_session(dsn: str, label: str) -> Iterator[Any]:
    """Yield a psycopg connection whose statements run in one ``READ ONLY`` transaction.

    The session starts with ``default_transaction_read_only=on``, the transaction is
    checked to be read-only before any statement and rolled back at the end.  A driver
    error becomes one :class:`InputFileError` naming ``label``, its text cleared of the
    connection string's secrets.

    Raises
    ------
    InputFileError
        If psycopg is missing, the server cannot be reached, the session is not read-only,
        or a statement fails.
    """
    psycopg = driver(label)
    try:
        options = psycopg.conninfo.conninfo_to_dict(dsn).get("options")
        options = f"{options} {READ_ONLY_OPTION}" if options else READ_ONLY_OPTION
        with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S, options=options) as conn:
            conn.read_only = True  # BEGIN READ ONLY, before any statement
            _check_read_only(conn, label)
            yield conn
            conn.rollback()  # nothing to keep: the transaction only read
    except psycopg.Error as exc:
        raw = str(exc).strip()
        message = scrub(raw, dsn_secrets(dsn))
        error = InputFileError(f"{label}: {message}. Fix: check the connection, table or query.")
        if message != raw:  # the driver's own text held a secret: do not chain it
            raise error from None
        raise error from exc


def _check_read_only(conn: Any, label: str) -> None:
    """Refuse a session whose transactions are not read-only (a proxy dropped the option)."""
    with conn.cursor() as cur:
        cur.execute("SHOW transaction_read_only")
        row = cur.fetchone()
    if row is None or str(row[0]).lower() != "on":
        raise InputFileError(
            f"{label}: the server did not start a read-only transaction, so gis-sw will not "
            "read through it. Fix: connect to PostgreSQL directly, or as a user whose "
            "default_transaction_read_only is on."
        )
