"""The contract of the estimation layer: a target device in, a predicted time with spread out."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist

from advisor.estimate.layout import Layout

_STANDARD_NORMAL = NormalDist()


@dataclass(frozen=True)
class Target:
    """What an offering runs the training on (one rentable machine)."""

    accelerator: str | None
    """Accelerator name as in the price database (``T4``, ``A100-80GB``, ``tpu-v5litepod-8``)."""
    accelerator_count: int = 0
    vcpus: float | None = None
    cpu_family: str | None = None
    """CPU family when known (``skylake``, ``icelake``, ``milan``, ``graviton3``, ...)."""
    threads_per_core: int = 0
    """Logical CPUs per core of the target's vCPUs (1: whole cores); 0: the family's, as a
    cloud VM rents its cores' threads."""
    nodes: int = 1
    """Machines of this kind the training runs on together (data parallel across them)."""
    network_gbps: float = 0.0
    """Each machine's network to the others, gigabits a second (``data/node-networks.csv``);
    0: not known, and a job of several nodes is not predicted."""

    @property
    def unreachable(self) -> str | None:
        """Why a job cannot be predicted across this target's nodes (none are accelerators, or
        no network between them is known), or None."""
        if self.nodes > 1 and (not self.accelerator or self.network_gbps <= 0):
            return "no published network between these machines: one node only"
        return None


@dataclass(frozen=True)
class Prediction:
    """Predicted full-training time on one target, log-normally spread around the median."""

    seconds: float
    """Median (p50) predicted wall time of the full training."""
    log_sigma: float
    """Spread in log space: quantile q is ``seconds * exp(z_q * log_sigma)``."""
    fits: bool = True
    """False when model plus activations at this batch do not fit the target's memory."""
    reason: str | None = None
    """Why the target is excluded (does not fit, unknown accelerator, ...), else None."""
    measured: bool = False
    """True when a probe measured on the target itself was used directly."""
    extrapolated: bool = False
    """True when the target lies beyond the hardware the model was calibrated on."""
    kernel_path: str = ""
    """What runs there, e.g. ``cuDNN LSTM, fp32`` or ``XLA, bf16``."""
    steps: tuple[str, ...] = field(default_factory=tuple)
    """Human-readable explanation, one line per scaling step (for ``--explain``)."""
    step_seconds: float = 0.0
    """Predicted seconds of one training step on the target (0 where not predicted)."""
    environment: tuple[tuple[str, str], ...] = ()
    """How the run is laid out there, as variables a task file hands the training script (an
    LLM fine-tuning job's GPUs, sharding, micro-batch); empty for the zoo's workloads."""
    layout: Layout | None = None
    """How an LLM fine-tuning job spreads over the target's GPUs, as the planner chose it (what
    ``environment`` tells its script); None for the zoo's workloads."""
    batch_per_device: float = 0.0
    """The batch each device (data-parallel replica) computes a step (0 where not predicted)."""
    global_batch: int = 0
    """The batch of one step over every device: ``batch_per_device`` times the replicas, unless
    a fixed global batch was asked (0 where not predicted)."""
    compared: Callable[[], tuple[str, ...]] | None = field(default=None, compare=False, repr=False)
    """Lines an explanation adds on demand (an LLM job: what each other stack would change),
    worked out only for an option that is explained, never for every target ranked."""
    fallback: str = ""
    """What the plan runs other than asked (``fp8 asked: no fp8 units on A100, bf16 runs``; a
    recipe that fits where the asked one does not), "" when it runs as asked."""
    batch_note: str = ""
    """Why the batch differs from the one asked (it did not fit a device), or ''."""
    batch_grown: bool = False
    """The global batch grew with the devices (weak scaling), rather than held fixed."""
    least_seconds: float = 0.0
    """The least the training's steps can take on the target at its datasheet peaks (the
    roofline, ``advisor.estimate.roofline``); 0 where not computed. A measurement's correction
    never takes a prediction below it."""

    @property
    def replicas(self) -> int:
        """Data-parallel replicas the step is split over (1 where not predicted)."""
        if not self.batch_per_device:
            return 1
        return max(1, round(self.global_batch / self.batch_per_device))

    def quantile(self, q: float) -> float:
        return self.seconds * math.exp(_STANDARD_NORMAL.inv_cdf(q) * self.log_sigma)

    def probability_within(self, seconds: float) -> float:
        """Chance the training finishes within ``seconds``."""
        if seconds <= 0:
            return 0.0
        if self.log_sigma <= 0:
            return 1.0 if self.seconds <= seconds else 0.0
        return _STANDARD_NORMAL.cdf(math.log(seconds / self.seconds) / self.log_sigma)
