r"""What gis_sw may show of a string: passwords masked, control characters made visible.

Two jobs, one module, used wherever a string from the user's inputs is printed, logged or
stored in an output:

* :func:`redact` masks every password form a PostgreSQL connection string can carry — the
  URI's user information (``postgresql://user:secret@host/db``, also when badly
  %-encoded or holding spaces), query parameters (``?password=secret``), ``key=value``
  pairs, quoted or not (``password='s e c r e t'``), and environment-style keys
  (``PGPASSWORD=secret``, ``sslpassword``, ``passwd``, ``pwd``) — replacing the secret with
  :data:`MASK` and keeping user, host, port and database visible;
  :func:`scrub` also removes given secret values wherever they occur (libpq quotes a bad
  %-encoded password alone in its error message);
* :func:`printable` writes control characters as escapes (``\x1b``, ``\n``), so an id or
  an attribute holding them cannot move the cursor, colour the terminal or forge a line.

:class:`RedactingFilter` applies :func:`redact` to every log record; the command line
installs it on its log handler.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from urllib.parse import unquote

__all__ = [
    "MASK",
    "RedactingFilter",
    "dsn_secrets",
    "printable",
    "redact",
    "redact_dsn",
    "scrub",
    "shown",
]

MASK = "***"
"""What a password is replaced with."""

_SECRET_KEY = r"[A-Za-z0-9_.-]*?(?:password|passwd|passwort|pwd)"  # noqa: S105 (a pattern)
"""Key names that hold a secret (``password``, ``sslpassword``, ``PGPASSWORD``, ``pwd``)."""

# ?password=... / &password=... in a URI: the value ends at & # or whitespace
_QUERY = re.compile(rf"(?i)(?P<key>[?&]{_SECRET_KEY})(?P<eq>=)(?P<value>[^&#\s]*)")
# key = value, key='quoted value' (libpq: backslash escapes; an unterminated quote runs to the
# end), key="double quoted"; the key must not be the tail of a longer word
_PAIR = re.compile(
    rf"""(?ix)
    (?P<key>(?<![A-Za-z0-9_])(?<![?&]){_SECRET_KEY})
    (?P<eq>["']?\s*[=:]\s*)
    (?P<value>'(?:\\.|[^'\\])*(?:'|$)|"(?:\\.|[^"\\])*(?:"|$)|(?:\\.|\S)+)
    """
)
# scheme://user:secret@host: the secret runs to the last @ of the whitespace-free token
_USERINFO = re.compile(
    r"(?i)(?P<head>\b[a-z][a-z0-9+.-]*://[^:@/?#\s]*):(?P<value>[^\s]*)@(?=[^@\s]*(?:\s|$))"
)
_URI_START = re.compile(r"(?i)^\s*(postgres(?:ql)?://)")


def redact(text: str) -> str:
    """``text`` with every password masked (see the module's docstring for the forms).

    A connection string keeps everything but its secret:
    ``postgresql://ann:***@db.example:5432/town``, ``host=db user=ann password=***``.
    """
    if not text:
        return text
    out = _redact_uri_userinfo(text)
    out = _QUERY.sub(lambda m: f"{m['key']}{m['eq']}{MASK}", out)
    out = _PAIR.sub(lambda m: f"{m['key']}{m['eq']}{MASK}", out)
    return _USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", out)


def redact_dsn(dsn: str) -> str:
    """Return a connection string to show as a layer's source: its password left out entirely.

    ``postgresql://ann:s3cret@db/town?password=x&sslmode=require`` gives
    ``postgresql://ann@db/town?sslmode=require``; ``host=db password='a b' dbname=town``
    gives ``host=db dbname=town``.  Whatever is not recognised as one of those forms still
    goes through :func:`redact`.
    """
    start = _URI_START.match(dsn)
    if start is not None:
        masked = _redact_uri_userinfo(dsn).replace(f":{MASK}@", "@", 1)
        head, sep, query = masked.partition("?")
        if sep:
            kept = [p for p in query.split("&") if not _SECRET_PARAM.match(p)]
            masked = head + ("?" + "&".join(kept) if kept else "")
        return redact(masked)
    return redact(" ".join(_PAIR.sub("", dsn).split()))


_SECRET_PARAM = re.compile(rf"(?i){_SECRET_KEY}=")


def _redact_uri_userinfo(text: str) -> str:
    """Mask a connection URI's password as libpq reads it.

    The password runs from the first ``:`` of the authority to its first ``@`` (spaces and
    bad %-escapes included).
    """
    start = _URI_START.match(text)
    if start is None:
        return text
    rest = text[start.end() :]
    cut = min((i for i in (rest.find("@"), rest.find("/")) if i >= 0), default=-1)
    if cut < 0 or rest[cut] != "@":
        return text
    userinfo = rest[:cut]
    if ":" not in userinfo:
        return text
    user = userinfo.split(":", 1)[0]
    return f"{text[: start.end()]}{user}:{MASK}{rest[cut:]}"


def dsn_secrets(dsn: str) -> list[str]:
    """Return the password values a connection string holds, as written and %-decoded.

    For :func:`scrub`: an error message of the database library may quote a secret alone
    (``invalid percent-encoded token: "s%zz"``), where no pattern can recognise it.
    """
    found: list[str] = []
    start = _URI_START.match(dsn)
    if start is not None:
        rest = dsn[start.end() :]
        cut = min((i for i in (rest.find("@"), rest.find("/")) if i >= 0), default=-1)
        if cut >= 0 and rest[cut] == "@" and ":" in rest[:cut]:
            found.append(rest[:cut].split(":", 1)[1])
    for pattern in (_QUERY, _PAIR, _USERINFO):
        for match in pattern.finditer(dsn):
            found.append(match["value"])
    values: list[str] = []
    for raw in found:
        stripped = raw.strip()
        if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
            stripped = stripped[1:-1]
        for value in (raw, stripped, unquote(stripped), stripped.replace("\\", "")):
            if value and value not in values:
                values.append(value)
    return sorted(values, key=len, reverse=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` redacted (:func:`redact`) and with every given secret masked.

    A quoted secret (``"s%zz"``) is masked whatever its length; a bare one only from four
    characters on, so that a one-letter password does not mask every such letter.
    """
    out = text
    for secret in secrets:
        if not secret:
            continue
        for quote in ('"', "'"):
            out = out.replace(f"{quote}{secret}{quote}", f"{quote}{MASK}{quote}")
        if len(secret) >= 4:
            out = out.replace(secret, MASK)
    return redact(out)


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def printable(value: object) -> str:
    r"""Return ``str(value)`` with control and format characters written as escapes.

    ``"P-1\x1b[2J"`` prints as ``P-1\x1b[2J`` (the four characters backslash, x, 1, b),
    a newline as ``\n``, a tab as ``\t``, a backslash as ``\\`` only when the text also
    holds a character that had to be escaped (so ``C:\data`` stays as it is); other
    characters, accents and scripts included, are kept.
    """
    text = str(value)
    if text.isprintable():
        return text
    pieces = []
    for char in text:
        if char in _ESCAPES:
            pieces.append(_ESCAPES[char])
        elif char.isprintable() or unicodedata.category(char) == "Zs":  # Zs: spaces
            pieces.append(char)
        else:
            code = ord(char)
            pieces.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(pieces)


def shown(value: object) -> str:
    """Return what a command may print of ``value`` on one line.

    :func:`redact`, then :func:`printable`.
    """
    return printable(redact(str(value)))


class RedactingFilter(logging.Filter):
    """A logging filter: messages as :func:`shown` gives them, tracebacks redacted.

    Every record's message is rewritten with its arguments included.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message and traceback text; keep every record."""
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: leave it to the formatter
            return True
        cleaned = shown(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True
