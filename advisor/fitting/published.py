"""The published measurements as estimation reads them (rows of ``benchmarks.csv`` and friends).

The exchange format and its one strict reader live with the probes (``probes.exchange``); this
module adds the estimation's view of a row: which machine and software stack it measured, its
label in the per-device tables and its figure as seconds per training sample.
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from advisor.errors import UsageError
from advisor.estimate.frameworks import Framework, from_software
from advisor.estimate.machine import Stack
from advisor.estimate.steps import WorkloadFacts
from probes.exchange import PRECISIONS, Problem, Row, figure, read_csv, whole_number


class ReferenceRow(Row):
    """A row of the exchange format (the same fields) with what estimation derives from it."""

    @property
    def is_cpu(self) -> bool:
        return self.device.upper() == "CPU"

    @property
    def framework(self) -> Framework:
        """The framework, version and container the row ran under (what its fp32 means)."""
        return from_software(self.software)

    @property
    def fused_optimizer(self) -> bool:
        """False for Keras on TensorFlow 1 (``-keras``: Woolf's runs), whose optimizers were one
        op per expression; TensorFlow's own and every later framework's update is fused."""
        return not (self.framework.tensorflow_1 and "-keras" in self.software)

    @property
    def layout(self) -> str:
        """``nchw`` where the row's software says its image tensors were NCHW (``-nchw``: the
        default of tf_cnn_benchmarks and of PyTorch, docs/SOURCES.md), else ``nhwc``."""
        return "nchw" if self.software.endswith("-nchw") else "nhwc"

    @property
    def cpu_isa(self) -> str:
        """What the row's CPU kernels were built for (``Stack.cpu_isa``): TensorFlow's pip wheels
        before 1.6 SSE, from 1.6 AVX ("Prebuilt binaries will use AVX instructions", the 1.6.0
        release notes) until oneDNN's kernels, dispatched to the CPU's widest, became the
        default in 2.9; a build compiled for AVX2 and FMA (``compiled-avx2``: Woolf's, whose
        flags stop at ``-mavx2 -mfma``) AVX2; any other compiled build or stack the CPU's own."""
        framework = self.framework
        if "compiled-avx2" in self.software:
            return "avx2"
        wheel = framework.name == "tensorflow" and "pip" in self.software
        if not wheel or "compiled" in self.software or framework.cpu_kernels == "onednn":
            return "native"
        return "avx" if framework.version >= (1, 6) else "sse"

    @property
    def cudnn_rnn(self) -> bool | None:
        """True where the run chose cuDNN's recurrent layers (``...-cudnnlstm``, TF 1's
        ``CuDNNLSTM``); None: the framework's default."""
        return True if "cudnnlstm" in self.software else None

    @property
    def eager_attention(self) -> bool:
        """True where the run wrote attention out in eager PyTorch (``-eager-attention``:
        nanoGPT's hand-written attention, whose softmax autocast runs in float32)."""
        return "-eager-attention" in self.software

    @property
    def stack(self) -> Stack:
        """The software the row ran: its framework, CPU build, recurrent kernels, tensor layout,
        optimizer and attention."""
        return Stack(
            framework=self.framework,
            cpu_isa=self.cpu_isa,
            cudnn_rnn=self.cudnn_rnn,
            layout=self.layout,
            fused_optimizer=self.fused_optimizer,
            eager_attention=self.eager_attention,
        )

    @property
    def augmented(self) -> bool | None:
        """False where the run fed synthetic arrays straight to ``model.fit`` (our own GPU
        checks: ``synthetic NumPy arrays`` in the notes), which no augmentation touches; None:
        the workload's own recipe (the zoo's CIFAR-10 convnet augments on the host)."""
        return False if "synthetic numpy arrays" in self.notes.lower() else None

    def facts(self, workload: WorkloadFacts) -> WorkloadFacts:
        """``workload``'s facts as this run trained it."""
        if self.augmented is False:
            return replace(workload, host_augmentation=False)
        return workload

    @property
    def label(self) -> str:
        """The device and stack, as a row of the per-device table."""
        if self.is_cpu:
            family = self.cpu_family or "family unknown"
            build = {
                "native": "",
                "avx2": " avx2-build",
                "avx": " avx-build",
                "sse": " generic-build",
            }[self.cpu_isa]
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


def read_reference(path: Path | str) -> list[ReferenceRow]:
    """Every row of an exchange-format file, through the one strict reader: a ``UsageError``
    names the file and line of the first bad row."""
    return [ReferenceRow(**asdict(row)) for row in read_csv(path)]


def read_reference_checked(
    path: Path | str, *, strict: bool
) -> tuple[list[ReferenceRow], list[Problem]]:
    """The rows of an exchange-format file and the rows skipped as bad (``file:line``, why).

    Strict: the first bad row raises (no problems are returned). Lenient: bad rows are skipped,
    and an empty ``batch_size`` takes the zoo's (the row's ``assumed`` says so)."""
    if strict:
        return read_reference(path), []
    rows, problems = read_csv(path, strict=False)
    return [ReferenceRow(**asdict(row)) for row in rows], problems


SCALING_COLUMNS = ("source", "workload", "device", "devices", "nodes", "software", "precision",
                   "batch_per_device", "metric", "value", "notes")  # fmt: skip
"""The published multi-device runs (``data/scaling-published.csv``): one run's throughput over
all its devices, with the batch each device computed."""
MAX_DEVICES = 65_536


@dataclass(frozen=True)
class ScalingRow:
    """A published data-parallel run on ``devices`` accelerators (GPUs, or a TPU slice's chips
    named by ``row.device``) over ``nodes`` machines; ``row.batch_size`` is its global batch."""

    row: ReferenceRow
    devices: int
    nodes: int

    @property
    def batch_per_device(self) -> float:
        return self.row.batch_size / self.devices


def read_scaling(path: Path | str) -> list[ScalingRow]:
    """The rows of a published-scaling file, or one ``UsageError`` naming its file and line: its
    header is ``SCALING_COLUMNS``, counts are whole and positive (at most ``MAX_DEVICES``
    devices, no more nodes than devices), every figure a positive, finite samples/s."""
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != SCALING_COLUMNS:
                raise UsageError(f"{path}: the header is not {','.join(SCALING_COLUMNS)}")
            return [_scaling_row(path, reader.line_num, r) for r in reader]
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except csv.Error as exc:
        raise UsageError(f"{path}: not a CSV file ({exc})") from None


def _scaling_row(path: Path, line: int, fields: dict[str, str]) -> ScalingRow:
    try:
        devices = whole_number("devices", fields["devices"])
        nodes = whole_number("nodes", fields["nodes"])
        per_device = whole_number("batch_per_device", fields["batch_per_device"])
        value = figure(fields["value"])
    except ValueError as error:
        raise UsageError(f"{path}:{line}: {error}") from None
    if devices > MAX_DEVICES or nodes > devices:
        raise UsageError(
            f"{path}:{line}: {nodes} nodes of {devices} devices (at most {MAX_DEVICES:,} devices,"
            " no more nodes than devices)"
        )
    if fields["metric"] != "samples_per_second":
        raise UsageError(f"{path}:{line}: the metric must be samples_per_second")
    if fields["precision"] not in PRECISIONS:
        raise UsageError(f"{path}:{line}: unknown precision {fields['precision']!r}")
    row = ReferenceRow(
        source=fields["source"],
        workload=fields["workload"],
        device=fields["device"],
        vcpus=None,
        cpu_family=None,
        software=fields["software"],
        precision=fields["precision"],
        batch_size=per_device * devices,
        epochs=None,
        metric="samples_per_second",
        value=value,
        notes=fields["notes"],
    )
    return ScalingRow(row, devices, nodes)
