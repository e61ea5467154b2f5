"""Measurements beat predictions, and correct the predictions they do not replace.

A probe imported from another machine (``advisor import``, ``advisor bench``) of the same
workload configuration is used as it is for the device it ran on (``measured_on``). For every
other device it supplies a residual, under this rule:

    r_D = measured seconds on D / seconds predicted for D from the local probe

    For a target T of the same kind as D (``gpu``, ``tpu`` or ``cpu``) that was not measured:
        T_corrected   = max(T_predicted x r, T's roofline)
                        r = geometric mean of r_D over measured D of T's kind
        sigma_corrected = sqrt(sigma_T^2 + sigma_r^2)
        sigma_r       = sqrt(mean of the measurements' own log spreads^2 / n + var(log r_D))

The prediction's error on one device is mostly shared by the devices of its kind (the step
model's view of the workload on a GPU, cuDNN's kernels, the host's input pipeline), so a
measurement moves their medians by the same factor. The spread is not narrowed: the residual
carries its own uncertainty (the measurement's interval, the disagreement between several
measured devices) on top of the target's. A measurement on a GPU does not correct CPU
predictions, nor the reverse.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from advisor.estimate import catalog
from advisor.estimate.measured import measured_on
from advisor.estimate.predict import predict
from advisor.estimate.prediction import Prediction, Target
from probes.result import Fingerprint, ProbeResult

Predictor = Callable[[Target], Prediction]
_Z95 = 1.959964


@dataclass(frozen=True)
class Residual:
    """How far the predictions of one kind of device were from their measurements."""

    kind: str
    ratio: float
    """Geometric mean of measured / predicted over the measured devices of ``kind``."""
    log_sigma: float
    """Uncertainty of ``log(ratio)``."""
    devices: tuple[str, ...]
    """The measured devices it comes from."""

    def describe(self) -> str:
        return (
            f"corrected by the measurement on {', '.join(self.devices)}: measured/predicted "
            f"x{self.ratio:.3g} (log spread {self.log_sigma:.2g}), applied to every "
            f"{self.kind.upper()} not measured"
        )


def kind_of(target: Target) -> str:
    """``gpu``, ``tpu`` or ``cpu``: the devices one residual corrects together."""
    if not target.accelerator:
        return "cpu"
    return "tpu" if target.accelerator.lower().startswith("tpu") else "gpu"


def device_target(device: Fingerprint) -> Target:
    """The target a probe's device is: its accelerator, or its vCPUs and CPU family."""
    if device.accelerator:
        return Target(device.accelerator, 1)
    family = catalog.resolve_family(device.cpu_model)
    return Target(
        None,
        0,
        vcpus=float(device.logical_cpus),
        cpu_family=family,
        threads_per_core=device.threads_per_core,
    )


def residuals(
    probe: ProbeResult, measured: Iterable[ProbeResult], *, precision: str = "fp32"
) -> dict[str, Residual]:
    """The residual of each kind of device, from the measurements of ``probe``'s workload
    configuration on devices other than ``probe``'s; a measurement faster than its device's
    hardware allows corrects nothing (it is held at that bound where it was taken), nor does
    one over several devices (``probes.distributed``): it stands for its own offering only."""
    found: dict[str, list[tuple[str, float, float]]] = {}
    for other in measured:
        if other.config != probe.config or other.device.key == probe.device.key:
            continue
        if other.device.devices > 1:
            continue  # data parallel: its error holds the exchange's, which one device lacks
        target = device_target(other.device)
        if predict(other, target, precision=precision).least_seconds > other.predicted_seconds:
            continue
        predicted = predict(probe, target, precision=precision)
        if predicted.measured or not usable(predicted):
            continue
        label = other.device.accelerator or f"{other.device.logical_cpus} vCPUs"
        log_ratio = math.log(other.predicted_seconds / predicted.seconds)
        found.setdefault(kind_of(target), []).append((label, log_ratio, log_sigma_of(other)))
    return {kind: combined(kind, rows) for kind, rows in found.items()}


def combined(kind: str, rows: list[tuple[str, float, float]]) -> Residual:
    """One kind's residual from its measured devices' (label, log measured/predicted, the
    measurement's own log spread)."""
    logs = [row[1] for row in rows]
    mean = sum(logs) / len(logs)
    own = sum(row[2] ** 2 for row in rows) / len(rows) / len(rows)
    spread = sum((x - mean) ** 2 for x in logs) / (len(logs) - 1) if len(logs) > 1 else 0.0
    return Residual(
        kind=kind,
        ratio=math.exp(mean),
        log_sigma=math.sqrt(own + spread),
        devices=tuple(sorted({row[0] for row in rows})),
    )


def corrected(prediction: Prediction, residual: Residual) -> Prediction:
    """``prediction`` moved by ``residual``, its spread widened by the residual's own, never
    below what the target's hardware allows (a measurement that claims more is not believed
    past that)."""
    seconds = prediction.seconds * residual.ratio
    note = f"{residual.describe()}: {seconds:.4g} s"
    if seconds < prediction.least_seconds:
        seconds = prediction.least_seconds
        note += f", held at the hardware bound {seconds:.4g} s"
    return replace(
        prediction,
        seconds=seconds,
        log_sigma=math.hypot(prediction.log_sigma, residual.log_sigma),
        steps=(*prediction.steps, note),
    )


def predictor_for(
    probe: ProbeResult,
    measured: Iterable[ProbeResult],
    *,
    precision: str = "fp32",
    run_log_sigma: float | None = None,
    global_batch: int | None = None,
) -> Predictor:
    """Predict ``probe``'s workload on a target: measured there if a probe of the same
    configuration was, else scaled from ``probe`` and corrected by the residual of its kind
    (``global_batch``: held whatever the target's devices, ``predict``'s)."""
    same = [other for other in measured if other.config == probe.config]
    found = residuals(probe, same, precision=precision)

    def predictor(target: Target) -> Prediction:
        source = measured_on(same, target)
        if source is not None:
            return predict(source, target, precision=precision, global_batch=global_batch)
        prediction = predict(
            probe,
            target,
            precision=precision,
            run_log_sigma=run_log_sigma,
            global_batch=global_batch,
        )
        return corrected_for(prediction, target, found)

    return predictor


def corrected_for(
    prediction: Prediction, target: Target, found: Mapping[str, Residual]
) -> Prediction:
    """``prediction`` on ``target`` corrected by the residual of ``target``'s kind in ``found``,
    where there is one and the prediction is a model's usable time (not a measurement there)."""
    residual = found.get(kind_of(target))
    if residual is None or prediction.measured or not usable(prediction):
        return prediction
    return corrected(prediction, residual)


def usable(prediction: Prediction) -> bool:
    return (
        prediction.fits
        and prediction.reason is None
        and math.isfinite(prediction.seconds)
        and prediction.seconds > 0
    )


def log_sigma_of(probe: ProbeResult) -> float:
    """A probe's own log spread, from its 95% interval of the full training time."""
    low, high = probe.predicted_interval
    return math.log(high / low) / (2 * _Z95) if 0 < low < high else 0.0
