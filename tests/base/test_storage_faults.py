"""Storage and configuration faults are one clear line and exit 1, never a traceback.

Each test breaks a real SQLite file (or config.toml) the way a user's disk can: a read-only
folder, a text file where the database should be, a database from a newer advisor, a damaged
page. Reads of a read-only database still work and leave the file exactly as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor import locations, store
from advisor.cli import cli
from pricing import database, seed


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_error(code: int, err: str) -> str:
    """The single error line of a failed command (the only line on stderr)."""
    assert code == 1, err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("advisor: error: ")
    return line


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def intact(path: Path) -> bool:
    """``PRAGMA integrity_check`` says ok (it raises itself on a badly damaged page)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


@pytest.fixture
def user_db() -> Path:
    """The user's database, created and seeded, every connection closed."""
    path = locations.database_path()
    database.connect().conn.close()
    return path


@contextlib.contextmanager
def read_only_folder(user_db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The user's data folder and database made non-writable for the block.

    chmod does not stop root, so when the tests run as root ``os.access`` is also told the
    truth as a normal user would see it: no write access below the data folder.
    """
    folder = user_db.parent
    user_db.chmod(0o444)
    folder.chmod(0o555)
    if os.geteuid() == 0:
        real_access = os.access

        def access(path, mode, *args, **kwargs):  # type: ignore[no-untyped-def]
            if mode & os.W_OK and Path(path).resolve().is_relative_to(folder.resolve()):
                return False
            return real_access(path, mode, *args, **kwargs)

        monkeypatch.setattr(os, "access", access)
    try:
        yield user_db
    finally:
        folder.chmod(0o755)
        user_db.chmod(0o644)


@pytest.fixture
def read_only(user_db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The user's data folder and database made non-writable (``read_only_folder``)."""
    with read_only_folder(user_db, monkeypatch) as path:
        yield path


def test_a_read_only_database_is_read_and_left_untouched(read_only: Path) -> None:
    before = digest(read_only)
    files = sorted(read_only.parent.iterdir())
    code, out, err = invoke("prices", "list", "--provider", "gcp", "--limit", "3", "--json")
    assert code == 0, err
    assert '"provider": "gcp"' in out
    code, out, err = invoke("prices", "show", "a2-highgpu-1g", "--json")
    assert code == 0, err
    assert digest(read_only) == before
    assert sorted(read_only.parent.iterdir()) == files  # no -wal, no -shm
    assert intact(read_only)
    db = database.connect()
    assert store.read_only(db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("DELETE FROM current_prices")


def test_a_refresh_of_a_read_only_database_is_one_line(read_only: Path) -> None:
    before = digest(read_only)
    line = one_error(*invoke("prices", "refresh", "--source", "skypilot/gcp")[::2])
    assert "is read-only here" in line and "ADVISOR_HOME" in line
    assert digest(read_only) == before


def test_a_text_file_is_not_taken_for_a_database() -> None:
    path = locations.database_path()
    path.parent.mkdir(parents=True)
    path.write_text("these are my notes, not a database\n" * 200)
    before = digest(path)
    line = one_error(*invoke("prices", "list")[::2])
    assert "is not a SQLite database" in line and "advisor locate" in line
    assert digest(path) == before


def test_a_database_from_a_newer_advisor_is_refused(user_db: Path) -> None:
    conn = sqlite3.connect(user_db)
    with conn:
        conn.execute("UPDATE schema_versions SET version = version + 1 WHERE component = 'pricing'")
    conn.close()
    line = one_error(*invoke("prices", "list")[::2])
    assert "newer than this advisor knows" in line and "upgrade advisor" in line


def test_a_damaged_page_says_how_to_recover(user_db: Path) -> None:
    conn = sqlite3.connect(user_db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'rentables'").fetchone()
    conn.close()
    with user_db.open("r+b") as handle:  # garbage over the table that every listing reads
        handle.seek((root - 1) * page_size)
        handle.write(bytes(range(256)) * (page_size // 256))
    assert not intact(user_db)
    line = one_error(*invoke("prices", "list")[::2])
    assert "is damaged" in line and "advisor locate" in line and "move the file aside" in line
    user_db.rename(user_db.with_suffix(".damaged"))  # the recovery the line describes
    code, out, err = invoke("prices", "list", "--provider", "lambda", "--json")
    assert code == 0 and '"provider": "lambda"' in out, err


def test_the_shipped_seed_is_never_opened_for_writing() -> None:
    path = locations.shipped(seed.SEED_FILE)
    before = digest(path)
    db = store.connect(path)
    assert store.read_only(db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("DELETE FROM seed_prices")
    database.connect()  # seeding the user's database reads the seed
    assert digest(path) == before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"prices = 5\n", "prices must be a table"),
        (
            b'[prices]\nttl_days = "7"\n',
            "prices.ttl_days must be a finite positive number, not '7'",
        ),
        (b"[prices]\nttl_days = true\n", "prices.ttl_days must be a finite positive number"),
        (
            b'[refresh]\ndeadline_seconds = "fast"\n',
            "refresh.deadline_seconds must be a finite posi",
        ),
        (b"[refresh]\nmax_body_mib = 0\n", "refresh.max_body_mib must be a finite positive number"),
        (b"[refresh]\nmax_download_mib = 1e9\n", "refresh.max_download_mib must be at most"),
        (b"sources = [1, 2]\n", "sources must be a table"),
        (b"[sources]\nskypilot_url = 5\n", "sources.skypilot_url must be an http(s) URL"),
        (b"# caf\xe9\n[prices]\nttl_days = 7\n", "not UTF-8 text (byte 5)"),
        (b"[prices\n", "cannot read"),
    ],
    ids=[
        "table-a-number",
        "number-a-string",
        "number-a-bool",
        "deadline-a-string",
        "zero-cap",
        "huge-cap",
        "sources-a-list",
        "url-a-number",
        "not-utf8",
        "not-toml",
    ],
)
def test_a_bad_config_is_one_line(text: bytes, says: str) -> None:
    path = locations.config_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(text)
    line = one_error(*invoke("prices")[::2])
    assert says in line and str(path) in line


def test_an_older_read_only_database_still_recommends_from_its_stored_probe(
    user_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database written before the probe runs were kept (probe tables at version 1), in a
    folder this advisor may not write: the stored probe is read and ranked, no history needed."""
    from tests.recommend.test_service import stored_mlp_probe

    stored_mlp_probe()
    conn = sqlite3.connect(user_db)
    with conn:
        conn.execute("DROP TABLE probe_runs")
        conn.execute("UPDATE schema_versions SET version = 1 WHERE component = 'probes'")
    conn.close()
    before = digest(user_db)
    with read_only_folder(user_db, monkeypatch):
        code, out, err = invoke("recommend", "--model", "mlp", "--deadline", "8h", "--json")
    assert code == 0, err
    assert '"workload": "mnist_mlp"' in out
    assert digest(user_db) == before
