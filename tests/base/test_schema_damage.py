"""A database whose tables were changed by hand, and a home advisor cannot write: one line that
says what is wrong and the way out, before any time is spent, never SQLite's own text."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.base.test_storage_faults import invoke, one_error, read_only_folder, user_db  # noqa: F401
from tests.recommend.test_service import stored_mlp_probe

SQLITE_TEXT = ("no such table", "no such column", "already exists", "malformed", "invalid literal")


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("DROP TABLE rentable_groups", "its table rentable_groups is missing"),
        ("DROP TABLE refresh_runs", "its table refresh_runs is missing"),
        ("ALTER TABLE rentables DROP COLUMN source", "its column source is missing"),
        ("DROP TABLE probe_results", "its table probe_results is missing"),
        ("DROP TABLE schema_versions", "its pricing tables do not match their schema version 0"),
        ("UPDATE schema_versions SET version = 'abc'", "schema version reads 'abc'"),
        ("UPDATE schema_versions SET version = -5", "schema version reads -5"),
        (
            "DELETE FROM schema_versions WHERE component = 'probes'",
            "its probes tables do not match their schema version 0",
        ),
    ],
)
def test_a_schema_changed_by_hand_says_what_and_how_to_recover(
    user_db: Path,  # noqa: F811
    damage: str,
    says: str,
) -> None:
    stored_mlp_probe()
    with closing(sqlite3.connect(user_db)) as conn, conn:
        conn.execute(damage)
    lines = []
    for args in (("prices", "list", "--limit", "1"), ("recommend", "--model", "mlp")):
        code, _, err = invoke(*args)
        if code:
            lines.append(one_error(code, err))
    assert lines, "every command ran on a damaged schema"
    for line in lines:
        assert "is not as advisor left it" in line and says in line
        assert "move the file aside" in line and "advisor locate" in line
        assert not any(text in line for text in SQLITE_TEXT), line


def test_a_fresh_probe_on_a_read_only_home_is_refused_before_it_measures(
    user_db: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with read_only_folder(user_db, monkeypatch):
        started = time.perf_counter()
        code, _, err = invoke("probe", "--model", "mlp", "--fresh", "--budget", "10")
        seconds = time.perf_counter() - started
    line = one_error(code, err)
    assert seconds < 3  # not after the probe's ten seconds
    assert "a probe of mnist_mlp could not be stored" in line and "is read-only here" in line
    assert "ADVISOR_HOME" in line
