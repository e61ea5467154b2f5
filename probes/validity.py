"""Is a probe result sane? Checked wherever one enters the store (a probe, an import) and
wherever one is read back, so a poisoned row can never reach the arithmetic of a prediction.

A sane result has finite, positive times and sizes within ``probes.limits``, intervals that hold
their value (``low <= value <= high``) and scaling tables of finite, positive step times.
"""

from __future__ import annotations

import math

from probes.limits import (
    MAX_BATCH,
    MAX_BYTES,
    MAX_EPOCHS,
    MAX_FLOPS_PER_SAMPLE,
    MAX_PARAMETERS,
    MAX_RUN_SECONDS,
    MAX_SAMPLES,
    MAX_STEP_SECONDS,
)
from probes.result import GATES, Architecture, ProbeResult

MAX_RECURRENT_LAYERS = 10_000
MAX_NODES = 1_024
MAX_DEVICES = 65_536
"""Most nodes and devices a data-parallel probe may say it trained on (a TPU v4 pod is 4,096
chips; MLPerf's largest GPU runs, 11,616 H100s)."""
MAX_MATMUL_ROWS = 10_000_000
"""Most rows a sample may give a model's products (a million-token context is 1e6)."""
_RELATIVE_SLACK = 1e-9
"""Rounding allowed when an interval's bound equals its value."""


def problem(result: ProbeResult) -> str | None:
    """What is wrong with ``result`` (one short phrase), or None when it is sane."""
    try:
        return _problem(result)
    except (TypeError, ValueError, OverflowError) as exc:
        return f"malformed ({exc})"


def _count_problem(result: ProbeResult) -> str | None:
    """What is wrong with ``result``'s whole numbers, or None."""
    c = result.config
    counts = (
        ("samples", c.samples, 1, MAX_SAMPLES),
        ("validation_samples", c.validation_samples, 0, MAX_SAMPLES),
        ("epochs", c.epochs, 1, MAX_EPOCHS),
        ("batch_size", c.batch_size, 1, MAX_BATCH),
        ("parameters", result.parameters, 0, MAX_PARAMETERS),
        ("peak_host_bytes", result.peak_host_bytes, 0, MAX_BYTES),
        ("logical_cpus", result.device.logical_cpus, 0, 1_000_000),
        ("threads", result.device.threads, 0, 1_000_000),
        ("threads_per_core", result.device.threads_per_core, 0, 64),
        ("nodes", result.device.nodes, 1, MAX_NODES),
        ("devices", result.device.devices, result.device.nodes, MAX_DEVICES),
        ("device_kernels", result.device_kernels, 0, 10**7),
        ("host_layers", result.host_layers, 0, 10**6),
    )
    for name, count, floor, top in counts:
        if not isinstance(count, int) or isinstance(count, bool) or not floor <= count <= top:
            return f"{name} must be a whole number in [{floor}, {top:,}], got {count!r}"
    return None


def _problem(result: ProbeResult) -> str | None:
    wrong = _count_problem(result)
    if wrong is not None:
        return wrong
    if result.peak_device_bytes is not None and not 0 <= result.peak_device_bytes <= MAX_BYTES:
        return f"peak_device_bytes out of range: {result.peak_device_bytes!r}"
    positive = (
        ("step_seconds", result.step_seconds, MAX_STEP_SECONDS),
        ("predicted_seconds", result.predicted_seconds, MAX_RUN_SECONDS),
        ("samples_per_second", result.samples_per_second, 1e15),
    )
    for name, value, high in positive:
        if not _finite(value) or not 0 < value <= high:
            return f"{name} must be > 0 and <= {high:g}, got {value!r}"
    non_negative = (
        ("validation_step_seconds", result.validation_step_seconds, MAX_STEP_SECONDS),
        ("epoch_overhead_seconds", result.epoch_overhead_seconds, MAX_RUN_SECONDS),
        ("startup_seconds", result.startup_seconds, MAX_RUN_SECONDS),
        ("probe_seconds", result.probe_seconds, MAX_RUN_SECONDS),
        ("flops_per_sample", result.flops_per_sample, MAX_FLOPS_PER_SAMPLE),
    )
    for name, value, high in non_negative:
        if not _finite(value) or not 0 <= value <= high:
            return f"{name} must be >= 0 and <= {high:g}, got {value!r}"
    memory = result.device.accelerator_memory_gib
    if memory is not None and (not _finite(memory) or not 0 < memory <= 1e6):
        return f"accelerator_memory_gib out of range: {memory!r}"
    for name, value, (low, high), ceiling in (
        ("step_interval", result.step_seconds, result.step_interval, MAX_STEP_SECONDS),
        (
            "predicted_interval",
            result.predicted_seconds,
            result.predicted_interval,
            MAX_RUN_SECONDS,
        ),
    ):
        if not (_finite(low) and _finite(high)) or not 0 <= low <= high <= ceiling:
            return f"{name} must be two numbers 0 <= low <= high <= {ceiling:g}, got ({low!r}, {high!r})"
        slack = value * _RELATIVE_SLACK
        if not low - slack <= value <= high + slack:
            return f"{name} ({low:g}, {high:g}) does not hold its value {value:g}"
    for name, table in (("batch_scaling", result.batch_scaling), ("thread_scaling", result.thread_scaling)):  # fmt: skip
        for key, seconds in table.items():
            if not isinstance(key, int) or key <= 0 or not _finite(seconds):
                return f"{name} has a bad entry {key!r}: {seconds!r}"
            if not 0 < seconds <= MAX_STEP_SECONDS:
                return f"{name}[{key}] must be > 0 and <= {MAX_STEP_SECONDS:g}, got {seconds!r}"
    for name, share in result.op_split.items():
        if not _finite(share) or not 0 <= share <= 1.000001:
            return f"op_split[{name}] must be in [0, 1], got {share!r}"
    if not _finite(result.dispatch_seconds) or not 0 <= result.dispatch_seconds <= MAX_STEP_SECONDS:
        return f"dispatch_seconds must be in [0, {MAX_STEP_SECONDS:g}], got {result.dispatch_seconds!r}"
    readings = result.reference_seconds
    if not 2 <= len(readings) <= MAX_REFERENCE_READINGS or not all(
        _finite(t) and 0 <= t <= MAX_STEP_SECONDS for t in readings
    ):
        return f"reference_seconds must be 2 to {MAX_REFERENCE_READINGS} times in seconds, got {readings!r}"
    if not _finite(result.contention) or not 0 <= result.contention <= 1:
        return f"contention must be in [0, 1], got {result.contention!r}"
    if not isinstance(result.keras, bool):
        return f"keras must be true or false, got {result.keras!r}"
    per_layer = result.layer_dispatch_seconds
    if not _finite(per_layer) or not 0 <= per_layer <= MAX_STEP_SECONDS:
        return f"layer_dispatch_seconds must be in [0, {MAX_STEP_SECONDS:g}], got {per_layer!r}"
    return None if result.architecture is None else _architecture_problem(result.architecture)


MAX_REFERENCE_READINGS = 16
"""Reference kernel readings a probe may carry (a probe takes three)."""


def _architecture_problem(counted: Architecture) -> str | None:
    """What is wrong with a probe's counted architecture, or None."""
    for name, value, high in (
        ("train_flops_per_sample", counted.train_flops_per_sample, MAX_FLOPS_PER_SAMPLE),
        ("winograd_share", counted.winograd_share, 1.000001),
        ("conv_share", counted.conv_share, 1.000001),
        ("conv_channels", counted.conv_channels, 1e7),
        ("activation_elements", counted.activation_elements, MAX_BYTES),
        ("input_bytes", counted.input_bytes, MAX_BYTES),
        ("matmul_rows", counted.matmul_rows, MAX_MATMUL_ROWS),
    ):
        if not _finite(value) or not 0 <= value <= high:
            return f"architecture {name} must be in [0, {high:g}], got {value!r}"
    if len(counted.recurrent) > MAX_RECURRENT_LAYERS:
        return f"architecture lists {len(counted.recurrent)} recurrent layers"
    for layer in counted.recurrent:
        if layer.cell not in GATES:
            return f"architecture has an unknown recurrent cell {layer.cell!r}"
        for name in ("units", "inputs", "timesteps", "directions", "sequences"):
            count = getattr(layer, name)
            if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= 10**9:
                return f"architecture recurrent {name} must be a whole number, got {count!r}"
        if layer.directions not in (1, 2) or not isinstance(layer.cudnn, bool):
            return f"architecture recurrent layer is malformed: {layer!r}"
    return None


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
