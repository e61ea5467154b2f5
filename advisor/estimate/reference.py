"""A strict reader of the exchange format for measured results (``benchmarks.csv`` and friends).

Columns: source, workload, device, vcpus, cpu_family, software, precision, batch_size, epochs,
metric, value, notes. A malformed file is one clear error naming the line, never a partial read.
The probes side may reuse ``read_reference``; its own ``probes.exchange.read_csv`` writes the
same format.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from advisor.errors import UsageError
from probes.exchange import COLUMNS, METRICS, PRECISIONS

# The exchange format's vocabulary is defined once, with the format's writer (probes/exchange.py).
__all__ = ["COLUMNS", "METRICS", "PRECISIONS", "ReferenceRow", "read_reference"]


@dataclass(frozen=True)
class ReferenceRow:
    """One published or imported measurement."""

    source: str
    """One benchmark campaign: rows compare only within one source."""
    workload: str
    device: str
    """Accelerator name as the prices spell it, or ``CPU``."""
    vcpus: float | None
    cpu_family: str | None
    software: str
    precision: str
    batch_size: int
    epochs: int | None
    metric: str
    value: float
    notes: str = ""
    line: int = 0

    @property
    def is_cpu(self) -> bool:
        return self.device.upper() == "CPU"

    @property
    def tensorflow_major(self) -> int:
        match = re.search(r"tensorflow-(\d+)", self.software)
        return int(match.group(1)) if match else 2

    @property
    def vectorised(self) -> bool:
        """False for TensorFlow 1's generic pip wheel (no AVX2/FMA); True otherwise."""
        generic = self.tensorflow_major == 1 and "pip" in self.software
        return not (generic and "compiled" not in self.software)

    @property
    def label(self) -> str:
        """The device and stack, as a row of the per-device table."""
        if self.is_cpu:
            family = self.cpu_family or "family unknown"
            build = "" if self.vectorised else " generic-build"
            return f"CPU {self.vcpus:g} vCPU {family}{build}"
        return f"{self.device} {self.precision}"

    def seconds_per_sample(self, samples: int) -> float:
        """The figure as seconds per training sample (``samples`` per epoch for totals)."""
        if self.metric == "samples_per_second":
            return 1.0 / self.value
        if self.metric == "steps_per_second":
            return 1.0 / (self.value * self.batch_size)
        per_epoch = (
            self.value / (self.epochs or 1) if self.metric == "seconds_total" else self.value
        )
        return per_epoch / samples

    def figure_from_seconds_per_sample(self, seconds: float, samples: int) -> float:
        """The inverse of ``seconds_per_sample``: this row's metric for a per-sample time."""
        if self.metric == "samples_per_second":
            return 1.0 / seconds
        if self.metric == "steps_per_second":
            return 1.0 / (seconds * self.batch_size)
        per_epoch = seconds * samples
        return per_epoch * (self.epochs or 1) if self.metric == "seconds_total" else per_epoch


def read_reference(path: Path) -> list[ReferenceRow]:
    """Every row of an exchange-format CSV, or a ``UsageError`` naming the first bad line."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = tuple(reader.fieldnames or ())
            lacking = [c for c in COLUMNS if c not in header and c != "notes"]
            if lacking:
                raise UsageError(f"{path}: not in the reference format: no {', '.join(lacking)}")
            return [_row(raw, line, path) for line, raw in enumerate(reader, start=2)]
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not a UTF-8 text file") from exc


def _row(raw: dict[str, str | None], line: int, path: Path) -> ReferenceRow:
    def text(name: str) -> str:
        return (raw.get(name) or "").strip()

    def fail(message: str) -> UsageError:
        return UsageError(f"{path}:{line}: {message}")

    for name in ("source", "workload", "device", "metric", "value", "batch_size"):
        if not text(name):
            raise fail(f"{name} is empty")
    if text("metric") not in METRICS:
        raise fail(f"metric {text('metric')!r} is not one of {', '.join(METRICS)}")
    precision = text("precision") or "fp32"
    if precision not in PRECISIONS:
        raise fail(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    try:
        value = float(text("value"))
        batch = int(text("batch_size"))
        vcpus = float(text("vcpus")) if text("vcpus") else None
        epochs = int(text("epochs")) if text("epochs") else None
    except ValueError as exc:
        raise fail(f"not a number: {exc}") from exc
    if value <= 0 or batch <= 0 or (vcpus is not None and vcpus <= 0):
        raise fail("value, batch_size and vcpus must be positive")
    if text("metric") == "seconds_total" and not epochs:
        raise fail("seconds_total needs epochs")
    if text("device").upper() == "CPU" and vcpus is None:
        raise fail("a CPU row needs vcpus")
    return ReferenceRow(
        source=text("source"),
        workload=text("workload"),
        device=text("device"),
        vcpus=vcpus,
        cpu_family=text("cpu_family") or None,
        software=text("software"),
        precision=precision,
        batch_size=batch,
        epochs=epochs,
        metric=text("metric"),
        value=value,
        notes=text("notes"),
        line=line,
    )
