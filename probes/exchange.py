"""The exchange format (docs/SOURCES.md, "Calibration measurements"): measured results as CSV rows, one metric a row.

This module owns the format: its vocabulary, the writer of probe results (``write_csv``) and the
one reader (``read_csv``). Every user of the format reads through ``read_csv``: ``advisor import``
(then ``from_rows``), ``advisor validate --reference`` and the calibration fit (through
``advisor.fitting.published``, which adds what estimation derives from a row). The reader is
strict: typed ``Row``s, or one ``UsageError`` naming the file and line of the first bad row.
A probe's export carries, in the ``notes`` of its ``seconds_total`` row, the ``key=value`` fields
that ``from_rows`` needs to rebuild the full ``ProbeResult`` on another machine.
"""

from __future__ import annotations

import csv
import io
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, overload

from advisor import display
from advisor.errors import AdvisorError, UsageError
from advisor.workloads import llm_job, zoo
from probes import backend
from probes.result import Architecture, Fingerprint, ProbeResult, RecurrentLayer, WorkloadConfig
from probes.validity import problem

COLUMNS = ("source", "workload", "device", "vcpus", "cpu_family", "software", "precision",
           "batch_size", "epochs", "metric", "value", "notes", "backend")  # fmt: skip
LEGACY_COLUMNS = COLUMNS[:-1]
"""The header before the ``backend`` column: such a file's rows were all measured on
TensorFlow, and read so."""
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
        "software": f"{d.backend}-{d.tensorflow}",
        "precision": d.precision,
        "batch_size": c.batch_size,
        "epochs": c.epochs,
        "backend": d.backend,
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
        "threads_per_core": d.threads_per_core, "devices": d.devices, "nodes": d.nodes,
        "accelerator_memory_gib": d.accelerator_memory_gib or "", "onednn": int(d.onednn),
        "xla": int(d.xla), "dispatch_s": result.dispatch_seconds,
        "layer_dispatch_s": result.layer_dispatch_seconds, "host_layers": result.host_layers,
        "device_kernels": result.device_kernels, "keras": int(result.keras),
    }  # fmt: skip
    if result.architecture is not None:
        facts["architecture"] = architecture_note(result.architecture)
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
    """Write ``results`` to ``path``; returns the number of rows written. (``advisor probe
    --export`` writes ``csv_text`` through ``advisor.recommend.files.write_atomic`` instead.)"""
    text = csv_text(results)
    with open(path, "w", newline="") as handle:
        handle.write(text)
    return text.count("\n") - 1


def csv_text(results: Iterable[ProbeResult]) -> str:
    """``results`` as the text of an exchange file."""
    rows = [row for result in results for row in to_rows(result)]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


@dataclass(frozen=True)
class Row:
    """One row of an exchange file, parsed and checked: one metric of one measured run."""

    source: str
    """One benchmark campaign: rows compare only within one source."""
    workload: str
    """A zoo id, or any other name (its users skip what they cannot model)."""
    device: str
    """Accelerator name as the prices spell it, or ``CPU``."""
    vcpus: int | None
    """The machine's vCPUs; every CPU row has them."""
    cpu_family: str | None
    """A CPU family (``skylake``) or a CPU model string (a probe's export), when known."""
    software: str
    """The framework and its build, e.g. ``tensorflow-2.21.0``, ``jax-0.10.2``."""
    precision: str
    """One of ``PRECISIONS``; an empty field reads as ``fp32``."""
    batch_size: int
    epochs: int | None
    """Every ``seconds_total`` row has them."""
    metric: str
    """One of ``METRICS``."""
    value: float
    """The figure in the metric's unit: positive and finite."""
    notes: str = ""
    backend: str = backend.DEFAULT
    """The Keras backend that trained (``probes.backend.NAMES``); an empty field, or a file
    without the column, reads as TensorFlow."""
    line: int = 0
    """The line of its file the row ends on (the header is line 1)."""
    assumed: tuple[str, ...] = ()
    """Optional fields left empty and filled with a stated default (``batch_size``: the zoo's)."""


@dataclass(frozen=True)
class Problem:
    """A row the lenient reader skipped: where it is and why."""

    line: str
    """``file:line``."""
    reason: str


@overload
def read_csv(path: Path | str, *, strict: Literal[True] = ...) -> list[Row]: ...
@overload
def read_csv(path: Path | str, *, strict: Literal[False]) -> tuple[list[Row], list[Problem]]: ...


def read_csv(
    path: Path | str, *, strict: bool = True
) -> list[Row] | tuple[list[Row], list[Problem]]:
    """Every row of an exchange-format file, or a ``UsageError`` naming the file and line of the
    first bad row: never a partial read. ``-`` reads standard input; a pipe (``<(...)``) reads
    like a file; a UTF-8 byte-order mark (spreadsheets write one) is skipped.

    With ``strict=False`` a bad row is skipped and returned as a ``Problem`` (``file:line`` and
    why) beside the good rows, and an empty ``batch_size`` (published throughput tables often
    leave it out) takes the workload's batch size from the zoo, named in the row's ``assumed``.
    A file that cannot be read or has the wrong header still raises."""
    if str(path) == "-":
        if sys.stdin is None:  # started with stdin closed (<&-)
            raise UsageError("standard input is closed; nothing to read from '-'")
        return _read(sys.stdin, "<stdin>", strict)
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a folder, not an exchange-format file")
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            return _read(handle, str(path), strict)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


MAX_ROWS = 50_000
"""Most rows one exchange file may hold: the shipped benchmarks have about a thousand, a probe
export four. Reading stops past it, so a file of any size costs bounded memory."""
MAX_LINE_CHARS = 64 * 1024
"""Longest line read: a real row is a few hundred characters."""
MAX_FILE_CHARS = 16 * 1024 * 1024
"""Most characters read from one file (the shipped benchmarks hold 32,000, 50,000 rows of a
probe export about 15 million): with ``MAX_ROWS``, what bounds an import's memory."""


def _lines(handle: TextIO, name: str) -> Iterable[str]:
    """The lines of ``handle`` read one at a time (never the whole file), the first without a
    UTF-8 byte-order mark; each bounded by ``MAX_LINE_CHARS``."""
    first = True
    read = 0
    while line := handle.readline(MAX_LINE_CHARS + 1):
        if len(line) > MAX_LINE_CHARS:
            raise UsageError(f"{name}: a line over {MAX_LINE_CHARS:,} characters; not this format")
        read += len(line)
        if read > MAX_FILE_CHARS:
            raise UsageError(
                f"{name}: more than {MAX_FILE_CHARS // 1024**2} MiB; split the file (at most "
                f"{MAX_FILE_CHARS // 1024**2} MiB are read at once, so memory stays bounded)"
            )
        if first:
            line, first = line.removeprefix("\ufeff"), False
        yield line


def _read(handle: TextIO, name: str, strict: bool) -> list[Row] | tuple[list[Row], list[Problem]]:
    try:
        return _read_rows(handle, name, strict)
    except UnicodeDecodeError:
        raise UsageError(f"{name}: not a UTF-8 text file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


def _read_rows(
    handle: TextIO, name: str, strict: bool
) -> list[Row] | tuple[list[Row], list[Problem]]:
    reader = csv.DictReader(_lines(handle, name))
    try:
        if tuple(reader.fieldnames or ()) not in (COLUMNS, LEGACY_COLUMNS):
            raise UsageError(
                f"{name}: not in the reference format: the header must be {','.join(COLUMNS)}"
                " (or the same without backend)"
            )
        rows: list[Row] = []
        problems: list[Problem] = []
        for raw in reader:
            if len(rows) + len(problems) >= MAX_ROWS:
                raise UsageError(
                    f"{name}: more than {MAX_ROWS:,} rows; split the file (at most {MAX_ROWS:,} "
                    "rows are read at once, so memory stays bounded)"
                )
            try:
                rows.append(_row(raw, reader.line_num, lenient=not strict))
            except ValueError as exc:
                if strict:
                    raise UsageError(f"{name}:{reader.line_num}: {exc}") from None
                problems.append(Problem(f"{name}:{reader.line_num}", str(exc)))
        return rows if strict else (rows, problems)
    except csv.Error:  # Python's own wording ("universal-newline mode") says nothing here
        where = f"{name}:{max(reader.line_num, 1)}"
        raise UsageError(
            f"{where}: not CSV text (a stray carriage return, a NUL byte or an unclosed quote; "
            "is it a binary file?)"
        ) from None


def _row(raw: dict[Any, str | None], line: int, *, lenient: bool = False) -> Row:
    """The typed row of one CSV record; a ``ValueError`` says what is wrong with it."""
    if None in raw or None in raw.values():
        expected = len([k for k in raw if k is not None])
        raise ValueError(f"wrong number of fields (expected {expected})")
    text = {column: (raw.get(column) or "").strip() for column in COLUMNS}
    assumed: tuple[str, ...] = ()
    if lenient and text["workload"] and not text["batch_size"]:
        text["batch_size"], assumed = _default_batch_size(text["workload"]), ("batch_size",)
    for column in ("source", "workload", "device", "batch_size", "metric", "value"):
        if not text[column]:
            raise ValueError(f"{column} is empty")
    if text["metric"] not in METRICS:
        raise ValueError(
            f"unknown metric {text['metric']!r} (expected one of {', '.join(METRICS)})"
        )
    precision = text["precision"] or "fp32"
    if precision not in PRECISIONS:
        raise ValueError(
            f"unknown precision {precision!r} (expected one of {', '.join(PRECISIONS)})"
        )
    framework = text["backend"].lower() or backend.DEFAULT
    if framework not in backend.NAMES:
        raise ValueError(
            f"unknown backend {framework!r} (expected one of {', '.join(backend.NAMES)})"
        )
    vcpus = whole_number("vcpus", text["vcpus"]) if text["vcpus"] else None
    epochs = whole_number("epochs", text["epochs"]) if text["epochs"] else None
    batch_size, value = whole_number("batch_size", text["batch_size"]), figure(text["value"])
    if text["metric"] == "seconds_total" and epochs is None:
        raise ValueError("seconds_total needs epochs")
    if text["device"].upper() == "CPU" and vcpus is None:
        raise ValueError("a CPU row needs vcpus")
    return Row(
        source=text["source"], workload=text["workload"], device=text["device"], vcpus=vcpus,
        cpu_family=text["cpu_family"] or None, software=text["software"], precision=precision,
        batch_size=batch_size, epochs=epochs, metric=text["metric"], value=value,
        notes=text["notes"], backend=framework, line=line, assumed=assumed,
    )  # fmt: skip


def _default_batch_size(workload: str) -> str:
    try:
        return str(zoo.get(workload).batch_size)
    except UsageError:
        raise ValueError(
            f"batch_size is empty and {workload!r} is not a zoo workload (no default)"
        ) from None


def whole_number(column: str, text: str) -> int:
    """``text`` as a positive whole number, or a ``ValueError`` naming ``column``."""
    try:
        number = int(text)
    except ValueError:
        raise ValueError(f"{column} {text!r} is not a whole number") from None
    if number <= 0:
        raise ValueError(f"{column} must be positive, got {number}")
    return number


def figure(text: str) -> float:
    """``text`` as a measured figure: positive, finite and within the format's bounds, or a
    ``ValueError`` saying why."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"value {text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"value must be positive and finite, got {text}")
    if not MIN_FIGURE <= value <= MAX_FIGURE:
        raise ValueError(f"value {text} is outside {MIN_FIGURE:g} to {MAX_FIGURE:g}")
    return value


MIN_FIGURE, MAX_FIGURE = 1e-9, 1e12
"""Every metric's figure lies between these: a step of a nanosecond, a run of 30,000 years or
a trillion samples a second are not measurements, and their ratios would overflow."""


def _flag(text: str, name: str) -> bool:
    """A 0/1 fact as a bool, or a ``ValueError`` naming it."""
    if text not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, got {text[:20]!r}")
    return text == "1"


def _created_at(text: str) -> str:
    """An ISO-8601 date and time, as UTC in one spelling (stored dates compare as strings)."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"created_at {text[:40]!r} is not an ISO-8601 date and time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if not 2000 <= moment.year <= 2200:
        raise ValueError(f"created_at {text[:40]!r} is not a plausible date")
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def from_rows(rows: Iterable[Row], name: str = "export") -> list[ProbeResult]:
    """Rebuild the probe results of an export (its ``seconds_total`` rows); other rows are
    refused: published measurements belong to ``advisor validate --reference``. A result that is
    not sane (``probes.validity``: a zero, negative or non-finite time, an interval that misses
    its value) is refused with ``name:line``."""
    results = []
    for row in rows:
        if not row.notes.startswith(MARK):
            raise AdvisorError(
                f"row of {row.source}/{row.workload} is not an advisor probe export "
                "(published measurements are read by 'advisor validate --reference')"
            )
        if row.metric == "seconds_total":
            if not _reachable(row.workload):
                raise UsageError(
                    f"{name}:{row.line}: workload {display.quoted(row.workload)} is neither a zoo "
                    "workload nor a model file's id (file:<16 hex digits>) nor an LLM job's "
                    "proxy (llm:...): no command could find its probe; nothing imported"
                )
            try:
                result = _result(row)
            except (KeyError, ValueError, TypeError, OverflowError, ZeroDivisionError) as exc:
                raise UsageError(
                    f"{name}:{row.line}: probe export row of {row.workload} has a bad or missing "
                    f"notes field: {exc}"
                ) from None
            wrong = problem(result)
            if wrong is not None:
                raise UsageError(
                    f"{name}:{row.line}: refusing the probe of {row.workload}: {wrong}"
                )
            results.append(result)
    return results


_FILE_ID = re.compile(r"file:[0-9a-f]{16}")


def _reachable(workload: str) -> bool:
    """Whether a stored probe of ``workload`` can be found again: the id of a zoo workload, of a
    model file (``probes.spec``: ``file:`` and 16 hex digits of its SHA-256), or of an LLM job's
    proxy, the name ``advisor.workloads.llm_job.probe_name`` gives the job it stands for."""
    known = any(w.id == workload for w in zoo.WORKLOADS)
    if known or _FILE_ID.fullmatch(workload) is not None:
        return True
    if not llm_job.is_probe_name(workload):
        return False
    try:
        return llm_job.probe_name(llm_job.job_of_probe(workload, 1, 1, 1)) == workload
    except (AdvisorError, ValueError):
        return False


def _result(row: Row) -> ProbeResult:
    assert row.epochs is not None  # the reader refuses a seconds_total row without epochs
    facts = dict(part.split("=", 1) for part in row.notes.split("; ")[1:])
    memory = facts["accelerator_memory_gib"]
    device = Fingerprint(
        cpu_model=row.cpu_family or "", logical_cpus=int(facts["logical_cpus"]),
        threads=int(facts["threads"]),
        accelerator=None if row.device == "CPU" else row.device,
        accelerator_memory_gib=float(memory) if memory else None,
        tensorflow=row.software.removeprefix(f"{row.backend}-"),
        onednn=facts["onednn"] == "1", xla=facts["xla"] == "1", precision=row.precision,
        backend=row.backend,
        threads_per_core=int(facts.get("threads_per_core", "0")),  # older exports: not read
        devices=int(facts.get("devices", "1")), nodes=int(facts.get("nodes", "1")),  # one
    )  # fmt: skip
    config = WorkloadConfig(row.workload, int(facts["samples"]),
                            int(facts["validation_samples"]), row.epochs, row.batch_size)  # fmt: skip
    step = float(facts["step_s"])
    if not math.isfinite(step) or step <= 0:
        raise ValueError(f"step_s must be positive and finite, got {facts['step_s']}")
    return ProbeResult(
        config=config, device=device, step_seconds=step,
        step_interval=(float(facts["step_low"]), float(facts["step_high"])),
        validation_step_seconds=float(facts["validation_step_s"]),
        epoch_overhead_seconds=float(facts["epoch_overhead_s"]),
        startup_seconds=float(facts["startup_s"]), predicted_seconds=row.value,
        predicted_interval=(float(facts["low"]), float(facts["high"])),
        samples_per_second=config.batch_size / step, probe_seconds=float(facts["probe_s"]),
        flops_per_sample=float(facts["flops_per_sample"]),
        parameters=int(facts["parameters"]), peak_host_bytes=int(facts["peak_host_bytes"]),
        batch_scaling={config.batch_size: step}, extrapolated=facts["extrapolated"] == "1",
        created_at=_created_at(facts["created_at"]),
        architecture=architecture_of_note(facts["architecture"]) if "architecture" in facts else None,
        # the host's floor (older files lack it: 0, not measured)
        dispatch_seconds=float(facts.get("dispatch_s", 0)),
        layer_dispatch_seconds=float(facts.get("layer_dispatch_s", 0)),
        host_layers=int(facts.get("host_layers", 0)),
        device_kernels=int(facts.get("device_kernels", 0)),
        keras=_flag(facts.get("keras", "1"), "keras"),
    )  # fmt: skip


def architecture_note(counted: Architecture) -> str:
    """A probe's counted architecture in one notes value:
    ``flops|winograd|activations|layers|input_bytes|matmul_rows``, each recurrent layer
    ``cell:units:inputs:timesteps:directions:sequences:cudnn``, joined by ``+`` (an optional
    field: exports without it, or without its input bytes or products' rows, still import)."""
    layers = "+".join(
        f"{r.cell}:{r.units}:{r.inputs}:{r.timesteps}:{r.directions}:{r.sequences}:{int(r.cudnn)}"
        for r in counted.recurrent
    )
    return (
        f"{counted.train_flops_per_sample:.6g}|{counted.winograd_share:.4g}|"
        f"{counted.activation_elements:.6g}|{layers}|{counted.input_bytes:.6g}|"
        f"{counted.matmul_rows:.6g}"
    )


def architecture_of_note(text: str) -> Architecture:
    """The inverse of ``architecture_note`` (a ValueError on anything else)."""
    fields = text.split("|")
    if len(fields) not in (4, 5, 6):
        raise ValueError(f"an architecture has 4 to 6 fields, got {len(fields)}")
    flops, winograd, activations, layers = fields[:4]
    input_bytes = float(fields[4]) if len(fields) >= 5 else 0.0
    matmul_rows = float(fields[5]) if len(fields) == 6 else 0.0
    recurrent = []
    for layer in filter(None, layers.split("+")):
        cell, *counts, cudnn = layer.split(":")
        if len(counts) != 5 or cudnn not in ("0", "1"):
            raise ValueError(f"bad recurrent layer {layer[:40]!r}")
        units, inputs, timesteps, directions, sequences = (int(c) for c in counts)
        recurrent.append(
            RecurrentLayer(cell, units, inputs, timesteps, directions, sequences, cudnn == "1")
        )
    # ranges are checked with the rest of the result (probes.validity)
    return Architecture(
        float(flops), float(winograd), float(activations), tuple(recurrent),
        input_bytes=input_bytes, matmul_rows=matmul_rows,
    )  # fmt: skip


def _clean(value: object) -> str:
    return str(value).replace(";", ",").replace("=", ":")
