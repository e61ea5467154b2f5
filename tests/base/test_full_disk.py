"""A full disk, for real (a private tmpfs filled to its last byte, ``tests/fixtures/disks``):
reads keep working, every write says which disk is full and what to free, nothing is lost, and
no SQLite text reaches the user."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from tests.fixtures.disks import on_disk
from tests.inputs import result_csv

ROOT = Path(__file__).resolve().parents[2]
SQLITE_TEXT = ("disk I/O error", "database or disk is full", "readonly database", "sqlite")


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the seed prices and a stored probe of mlp, every connection closed."""
    home = tmp_path_factory.mktemp("seed")
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    for args, given in (
        (["prices", "list", "--limit", "1"], None),
        (["import", "-"], result_csv()),
    ):
        subprocess.run([sys.executable, "-m", "advisor", *args], input=given, text=True,
                       env=env, check=True, capture_output=True, cwd=ROOT)  # fmt: skip
    return home


def run_full(
    seed: Path, tmp_path: Path, *args: str, given: str = ""
) -> tuple[int, str, str, float]:
    """``advisor *args`` with ADVISOR_HOME a full disk holding a copy of ``seed``; afterwards
    its database's integrity and row counts are printed on the last line of stdout."""
    home = tmp_path / "full"
    home.mkdir()
    after = (
        "import sqlite3, sys, json; c = sqlite3.connect(f'file:{sys.argv[1]}?mode=ro&immutable=1',"
        " uri=True); print(json.dumps([c.execute('PRAGMA integrity_check').fetchone()[0], "
        "c.execute('SELECT COUNT(*) FROM prices').fetchone()[0], "
        "c.execute('SELECT COUNT(*) FROM probe_results').fetchone()[0]]))"
    )
    database = home / "data" / "advisor.sqlite"
    script = f'"$0" -m advisor "$@"; code=$?; "$0" -c "{after}" {database}; exit $code'
    command = on_disk(["sh", "-c", script, sys.executable, *args], str(home), str(seed))
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False,
                          input=given, env={**os.environ, "ADVISOR_HOME": str(home)})  # fmt: skip
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - started


def counts(seed: Path) -> list:
    with closing(sqlite3.connect(seed / "data" / "advisor.sqlite")) as conn:
        prices = conn.execute("SELECT COUNT(*) FROM prices").fetchone()[0]
        probes = conn.execute("SELECT COUNT(*) FROM probe_results").fetchone()[0]
    return ["ok", prices, probes]


@pytest.mark.parametrize(
    "args",
    [
        ("prices", "list", "--limit", "2", "--json"),
        ("recommend", "--model", "mlp", "--top", "1", "--json"),
        ("prices", "--json"),
    ],
)
def test_commands_that_only_read_keep_working(seed: Path, tmp_path: Path, args: tuple) -> None:
    code, out, err, _ = run_full(seed, tmp_path, *args)
    assert code == 0, err
    *printed, state = out.strip().splitlines()
    assert json.loads("\n".join(printed))
    warnings = err.strip().splitlines()
    if args[0] == "prices" and len(args) == 2:  # the seed's own: stale until a refresh
        assert warnings.pop().startswith("advisor: warning: seed/all prices are stale")
    (warning,) = warnings
    assert warning.startswith("advisor: warning: the disk holding ") and "is full" in warning
    assert json.loads(state) == counts(seed)


@pytest.mark.parametrize(
    "args",
    [
        ("probe", "--model", "mlp", "--fresh", "--budget", "10"),
        ("prices", "refresh", "--source", "skypilot/gcp"),
        ("import", "-"),
    ],
)
def test_writes_say_the_disk_is_full_and_what_to_free(
    seed: Path, tmp_path: Path, args: tuple
) -> None:
    given = result_csv("2026-07-01T00:00:00+00:00") if args == ("import", "-") else ""
    code, out, err, seconds = run_full(seed, tmp_path, *args, given=given)
    assert code == 1 and seconds < 8  # refused before the probe's ten seconds or a download
    lines = [line for line in err.splitlines() if line.strip()]  # a progress bar ends blank
    assert "Traceback" not in err and all(t not in err for t in SQLITE_TEXT), err
    error = lines[-1]
    assert error.startswith("advisor: error: ") and len(lines) <= 2
    assert "is full (0 bytes free): free space on it" in error and "ADVISOR_HOME" in error
    assert json.loads(out.strip().splitlines()[-1]) == counts(seed)
