"""What a probe measured: plain data, stored in SQLite and exported in the reference CSV format.

This is the contract between ``probes`` (which fills it) and the estimation layer (which scales
it to other devices). Keep it plain: no TensorFlow objects, everything JSON-serialisable.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fingerprint:
    """The device a probe ran on, as much as the cross-device model needs to know."""

    cpu_model: str
    """CPU model name, e.g. ``Intel(R) Xeon(R) Platinum 8481C``."""
    logical_cpus: int
    """Logical CPUs visible to the process."""
    threads: int
    """Intra-op threads the backend computed with."""
    accelerator: str | None
    """Accelerator name as cloud catalogs spell it (``H100``, ``T4``), or None on a CPU."""
    accelerator_memory_gib: float | None
    tensorflow: str
    """Version of the backend's framework (TensorFlow's, JAX's or PyTorch's: the field kept its
    name so that stored probes and exports from before other backends still read)."""
    onednn: bool
    xla: bool
    precision: str
    """``fp32``, ``mixed`` (float16/bfloat16 compute), ..."""
    backend: str = "tensorflow"
    """The Keras backend the probe trained with (``probes.backend``): a probe measures that
    backend's training, so two backends' probes of one workload are two devices' probes."""
    threads_per_core: int = 0
    """Logical CPUs per core as the operating system reports them (1: each logical CPU a whole
    core, as many VMs give; 2: hyperthreads); 0 where not read (older probes): the family's."""
    devices: int = 1
    """Devices one step trained on together, data parallel, over every node
    (``probes.distributed``): 8 for a node's eight GPUs, 16 for two such nodes; 1: one."""
    nodes: int = 1
    """Machines those devices sit in, one process each."""

    @property
    def together(self) -> str:
        """`` x8`` or `` x16 over 2 nodes`` after a data-parallel probe's device; empty for one."""
        if self.devices == 1 and self.nodes == 1:
            return ""
        return f" x{self.devices}" + (f" over {self.nodes} nodes" if self.nodes > 1 else "")

    @property
    def key(self) -> str:
        """Stable short id of this device and backend, part of the probe store's key (a
        TensorFlow probe's key is what it was before other backends: stored probes still match;
        the topology, read later than the rest, names no other device; one device on one node
        is what every probe was before data-parallel ones)."""
        fields = asdict(self)
        del fields["threads_per_core"]
        if fields["backend"] == "tensorflow":
            del fields["backend"]
        if fields["devices"] == 1 and fields["nodes"] == 1:
            del fields["devices"], fields["nodes"]
        blob = json.dumps(fields, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class WorkloadConfig:
    """One training run: which workload, how much data, how long."""

    workload: str
    """Zoo id (``imdb_bilstm``) or ``file:<sha256 prefix>`` for a user's .keras model."""
    samples: int
    validation_samples: int
    epochs: int
    batch_size: int

    @property
    def steps_per_epoch(self) -> int:
        return -(-self.samples // self.batch_size)

    @property
    def validation_steps(self) -> int:
        return -(-self.validation_samples // self.batch_size) if self.validation_samples else 0


TRAINING_PASSES = 3
"""Training FLOPs per forward FLOP: forward + backward to inputs + backward to weights
(``probes.architecture``)."""
GATES = {"lstm": 4, "gru": 3, "vanilla": 1}
"""Matrix products per recurrent time step, one per gate; ``vanilla`` is Keras's SimpleRNN."""


@dataclass(frozen=True)
class RecurrentLayer:
    """One recurrent layer of a model, as ``probes.architecture`` read it."""

    cell: str
    """``lstm``, ``gru`` or ``vanilla`` (SimpleRNN)."""
    units: int
    inputs: int
    """Features per time step."""
    timesteps: int
    """Time steps of one sequence (an open time axis at the length the probe fed it)."""
    directions: int = 1
    """2 inside ``Bidirectional``."""
    sequences: int = 1
    """Sequences per sample run side by side (the time axis of a ``TimeDistributed`` wrapper)."""
    cudnn: bool = False
    """The layer's config lets Keras run cuDNN's fused kernel on a GPU (LSTM/GRU with default
    activations, no recurrent dropout, not unrolled); False: the generic per-step loop."""

    @property
    def step_flops(self) -> float:
        """Forward FLOPs of one time step of one direction, for all its ``sequences``."""
        return (
            2.0 * GATES.get(self.cell, 1) * (self.inputs + self.units) * self.units * self.sequences
        )

    @property
    def forward_flops(self) -> float:
        """Forward FLOPs of the layer for one sample."""
        return self.step_flops * self.timesteps * self.directions

    @property
    def train_flops(self) -> float:
        """Training FLOPs of the layer for one sample."""
        return TRAINING_PASSES * self.forward_flops


@dataclass(frozen=True)
class Architecture:
    """What a model's layers say about its work (``probes.architecture``): plain counts."""

    train_flops_per_sample: float
    """Forward + backward FLOPs of one sample (3 x forward)."""
    winograd_share: float = 0.0
    """Share of the FLOPs in 3x3 and 5x5 stride-1 2D convolutions (cuDNN's Winograd case)."""
    activation_elements: float = 0.0
    """Layer outputs (and recurrent gate states) per sample, the activations a step keeps."""
    recurrent: tuple[RecurrentLayer, ...] = ()
    uncounted: tuple[str, ...] = ()
    """Classes of layers with weights the reader could not count (counted as nothing)."""
    conv_share: float = 0.0
    """Share of the FLOPs in convolutions (0 in probes from before it was counted)."""
    conv_channels: float = 0.0
    """The convolutions' output channels, FLOP-weighted harmonic mean (the narrow side of the
    products they are); 0 without convolutions."""
    input_bytes: float = 0.0
    """Bytes of one sample's inputs, what the host feeds the device each step per sample (0 in
    probes from before it was counted, or where an input's shape is not fixed)."""
    matmul_rows: float = 0.0
    """Rows each sample gives the model's matrix products, FLOP-weighted over its dense layers:
    a transformer's tokens, whose products are batch x tokens rows wide; 1 where a sample is one
    vector; 0 where not counted (no dense layer, probes from before it was)."""

    @property
    def cudnn_rnn(self) -> bool:
        """Every recurrent layer can run cuDNN's kernel (one that cannot sets the GPU's pace)."""
        return all(layer.cudnn for layer in self.recurrent)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Architecture:
        """The inverse of ``dataclasses.asdict`` (JSON lists back to tuples)."""
        return cls(
            train_flops_per_sample=float(raw["train_flops_per_sample"]),
            winograd_share=float(raw.get("winograd_share", 0.0)),
            conv_share=float(raw.get("conv_share", 0.0)),
            conv_channels=float(raw.get("conv_channels", 0.0)),
            input_bytes=float(raw.get("input_bytes", 0.0)),
            matmul_rows=float(raw.get("matmul_rows", 0.0)),
            activation_elements=float(raw.get("activation_elements", 0.0)),
            recurrent=tuple(RecurrentLayer(**layer) for layer in raw.get("recurrent", ())),
            uncounted=tuple(str(name) for name in raw.get("uncounted", ())),
        )


@dataclass(frozen=True)
class ProbeResult:
    """A probe's measurements and its prediction of the full training time on this device."""

    config: WorkloadConfig
    device: Fingerprint
    step_seconds: float
    """Steady-state wall time of one training step, at ``config.batch_size``: the mean, since a
    run's length is the sum of its steps (a median would drop the occasional slow step)."""
    step_interval: tuple[float, float]
    """95% confidence interval of the steady-state mean step time, widened to its drift."""
    validation_step_seconds: float
    """Wall time of one validation step (0 when the workload does not validate)."""
    epoch_overhead_seconds: float
    """Per-epoch work beyond the steps: shuffling, callbacks, iterator set-up."""
    startup_seconds: float
    """What one ``model.fit`` pays once: setting up its data, tracing and compiling the training
    and validation steps, warm-up steps, and dropping the last epoch's iterator when it returns
    (``probes.teardown``). The model's build is not in it (``build_seconds``)."""
    predicted_seconds: float
    """The part of the training that repeats: every epoch's steps, validation and per-epoch
    overhead, and the iterator waits between epochs (median). ``fit_seconds`` adds the
    start-up: what a stopwatch around ``model.fit`` reads."""
    predicted_interval: tuple[float, float]
    """What the probe's own measurements allow (step interval, overhead spread); it does not
    hold how much the machine's speed changes between runs (docs/BENCHMARKS-ARCHIVE.md,
    "Probes")."""
    samples_per_second: float
    probe_seconds: float
    """Wall time the probe itself took."""
    flops_per_sample: float
    """Training FLOPs per sample (forward + backward)."""
    parameters: int
    peak_host_bytes: int
    peak_device_bytes: int | None = None
    op_split: dict[str, float] = field(default_factory=dict)
    """Share of step time by op class: ``matmul_conv``, ``elementwise``, ``recurrent``,
    ``embedding``, ``input_pipeline``, ``overhead`` (sums to ~1)."""
    thread_scaling: dict[int, float] = field(default_factory=dict)
    """CPU only: intra-op threads -> steady-state step seconds."""
    batch_scaling: dict[int, float] = field(default_factory=dict)
    """Batch size -> steady-state step seconds, for every batch size measured."""
    extrapolated: bool = False
    """True when the step time at ``config.batch_size`` was modelled from smaller batches."""
    extrapolated_from: str = ""
    """What was stepped when extrapolated: the batches, and a transformer's smaller proxy
    (``batches 1, 2 of a proxy: 2 of 36 layers, 128 of 1024 tokens; FLOPs x48``)."""
    reference_seconds: tuple[float, ...] = (0.0, 0.0)
    """The fixed reference kernel (``probes.reference``) timed when the probe started, after its
    measurement and when it ended (older probes: start and end); zeros when not timed (imports)."""
    contention: float = 0.0
    """Share of this machine's CPU time other processes used while the probe ran, 0..1 (0 when
    not measured: older probes, imports, systems without /proc/stat)."""
    dispatch_seconds: float = 0.0
    """The host's per-step dispatch measured here: the steady step of a one-weight model at
    batch 1 (``probes.dispatch``); 0 when not measured (older probes, imports)."""
    device_kernels: int = 0
    """Kernels one training step launches on an accelerator, counted from the model's layers and
    variables (``probes.run.kernels_per_step``); 0 when not counted (older probes, imports)."""
    layer_dispatch_seconds: float = 0.0
    """The host's work per layer of a step beyond ``dispatch_seconds``: a chain of tiny layers
    timed here (``probes.dispatch.layer_seconds``); 0 when not measured (older probes, imports)."""
    host_layers: int = 0
    """Layers of the model the host calls each step (``probes.run.host_layers``); 0 when not
    counted."""
    input_wait_seconds: float = 0.0
    """Seconds a steady step of a user's script waited here for its data (a PyTorch
    ``DataLoader``'s, between optimizer steps: with loader workers, what they did not hide); 0
    when not measured."""
    build_seconds: float = 0.0
    """Building (or loading) and compiling the model before ``fit``; 0 when not measured."""
    teardown_seconds: float = 0.0
    """The modelled waits of dropped tf.data iterators inside ``fit`` (``probes.teardown``),
    already in ``predicted_seconds`` and ``startup_seconds``; 0 for older probes."""
    created_at: str = ""
    """ISO-8601 UTC time of the measurement."""
    architecture: Architecture | None = None
    """The model's layers as ``probes.architecture`` counted them; None when not read (older
    probes, imports)."""
    keras: bool = True
    """Keras drove the training (the zoo, a ``.keras`` file, a script's ``fit``); False: a
    script's own PyTorch or JAX loop, whose host pays none of Keras's work on a GPU
    (``advisor.estimate.floor.gpu_host``)."""

    @property
    def global_batch(self) -> int:
        """Samples one step trained on: the batch of each device times the devices."""
        return self.config.batch_size * self.device.devices

    @property
    def steps_per_epoch(self) -> int:
        """Training steps of one epoch at the global batch."""
        return -(-self.config.samples // self.global_batch)

    @property
    def fit_seconds(self) -> float:
        """The whole ``model.fit`` of the full training here: what a stopwatch around it reads."""
        return self.predicted_seconds + self.startup_seconds

    @property
    def machine_drift(self) -> float:
        """How much this machine's speed changed while the probe ran: the slowest reading of the
        reference kernel against the fastest, less one (0 when not timed)."""
        readings = [t for t in self.reference_seconds if t > 0]
        return max(readings) / min(readings) - 1 if len(readings) >= 2 else 0.0
