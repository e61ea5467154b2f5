"""The least time a training step can take on an accelerator, however fast its arithmetic.

    floor = host dispatch + layers x host work per layer + kernels per step x launch latency

The host runs the training loop: every step is dispatched by the CPU (the Keras callbacks, the
executor, the input batch), and on a GPU every device op is a kernel launch. A step model that
scales only compute and bandwidth sends a tiny model's 5 ms CPU step to 0.3 ms on a T4, below
what dispatch alone costs there. The host dispatch is the step of a one-weight model the probe
timed here (``probes.dispatch``), taken as the same on the target's host CPU (cloud GPU hosts
are server CPUs like the ones probes run on); without that measurement, the calibrated per-step
GPU overhead. Each layer adds the host work the probe measured per layer of a chain of tiny
layers under the same backend (``probes.dispatch.layer_seconds``): small for a compiled graph,
65-294 us under Keras on PyTorch, which calls every layer from Python. It is a floor: on an H200
Keras on PyTorch spent about 0.7 ms a layer (ResNet-152 about 400 ms a step, 2026-11-26), four
times what the chain's CPU ops cost, which the floor does not see. The launch latency per kernel
is a published figure (``data/step-floor.csv``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache

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

    def describe(self) -> str:
        host = "measured here" if self.host_measured else "calibrated"
        if self.layers:
            host += f", {self.layers} layers"
        return (
            f"floor {self.seconds * 1e3:.3g} ms/step: host dispatch {self.host_seconds * 1e3:.3g} ms "
            f"({host}) + {self.kernels} kernels x {self.launch_seconds * 1e6:.3g} us"
        )


@lru_cache(maxsize=1)
def launch_latency() -> dict[str, float]:
    """Kernel launch latency by accelerator kind (``gpu``, ``tpu``), from the shipped table."""
    with shipped("step-floor.csv").open(encoding="utf-8", newline="") as handle:
        return {row["kind"]: float(row["kernel_launch_seconds"]) for row in csv.DictReader(handle)}


def step_floor(probe: ProbeResult, kind: str, calibration: Calibration) -> Floor:
    """The floor of one training step of ``probe``'s workload on an accelerator of ``kind``."""
    measured = probe.dispatch_seconds > 0
    host = probe.dispatch_seconds if measured else calibration.gpu_overhead_s
    host += probe.host_layers * probe.layer_dispatch_seconds
    latency = launch_latency().get(kind, launch_latency()["gpu"])
    kernels = probe.device_kernels
    layers = probe.host_layers if probe.layer_dispatch_seconds > 0 else 0
    return Floor(host + kernels * latency, host, kernels, latency, measured, layers)
