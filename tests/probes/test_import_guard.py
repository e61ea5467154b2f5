"""Poisoned probe results: refused at import with file:line, never stored, skipped when read."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from advisor.store import connect
from probes import exchange, history
from probes.validity import problem
from tests.probes.test_history import CONFIG, result


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    outcome = CliRunner().invoke(cli, list(args), input=stdin)
    return outcome.exit_code, outcome.stdout, outcome.stderr


def export_text(created: str = "2026-01-01T00:00:00+00:00", **facts: str) -> str:
    """An export of one sane result, with ``facts`` of its notes replaced."""
    buffer = io.StringIO()
    rows = exchange.to_rows(result(created=created))
    notes = rows[0]["notes"]
    for key, value in facts.items():
        parts = notes.split("; ")
        parts = [f"{key}={value}" if part.startswith(f"{key}=") else part for part in parts]
        notes = "; ".join(parts)
    rows[0]["notes"] = notes
    writer = csv.DictWriter(buffer, fieldnames=exchange.COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def stored_count() -> int:
    db = connect()
    history.ensure(db)
    return int(db.execute(f"SELECT count(*) FROM {history.TABLE}").fetchone()[0])


@pytest.mark.parametrize(
    "facts",
    [
        {"step_s": "0"},
        {"step_s": "-0.01"},
        {"step_s": "nan"},
        {"step_s": "inf"},
        {"step_s": "1e308"},
        {"low": "nan"},
        {"low": "1e308"},
        {"high": "-1"},
        {"step_low": "5", "step_high": "1"},
        {"startup_s": "-3"},
        {"samples": "0"},
        {"parameters": "99999999999999999999"},
        {"validation_step_s": "inf"},
    ],
)
def test_poisoned_export_is_refused_with_its_line(tmp_path: Path, facts: dict[str, str]) -> None:
    path = tmp_path / "poisoned.csv"
    path.write_text(export_text(**facts))
    code, _, err = invoke("import", str(path))
    assert code == 2, err
    assert f"{path}:2:" in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    assert stored_count() == 0


def test_value_column_nan_is_refused(tmp_path: Path) -> None:
    text = export_text().splitlines()
    fields = text[1].split(",")
    text[1] = ",".join([*fields[:10], "nan", *fields[11:]])
    path = tmp_path / "nan.csv"
    path.write_text("\n".join(text) + "\n")
    code, _, err = invoke("import", str(path))
    assert code == 2 and f"{path}:2:" in err


def test_bom_stdin_and_pipe_are_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_text("\ufeff" + export_text(), encoding="utf-8")
    code, out, err = invoke("import", str(path))
    assert code == 0, err and "imported 1" in out
    code, out, err = invoke("import", "-", stdin=export_text())
    assert code == 0, err
    assert "imported 1 probe result(s) from <stdin>" in out
    assert stored_count() == 1


def test_older_import_never_replaces_a_newer_probe(tmp_path: Path) -> None:
    newer, older = tmp_path / "newer.csv", tmp_path / "older.csv"
    newer.write_text(export_text(created="2026-06-01T00:00:00+00:00"))
    older.write_text(export_text(created="2026-01-01T00:00:00+00:00"))
    assert invoke("import", str(newer))[0] == 0
    code, _, err = invoke("import", str(older))
    assert code == 1 and "newer" in err and "--replace" in err
    assert len(err.strip().splitlines()) == 1
    (kept,) = history.latest(connect(), CONFIG.workload)
    assert kept.created_at.startswith("2026-06")
    assert invoke("import", "--replace", str(older))[0] == 0
    (replaced,) = history.latest(connect(), CONFIG.workload)
    assert replaced.created_at.startswith("2026-01")


def test_a_noisy_probe_whose_interval_starts_at_zero_is_stored() -> None:
    """A probe's step interval is clipped at 0 when its noise exceeds its mean (probes/run.py)."""
    noisy = dataclasses.replace(result(), step_interval=(0.0, 0.08))
    assert problem(noisy) is None
    history.save(connect(), noisy)
    extrapolated = dataclasses.replace(result(), step_interval=(-0.01, 0.08))
    history.save(connect(), extrapolated)  # a negative lower end is raised to 0, not refused
    (stored,) = history.latest(connect(), CONFIG.workload)
    assert stored.step_interval == (0.0, 0.08)


def test_save_refuses_and_read_skips_a_bad_row(caplog: pytest.LogCaptureFixture) -> None:
    db = connect()
    bad = dataclasses.replace(result(), step_seconds=0.0)
    assert problem(bad) is not None
    with pytest.raises(Exception, match="refusing to store"):
        history.save(db, bad)
    history.save(db, result())
    blob = json.loads(history.to_json(result()))
    blob["predicted_interval"] = [float("nan"), 1e308]
    db.execute(f"UPDATE {history.TABLE} SET result = ?", [json.dumps(blob)])
    db.conn.commit()
    with caplog.at_level(logging.WARNING):
        assert history.latest(db, CONFIG.workload) == []
        assert history.find(db, CONFIG, result().device.key) is None
    assert "skipping a stored probe" in caplog.text
    db.execute(f"UPDATE {history.TABLE} SET result = ?", ["{not json"])
    db.conn.commit()
    assert history.latest(db, CONFIG.workload) == []


def test_a_stored_probe_nested_thousands_deep_is_skipped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A damaged row nested 400,000 levels deep failed every recommend of its workload with
    "input nested too deeply to read"; it is skipped, named, as any unreadable row is."""
    db = connect()
    history.save(db, result())
    db.execute(f"UPDATE {history.TABLE} SET result = ?", ["[" * 400_000 + "]" * 400_000])
    db.conn.commit()
    with caplog.at_level(logging.WARNING):
        assert history.latest(db, CONFIG.workload) == []
        assert history.find(db, CONFIG, result().device.key) is None
    assert f"skipping a stored probe of {CONFIG.workload}: unreadable (nested too deeply)" in (
        caplog.text
    )


@pytest.mark.parametrize("data", [b'a\rb\rc"x\r', b"x\x00y\rz", bytes(range(256)) * 8])
def test_binary_on_stdin_is_one_line_that_names_no_line_zero(data: bytes) -> None:
    """Python's csv said 'new-line character seen in unquoted field - do you need to open the
    file in universal-newline mode?' at '<stdin>:0'."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "advisor", "import", "-"], input=data, capture_output=True,
        timeout=120,
    )  # fmt: skip
    err = run.stderr.decode()
    assert run.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error: <stdin>")
    assert "universal-newline" not in err and "<stdin>:0" not in err
    assert stored_count() == 0
