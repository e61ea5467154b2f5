"""The exchange format (reference/README.md): measured results as CSV rows, one metric a row.

``read_csv`` is strict and reusable (``advisor validate --reference`` reads the same format): it
checks the header, types and metric names and names the file and line of the first bad row.
A probe's export carries, in the ``notes`` of its ``seconds_total`` row, the ``key=value`` fields
that ``from_rows`` needs to rebuild the full ``ProbeResult`` on another machine.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError
from probes.result import Fingerprint, ProbeResult, WorkloadConfig

COLUMNS = ("source", "workload", "device", "vcpus", "cpu_family", "software", "precision",
           "batch_size", "epochs", "metric", "value", "notes")  # fmt: skip
METRICS = ("seconds_total", "seconds_per_epoch", "samples_per_second", "steps_per_second")
PRECISIONS = ("fp32", "fp16", "mixed", "tf32", "bf16")
MARK = "advisor probe"


def to_rows(result: ProbeResult) -> list[dict[str, Any]]:
    """The rows of one probe result: total, per epoch, samples/s and steps/s."""
    c, d = result.config, result.device
    common = {
        "source": f"advisor-probe-{d.key}",
        "workload": c.workload,
        "device": d.accelerator or "CPU",
        "vcpus": d.threads if d.accelerator is None else "",
        "cpu_family": d.cpu_model,
        "software": f"tensorflow-{d.tensorflow}",
        "precision": d.precision,
        "batch_size": c.batch_size,
        "epochs": c.epochs,
    }
    facts = {
        "samples": c.samples, "validation_samples": c.validation_samples,
        "step_s": result.step_seconds, "step_low": result.step_interval[0],
        "step_high": result.step_interval[1], "validation_step_s": result.validation_step_seconds,
        "epoch_overhead_s": result.epoch_overhead_seconds, "startup_s": result.startup_seconds,
        "low": result.predicted_interval[0], "high": result.predicted_interval[1],
        "probe_s": result.probe_seconds, "flops_per_sample": result.flops_per_sample,
        "parameters": result.parameters, "peak_host_bytes": result.peak_host_bytes,
        "extrapolated": int(result.extrapolated), "created_at": result.created_at,
        "logical_cpus": d.logical_cpus, "threads": d.threads,
        "accelerator_memory_gib": d.accelerator_memory_gib or "", "onednn": int(d.onednn),
        "xla": int(d.xla),
    }  # fmt: skip
    notes = "; ".join([MARK, *(f"{k}={_clean(v)}" for k, v in facts.items())])
    return [
        {**common, "metric": "seconds_total", "value": result.predicted_seconds, "notes": notes},
        {**common, "metric": "seconds_per_epoch", "value": result.predicted_seconds / c.epochs,
         "notes": MARK},
        {**common, "metric": "samples_per_second", "value": result.samples_per_second,
         "notes": MARK},
        {**common, "metric": "steps_per_second", "value": 1 / result.step_seconds, "notes": MARK},
    ]  # fmt: skip


def write_csv(path: Path | str, results: Iterable[ProbeResult]) -> int:
    """Write ``results`` to ``path``; returns the number of rows written."""
    rows = [row for result in results for row in to_rows(result)]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def read_csv(path: Path | str) -> list[dict[str, Any]]:
    """Parse an exchange-format file into typed rows; the first bad row is a clear error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AdvisorError(f"cannot read {path}: {exc}") from None
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames is None or tuple(reader.fieldnames) != COLUMNS:
        raise AdvisorError(f"{path}: header must be {','.join(COLUMNS)}")
    rows = []
    for line, raw in enumerate(reader, start=2):
        try:
            rows.append(_parse(raw))
        except ValueError as exc:
            raise AdvisorError(f"{path}:{line}: {exc}") from None
    return rows


def _parse(raw: dict[str, str | None]) -> dict[str, Any]:
    if None in raw or any(raw.get(column) is None for column in COLUMNS):
        raise ValueError("wrong number of fields")
    row: dict[str, Any] = {k: (v or "").strip() for k, v in raw.items()}
    for column in ("source", "workload", "device", "metric"):
        if not row[column]:
            raise ValueError(f"{column} is empty")
    if row["metric"] not in METRICS:
        raise ValueError(f"unknown metric {row['metric']!r} (expected one of {', '.join(METRICS)})")
    if row["precision"] and row["precision"] not in PRECISIONS:
        raise ValueError(f"unknown precision {row['precision']!r}")
    for column in ("vcpus", "batch_size", "epochs"):
        row[column] = _positive_int(column, row[column])
    try:
        row["value"] = float(row["value"])
    except ValueError:
        raise ValueError(f"value {row['value']!r} is not a number") from None
    if not math.isfinite(row["value"]) or row["value"] <= 0:
        raise ValueError(f"value must be a positive number, got {row['value']}")
    return row


def _positive_int(column: str, text: str) -> int | None:
    if text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{column} {text!r} is not a whole number") from None
    if value <= 0:
        raise ValueError(f"{column} must be > 0, got {value}")
    return value


def from_rows(rows: Iterable[dict[str, Any]]) -> list[ProbeResult]:
    """Rebuild the probe results of an export (its ``seconds_total`` rows); other rows are
    refused: published measurements belong to ``advisor validate --reference``."""
    results = []
    for row in rows:
        if not str(row["notes"]).startswith(MARK):
            raise AdvisorError(
                f"row of {row['source']}/{row['workload']} is not an advisor probe export "
                "(published measurements are read by 'advisor validate --reference')"
            )
        if row["metric"] == "seconds_total":
            results.append(_result(row))
    return results


def _result(row: dict[str, Any]) -> ProbeResult:
    facts = dict(part.split("=", 1) for part in row["notes"].split("; ")[1:])
    try:
        memory = facts["accelerator_memory_gib"]
        device = Fingerprint(
            cpu_model=row["cpu_family"], logical_cpus=int(facts["logical_cpus"]),
            threads=int(facts["threads"]),
            accelerator=None if row["device"] == "CPU" else row["device"],
            accelerator_memory_gib=float(memory) if memory else None,
            tensorflow=row["software"].removeprefix("tensorflow-"),
            onednn=facts["onednn"] == "1", xla=facts["xla"] == "1", precision=row["precision"],
        )  # fmt: skip
        config = WorkloadConfig(row["workload"], int(facts["samples"]),
                                int(facts["validation_samples"]), row["epochs"], row["batch_size"])  # fmt: skip
        step = float(facts["step_s"])
        return ProbeResult(
            config=config, device=device, step_seconds=step,
            step_interval=(float(facts["step_low"]), float(facts["step_high"])),
            validation_step_seconds=float(facts["validation_step_s"]),
            epoch_overhead_seconds=float(facts["epoch_overhead_s"]),
            startup_seconds=float(facts["startup_s"]), predicted_seconds=row["value"],
            predicted_interval=(float(facts["low"]), float(facts["high"])),
            samples_per_second=config.batch_size / step, probe_seconds=float(facts["probe_s"]),
            flops_per_sample=float(facts["flops_per_sample"]),
            parameters=int(facts["parameters"]), peak_host_bytes=int(facts["peak_host_bytes"]),
            batch_scaling={config.batch_size: step}, extrapolated=facts["extrapolated"] == "1",
            created_at=facts["created_at"],
        )  # fmt: skip
    except (KeyError, ValueError) as exc:
        raise AdvisorError(
            f"probe export row of {row['workload']} has bad or missing notes field: {exc}"
        ) from None


def _clean(value: object) -> str:
    return str(value).replace(";", ",").replace("=", ":")
