"""Probe results in SQLite and in the exchange CSV: store, reuse, export, import."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from advisor.errors import AdvisorError
from advisor.store import connect, schema_version
from probes import exchange, store
from probes.device import fingerprint
from probes.result import Fingerprint, ProbeResult, WorkloadConfig

CONFIG = WorkloadConfig("imdb_bilstm", 25_000, 25_000, 4, 32)


def result(
    config: WorkloadConfig = CONFIG,
    device: Fingerprint | None = None,
    created: str = "2026-01-01T00:00:00+00:00",
) -> ProbeResult:
    return ProbeResult(
        config=config, device=device or fingerprint(), step_seconds=0.0371,
        step_interval=(0.0363, 0.0379), validation_step_seconds=0.0117,
        epoch_overhead_seconds=0.0465, startup_seconds=3.85, predicted_seconds=150.25,
        predicted_interval=(140.5, 161.0), samples_per_second=862.5, probe_seconds=15.5,
        flops_per_sample=59e6, parameters=2_658_945, peak_host_bytes=793_169_920,
        thread_scaling={1: 0.06, 2: 0.0371}, batch_scaling={32: 0.0371}, created_at=created,
    )  # fmt: skip


def test_save_find_and_reuse(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db")
    here = fingerprint()
    assert store.find(db, CONFIG, here.key) is None
    store.save(db, result())
    assert schema_version(db, "probes") == len(store.STEPS)
    assert store.find(db, CONFIG, here.key) == result()
    assert store.find(db, dataclasses.replace(CONFIG, epochs=5), here.key) is None
    newer = dataclasses.replace(result(), predicted_seconds=99.0)
    store.save(db, newer)  # same key: replaced, not duplicated
    assert store.find(db, CONFIG, here.key) == newer
    assert len(store.latest(db, "imdb_bilstm")) == 1
    reopened = connect(tmp_path / "a.db")
    assert store.find(reopened, CONFIG, here.key) == newer


def test_latest_includes_other_devices(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db")
    gpu = dataclasses.replace(fingerprint(), accelerator="T4", accelerator_memory_gib=15.0)
    store.save(db, result())
    store.save(db, result(device=gpu, created="2026-02-01T00:00:00+00:00"), source="import:x.csv")
    found = store.latest(db, "imdb_bilstm")
    assert [r.device.accelerator for r in found] == ["T4", None]
    assert store.latest(db, "mnist_mlp") == []


def test_export_import_round_trip(tmp_path: Path) -> None:
    original = result()
    path = tmp_path / "probe.csv"
    assert exchange.write_csv(path, [original]) == 4
    rows = exchange.read_csv(path)
    assert {row["metric"] for row in rows} == set(exchange.METRICS)
    (back,) = exchange.from_rows(rows)
    assert back.device == original.device and back.device.key == original.device.key
    assert back.config == original.config
    for name in ("step_seconds", "step_interval", "predicted_seconds", "predicted_interval",
                 "startup_seconds", "validation_step_seconds", "epoch_overhead_seconds",
                 "parameters", "flops_per_sample", "created_at", "extrapolated"):  # fmt: skip
        assert getattr(back, name) == getattr(original, name), name


def test_reading_is_strict(tmp_path: Path) -> None:
    good = tmp_path / "good.csv"
    exchange.write_csv(good, [result()])
    lines = good.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "\n".join([lines[0], lines[1], lines[2].replace(",seconds_per_epoch,", ",minutes,")])
    )
    with pytest.raises(AdvisorError, match=r"bad.csv:3: unknown metric 'minutes'"):
        exchange.read_csv(bad)
    bad.write_text("workload,value\nx,1\n")
    with pytest.raises(AdvisorError, match="header must be"):
        exchange.read_csv(bad)
    published = (
        ",".join(exchange.COLUMNS)
        + "\nwoolf,mnist_mlp,K80,,,tf-1.2,fp32,128,20,seconds_total,abc,\n"
    )
    bad.write_text(published)
    with pytest.raises(AdvisorError, match=r"bad\.csv:2: value 'abc' is not a number"):
        exchange.read_csv(bad)
    bad.write_text(published.replace("abc", "65.1"))
    rows = exchange.read_csv(bad)
    assert rows[0]["value"] == 65.1 and rows[0]["vcpus"] is None and rows[0]["epochs"] == 20
    with pytest.raises(AdvisorError, match="not an advisor probe export"):
        exchange.from_rows(rows)
