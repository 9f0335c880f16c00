"""gis_sw.redact: every password form masked, the rest of a source kept; control characters
made visible.  (Through the real commands: tests/test_security_postgis.py.)"""

from __future__ import annotations

import logging

import pytest

from gis_sw.redact import (
    RedactingFilter,
    dsn_secrets,
    printable,
    redact,
    redact_dsn,
    scrub,
    shown,
)

FORMS = [
    pytest.param(
        "postgresql://ann:pa55word@db.example:5432/town",
        "postgresql://ann:***@db.example:5432/town",
        id="uri",
    ),
    pytest.param(
        "postgres://ann:p@ss@db.example/town",
        "postgres://ann:***@db.example/town",
        id="uri-raw-at-in-password",
    ),
    pytest.param(
        "postgresql://ann:s3 cr%zz@db.example/town",
        "postgresql://ann:***@db.example/town",
        id="uri-space-and-bad-percent",
    ),
    pytest.param(
        "postgresql://ann:pa/ss@db.example/town",
        "postgresql://ann:***@db.example/town",
        id="uri-slash-in-password",
    ),
    pytest.param(
        "postgresql://db.example/town?user=ann&password=x%zz9&sslmode=require",
        "postgresql://db.example/town?user=ann&password=***&sslmode=require",
        id="query-parameter",
    ),
    pytest.param(
        "postgresql://db.example/town?PassWord=abc#frag",
        "postgresql://db.example/town?PassWord=***#frag",
        id="query-parameter-any-case",
    ),
    pytest.param(
        "host=db user=ann password=plain dbname=town",
        "host=db user=ann password=*** dbname=town",
        id="key-value",
    ),
    pytest.param(
        "host=db password = 'with space\\'s' dbname=town",
        "host=db password = *** dbname=town",
        id="key-value-quoted-escaped-spaced",
    ),
    pytest.param(
        "host=db password='never closed dbname=town",
        "host=db password=***",
        id="key-value-unterminated-quote",
    ),
    pytest.param("host=db password=a,b;c&d", "host=db password=***", id="key-value-punctuation"),
    pytest.param("PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=*** psql -h db", id="env-style"),
    pytest.param("sslpassword=k3y host=db", "sslpassword=*** host=db", id="sslpassword"),
    pytest.param('{"password": "in json"}', '{"password": ***}', id="json"),
    pytest.param(
        "postgis:postgresql://ann@db.example/town:parcels",
        "postgis:postgresql://ann@db.example/town:parcels",
        id="no-password-unchanged",
    ),
    pytest.param("outcome=pass passfile=/x", "outcome=pass passfile=/x", id="pass-words-kept"),
]


@pytest.mark.parametrize(("text", "expected"), FORMS)
def test_every_password_form_is_masked(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("dsn", "shown_as"),
    [
        ("postgresql://ann:s3 cr%zz@db:5432/town", "postgresql://ann@db:5432/town"),
        (
            "postgresql://ann@db/town?password=x&sslmode=require",
            "postgresql://ann@db/town?sslmode=require",
        ),
        (
            "postgresql://ann@db/town?sslmode=require&PASSWORD=x",
            "postgresql://ann@db/town?sslmode=require",
        ),
        ("postgresql://ann@db/town?password=x", "postgresql://ann@db/town"),
        ("host=db password = 'a b\\'c' dbname=town", "host=db dbname=town"),
        ("host=db PGPASSWORD=x sslpassword=y dbname=town", "host=db dbname=town"),
        ("postgresql://ann:pa/ss@db/town", "postgresql://ann:***@db/town"),
    ],
)
def test_a_source_is_shown_without_its_password(dsn: str, shown_as: str) -> None:
    assert redact_dsn(dsn) == shown_as


def test_a_password_in_a_sentence_is_masked_where_it_stands() -> None:
    text = "parcels [postgis:postgresql://ann:pw9@db/town:query]: relation does not exist."
    assert (
        redact(text)
        == "parcels [postgis:postgresql://ann:***@db/town:query]: relation does not exist."
    )


def test_secrets_of_a_connection_string_and_scrub() -> None:
    assert dsn_secrets("postgresql://ann:Bad%zz@db/town") == ["Bad%zz"]
    assert dsn_secrets("postgresql://ann:a%20b@db/town") == ["a%20b", "a b"]
    assert dsn_secrets("host=db password='it\\'s'") == ["'it\\'s'", "it\\'s", "it's"]
    message = 'invalid percent-encoded token: "Bad%zz"'
    assert scrub(message, dsn_secrets("postgresql://ann:Bad%zz@db/town")) == (
        'invalid percent-encoded token: "***"'
    )
    # a short secret is masked only where quoted: the sentence keeps its letters
    assert scrub('token "ab" about ab', ["ab"]) == 'token "***" about ab'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("P-1\x1b[2J", "P-1\\x1b[2J"),
        ("P-1\nSW101  P-9  pass", "P-1\\nSW101  P-9  pass"),
        ("tab\there\rback", "tab\\there\\rback"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("line\u2028sep", "line\\u2028sep"),
        ("back\\slash\x07", "back\\\\slash\\x07"),
        ("C:\\data\\town", "C:\\data\\town"),
        ("Lot 7 – Müller 東", "Lot 7 – Müller 東"),
        ("no\u00a0break", "no\u00a0break"),
    ],
)
def test_printable_escapes_control_characters_only(text: str, expected: str) -> None:
    assert printable(text) == expected
    assert printable(text).isprintable() or "\u00a0" in text


def test_shown_redacts_then_escapes() -> None:
    assert shown("postgresql://a:pw@h/d\n") == "postgresql://a:***@h/d\\n"


def test_log_filter_masks_message_and_arguments(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("gis_sw.test_redact")
    handler = caplog.handler
    handler.addFilter(RedactingFilter())
    try:
        with caplog.at_level(logging.INFO, logger="gis_sw.test_redact"):
            log.info("connecting to %s", "host=db password='s3 cr' dbname=town")
            log.info("postgresql://ann:pw9@db/town failed")
    finally:
        handler.filters.clear()
    assert caplog.messages == [
        "connecting to host=db password=*** dbname=town",
        "postgresql://ann:***@db/town failed",
    ]
