"""The least time a training step can take on an accelerator, however fast its arithmetic.

    floor = host dispatch + layers x host work per layer + kernels per step x launch latency
            + the step's input bytes / the host's feed rate

Dispatch and work per layer are the probe's (``probes.dispatch``; else the calibrated per-step
GPU overhead), floored on a GPU by the GPU host's own where Keras on that backend was measured
there (``data/gpu-host.csv``); the launch latency is published (``data/step-floor.csv``).
Figures and reasons: docs/PREDICTION.md, "The host part on an accelerator"."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache

from advisor.estimate.frameworks import Framework
from advisor.estimate.parameters import Calibration
from advisor.locations import shipped
from probes.result import ProbeResult


@dataclass(frozen=True)
class Floor:
    """A step floor and what it is made of."""

    seconds: float
    host_seconds: float
    """The host's dispatch of a step, its layers' work included."""
    kernels: int
    launch_seconds: float
    """Latency of one kernel launch on the target."""
    host_measured: bool
    layers: int = 0
    """Layers whose host work is in ``host_seconds`` (0: none measured)."""
    feed_seconds: float = 0.0
    """Copying the step's inputs from host arrays to the device (0: not measured for the
    target's framework)."""
    gpu_host: str = ""
    """The framework whose GPU-host dispatch or layer figures floor the probe's
    (``data/gpu-host.csv``), or ''."""

    def describe(self) -> str:
        host = "measured here" if self.host_measured else "calibrated"
        if self.gpu_host:
            host += f", at least Keras on {self.gpu_host} on a GPU host"
        if self.layers:
            host += f", {self.layers} layers"
        feed = f" + input feed {self.feed_seconds * 1e3:.3g} ms" if self.feed_seconds else ""
        return (
            f"floor {self.seconds * 1e3:.3g} ms/step: host dispatch {self.host_seconds * 1e3:.3g} ms "
            f"({host}) + {self.kernels} kernels x {self.launch_seconds * 1e6:.3g} us{feed}"
        )


@dataclass(frozen=True)
class GpuHost:
    """What Keras on one framework costs the host of a GPU each step, measured there (0: not
    measured, the probe's own figure stands)."""

    dispatch_seconds: float
    layer_seconds: float
    feed_bytes_per_second: float
    """How fast ``model.fit`` moves NumPy input to the GPU: the whole feed where measured, the
    host-to-device copy alone otherwise."""


@lru_cache(maxsize=1)
def launch_latency() -> dict[str, float]:
    """Kernel launch latency by accelerator kind (``gpu``, ``tpu``), from the shipped table."""
    with shipped("step-floor.csv").open(encoding="utf-8", newline="") as handle:
        return {row["kind"]: float(row["kernel_launch_seconds"]) for row in csv.DictReader(handle)}


@lru_cache(maxsize=1)
def gpu_hosts() -> dict[str, GpuHost]:
    """Keras' host figures on a GPU machine by framework (``jax``, ``torch``), shipped table."""
    with shipped("gpu-host.csv").open(encoding="utf-8", newline="") as handle:
        return {
            row["framework"]: GpuHost(
                float(row["dispatch_seconds"]),
                float(row["layer_seconds"]),
                float(row["feed_bytes_per_second"]),
            )
            for row in csv.DictReader(handle)
        }


def gpu_host(framework: Framework, kind: str) -> GpuHost | None:
    """The measured GPU-host figures of Keras on ``framework``, when the target is a GPU and
    they were measured; else None."""
    if kind != "gpu" or not framework.keras:
        return None
    return gpu_hosts().get(framework.name)


def step_floor(
    probe: ProbeResult,
    kind: str,
    calibration: Calibration,
    framework: Framework,
    *,
    own_software: bool = True,
    step_input_bytes: float = 0.0,
    host_scale: float = 1.0,
) -> Floor:
    """The floor of one training step of ``probe``'s workload on an accelerator of ``kind``
    under ``framework``: the probe's own host figures when the target runs its software, never
    below the GPU host's where those were measured, and the copy of ``step_input_bytes`` (one
    replica's share: each GPU's over its own link, side by side); neither: the calibrated
    per-step overhead. ``host_scale`` stretches the probe's own host figures to the target's
    host CPU (``predict.host_time_scale``); those measured on a GPU host stand as they are."""
    measured = own_software and probe.dispatch_seconds > 0
    figures = gpu_host(framework, kind) or GpuHost(0.0, 0.0, math.inf)
    unmeasured = 0.0 if figures.dispatch_seconds else calibration.gpu_overhead_s
    own_dispatch = probe.dispatch_seconds * host_scale if measured else unmeasured
    dispatch = max(own_dispatch, figures.dispatch_seconds)
    own_layer = probe.layer_dispatch_seconds * host_scale if own_software else 0.0
    per_layer = max(own_layer, figures.layer_seconds)
    feed = step_input_bytes / figures.feed_bytes_per_second
    host = dispatch + probe.host_layers * per_layer
    latency = launch_latency().get(kind, launch_latency()["gpu"])
    kernels = probe.device_kernels
    layers = probe.host_layers if per_layer > 0 else 0
    return Floor(
        host + kernels * latency + feed,
        host,
        kernels,
        latency,
        measured,
        layers,
        feed,
        framework.name if figures.dispatch_seconds or figures.layer_seconds else "",
    )
