"""The model's free parameters: priors written here, fitted values in ``data/calibration.json``.

``python -m advisor.fitting.calibrate`` refits them on the shipped reference measurements and
rewrites the JSON; nothing in it is tuned by hand. A parameter the data cannot identify (no TPU
in the reference set) stays at its prior, and predictions that lean on it are flagged as
extrapolated. The cuDNN recurrent path is no parameter here: it is fitted on measured kernels
(``advisor.estimate.kernels``, ``data/gpu-kernel-fit.json``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from advisor.locations import shipped

CALIBRATION_FILE = "calibration.json"
LLM_CALIBRATION_FILE = "calibration-llm.json"
"""The LLM fine-tuning parameters fitted by ``python -m advisor.fitting.llm_fit``."""
LLM_PARAMETERS = (
    "attention_efficiency",
    "fp8_gemm_efficiency",
    "collective_efficiency",
    "pcie_collective_efficiency",
    "collective_overlap",
    "dequant_traffic_scale",
)
"""What only an LLM fine-tuning step uses: fitted apart, on published fine-tuning runs."""


CONV_SPEEDS = ("turing", "ga100", "ga10x", "ada", "hopper")
"""The GPU architectures whose convolutions have a fitted speed of their own
(``catalog.Accelerator.architecture``): ``Calibration.<architecture>_conv_speed``."""


@dataclass(frozen=True)
class Calibration:
    """Free parameters of the step model (seconds, fractions of peak, bytes)."""

    cpu_overhead_s: float = 2e-3
    """Fixed framework cost of one training step on a CPU."""
    gpu_overhead_s: float = 4e-3
    """Fixed cost of one step on a GPU: kernel launches, host work, transfers."""
    tpu_overhead_s: float = 6e-3
    """Fixed cost of one step on a TPU (infeed, host); a prior, no TPU data to fit."""
    cpu_efficiency: float = 0.35
    """Share of a vectorised build's peak FP32 FLOPS that matmul/conv kernels reach on a CPU."""
    generic_build_speed: float = 0.35
    """Compute speed of a generic (SSE: no AVX) TensorFlow build relative to one using all of a
    CPU's vectors (``machine.build_speed``): it slows each thread's arithmetic, not the threads'
    contention (``machine.usl_speedup``)."""
    gpu_efficiency: float = 0.45
    """Share of peak FP32 (CUDA cores) that convolutions reach on a GPU, counting the
    multiplications they execute (3x3 convolutions after the Winograd reduction)."""
    tensor_efficiency: float = 0.2
    """Share of the tensor cores' peak (TF32, fp16, bf16) that convolutions reach (prior:
    NVIDIA's DeepLearningExamples ResNet-50 AMP training on V100 reaches ~20-25% of the 125
    TFLOPS, batch norm and ReLU included)."""
    turing_conv_speed: float = 1.0
    """Rate of a Turing GPU's convolutions (T4, Quadro RTX 6000 and 8000) per datasheet FLOP,
    over the efficiencies above, which Volta, Pascal and Kepler rows set; with the four below,
    fitted on published absolute rows (``Calibration.conv_speed``). cuDNN's convolutions reach
    a share of the peak of their own on each generation, which its datasheet does not say:
    Lambda's ResNet-50 in fp16 ran an RTX A6000 at 0.59-0.74 of an A100's speed under
    TensorFlow 1, TensorFlow 2 and PyTorch alike, where the two datasheets, tensor cores and
    bandwidth both, say 0.50, and an RTX 3090 as fast as the A6000 on half its tensor peak. A
    matrix product's share is the card's own, measured (``catalog.tensor_speed``)."""
    ga100_conv_speed: float = 1.0
    """The same for the A100's GA100."""
    ga10x_conv_speed: float = 1.0
    """The same for Ampere's GA10x chips (A10, A10G, A40, RTX A6000, RTX 3090)."""
    ada_conv_speed: float = 1.0
    """The same for Ada (L4, L40, L40S, RTX 6000 Ada, RTX 4090)."""
    hopper_conv_speed: float = 1.0
    """The same for Hopper (H100, H200, GH200)."""
    gemm_efficiency: float = 0.6
    """Share of the datasheet peak of its unit (FP32 CUDA cores, TF32 or 16-bit tensor cores)
    that a wide matrix product reaches (prior: DeepBench's large SGEMMs reach 0.76 of the FP32
    peak, ``data/gpu-kernel-fit.json``; cuBLAS's tensor-core GEMMs 0.6-0.8 of theirs)."""
    tpu_efficiency: float = 0.3
    """Share of the MXU's bf16 peak reached through XLA; a prior."""
    memory_efficiency: float = 0.6
    """Share of an accelerator's peak memory bandwidth that streaming kernels reach."""
    cpu_memory_efficiency: float = 0.6
    """The same on a CPU VM's share of its socket's memory channels: another memory system,
    fitted apart (only CPU rows see it)."""
    elements_per_sm_cycle: float = 2.0
    """Activation elements a GPU multiprocessor moves per cycle through a convnet's
    memory-bound kernels on NCHW tensors under tensor-core convolutions (the layout transposes
    cuDNN adds, batch norm and activations over channels-first tensors), which wait on memory
    latency before bandwidth: Little's law, what is in flight over how long it waits. A prior:
    one element for each of 2,048 threads a multiprocessor against about 1,000 cycles of DRAM
    latency is 2 a cycle, whatever the element's size. Lambda's PyTorch ResNet-50 shows it: 2,791
    images/s on an H100 in fp16, 3,079 on an H200 (1.4x the bandwidth) and 3,076 on a B200
    (2.4x), whose multiprocessors cycle 1.1x as fast."""
    cpu_sync_per_thread: float = 0.02
    """Growth of the per-step CPU overhead with each thread (fork/join of every op)."""
    cpu_half_batch_per_thread: float = 0.1
    """Batch per CPU thread at which kernels reach half their efficiency (small batches leave
    threads idle)."""
    usl_alpha: float = 0.03
    """Universal scalability law: contention (serial share) of CPU threads."""
    usl_beta: float = 5e-4
    """Universal scalability law: coherency cost, makes very many vCPUs slower."""
    activation_traffic_scale: float = 1.0
    """Multiplier on the counted activation traffic (the memory-bound share of a step)."""
    host_augment_s_per_sample: float = 2e-4
    """Host CPU seconds to augment one image (Keras ImageDataGenerator, one Python thread)."""
    param_traffic_scale: float = 1.0
    """Multiplier on the optimizer's per-step parameter traffic (weights, gradients, slots)."""
    embedding_traffic_scale: float = 1.0
    """Multiplier on parameter traffic for embedding tables (dense updates of sparse rows)."""
    cpu_cell_step_s: float = 3e-4
    """Latency of one recurrent time step (forward + backward, one direction) on a CPU."""
    gpu_generic_cell_step_s: float = 1e-3
    """The same on a GPU with the generic (non-cuDNN) LSTM: many tiny kernel launches."""
    tpu_cell_step_s: float = 2e-4
    """The same under XLA on a TPU; a prior."""
    unfused_optimizer_traffic: float = 5.0
    """Optimizer traffic of Keras on TensorFlow 1 over a fused update's. Keras 2's Adam was
    Python expressions of one op each (``m = b1 * m + (1 - b1) * g`` is three kernels, each
    reading and writing a tensor as large as the weights): counted op by op, 34 tensor reads
    and writes a variable against a fused update's 7 (RMSprop 25 against 5): about 5x. A prior
    from that count; only Woolf's 2017 rows can see it."""
    kernel_overlap: float = 0.3
    """Share of the smaller of a step's compute and memory parts that the larger hides: on a
    GPU convolutions and matrix products read and write memory while they compute, and
    memory-bound kernels run beside them on other multiprocessors (0: the parts add up, 1: the
    step is a roofline's larger part). A prior; fitted on the published steps."""
    nchw_transpose_traffic: float = 0.5
    """Extra activation traffic, as a share of a convnet's, where tensor-core convolutions read
    NCHW tensors and cuDNN transposes them (prior: one more read and write of a layer's input
    and output against the six passes counted)."""
    transformer_traffic_scale: float = 1.0
    """Multiplier on a transformer's counted activation traffic (softmax, LayerNorm, GELU and
    dropout passes that frameworks fuse or not)."""
    attention_efficiency: float = 0.45
    """Share of its 16-bit unit's datasheet peak that fused attention (FlashAttention) reaches,
    forward and backward, counting the causal FLOPs it runs (prior: FlashAttention-2 reaches
    50-73% of an A100's peak forward and less backward, Dao 2023; about 35% of an H100's, Shah
    et al. 2024, FlashAttention-3). Only a workload that counts its attention apart (an LLM
    fine-tuning step, ``WorkloadFacts.attention_flops_per_sample``) uses it."""
    fp8_gemm_efficiency: float = 0.5
    """Share of the FP8 tensor peak that FP8 matrix products reach in training, the casts and
    scaling of Transformer Engine included (prior: NVIDIA's FP8 recipes train 1.3-1.5x faster
    than bf16 where the peak doubles, i.e. about 0.5 of the FP8 peak against 0.65 of bf16's)."""
    collective_efficiency: float = 0.5
    """Share of the catalog's interconnect bandwidth (NVLink both ways, PCIe one way) that NCCL's
    all-gather and reduce-scatter reach between a node's GPUs (a prior: nccl-tests' bus bandwidth
    on 8-GPU NVLink nodes is commonly reported at 40-55% of the bidirectional NVLink figure)."""
    pcie_collective_efficiency: float = 0.3
    """The same between GPUs that talk over PCIe only (no NVLink): GeForce cards have no
    peer-to-peer access, so NCCL stages through host memory (a prior: about 10 GB/s of a PCIe
    4.0 x16 link's 32)."""
    collective_overlap: float = 0.8
    """Share of a step's device time that sharded data parallelism hides its gathers behind
    (FSDP and ZeRO-3 prefetch the next layer's weights while one computes; a prior)."""
    dequant_traffic_scale: float = 1.0
    """Multiplier on the counted traffic of expanding 4-bit weights to 16 bits (QLoRA: the
    dequantisation kernels run at the bandwidth of any streaming kernel; a prior)."""
    log_sigma: dict[str, float] = field(default_factory=dict)
    """Measured spread (log space) of leave-one-source-out errors, by ``source->target`` kind,
    and by kind and workload family where a family has its own (``gpu->gpu transformer``)."""
    fitted: tuple[str, ...] = ()
    """Parameters the fit moved from their prior (the rest the data cannot identify)."""
    measured_devices: tuple[str, ...] = ()
    """Accelerators and CPU families the fitted measurements ran on: a prediction for anything
    else is flagged extrapolated."""
    stack_speed: dict[str, float] = field(default_factory=dict)
    """How fast an LLM fine-tuning stack's device work runs against the shared fit's (1 where
    absent, as in the shipped fit: ``llm_fit.fit_all``'s per-stack trial sets it)."""
    stack_runs: dict[str, int] = field(default_factory=dict)
    """The published runs of each stack the LLM fit read (0: its recipe is checked by none)."""
    modern_usl_alpha: float = 0.0025
    """Contention of today's frameworks' threads (oneDNN TensorFlow 2.x, PyTorch, JAX), whose
    steps keep scaling to 192 cores: fitted on published runs' ratios by
    ``advisor.fitting.cpu_law`` (``make refit-check`` holds it to its fit), no coherency term.
    ``usl_alpha`` and ``usl_beta`` stay TensorFlow 1's."""

    def conv_speed(self, architecture: str) -> float:
        """How fast a GPU architecture's convolutions run per datasheet FLOP, over the fitted
        efficiencies (1 for Volta, the older generations, Blackwell and a TPU)."""
        if architecture not in CONV_SPEEDS:
            return 1.0
        return float(getattr(self, f"{architecture}_conv_speed"))


NUMBERS: tuple[str, ...] = tuple(
    name
    for name in Calibration.__dataclass_fields__
    if name
    not in (
        "log_sigma",
        "fitted",
        "measured_devices",
        "stack_speed",
        "stack_runs",
        "modern_usl_alpha",
    )
)
"""Every number of a calibration, as its file stores them."""
FREE_PARAMETERS: tuple[str, ...] = tuple(name for name in NUMBERS if name not in LLM_PARAMETERS)
"""What ``calibrate`` fits: every number but the LLM's, which no zoo row uses (``llm_fit``)."""
PRIOR = Calibration()
DEFAULT_LOG_SIGMA = 0.5
"""Spread used where validation measured none (a kind pair absent from the reference set)."""


def to_json(calibration: Calibration, **extra: Any) -> str:
    blob = asdict(calibration)
    del blob["stack_speed"], blob["stack_runs"]  # the LLM fit's (``calibration-llm.json``)
    del blob["modern_usl_alpha"]  # ``cpu_law``'s, held in the code
    blob["fitted"] = list(calibration.fitted)
    blob["measured_devices"] = list(calibration.measured_devices)
    blob.update(extra)
    return json.dumps(blob, indent=2, sort_keys=True) + "\n"


def from_dict(blob: dict[str, Any]) -> Calibration:
    values: dict[str, Any] = {name: float(blob[name]) for name in NUMBERS if name in blob}
    return replace(
        PRIOR,
        **values,
        log_sigma={k: float(v) for k, v in blob.get("log_sigma", {}).items()},
        fitted=tuple(blob.get("fitted", ())),
        measured_devices=tuple(blob.get("measured_devices", ())),
    )


def read(path: Path) -> Calibration:
    return from_dict(json.loads(path.read_text()))


@lru_cache(maxsize=1)
def shipped_calibration() -> Calibration:
    """The committed fit (the prior when the file is absent, e.g. before the first fit)."""
    try:
        return read(shipped(CALIBRATION_FILE))
    except FileNotFoundError:
        return PRIOR


def across_kinds(kind: str) -> str:
    """The spread key of a prediction for a device of ``kind`` from a probe of the other kind
    (the device model's absolute time): ``gpu->cpu`` for a CPU, ``cpu->gpu`` for a GPU or TPU."""
    return "gpu->cpu" if kind == "cpu" else "cpu->gpu"


def sigma_of(log_sigma: dict[str, float], kinds: str, family: str = "") -> float:
    """The spread of a ``source->target`` kind of prediction (a TPU target counts as a GPU
    one): the workload family's own where it was measured, else the kind's, else ``all``."""
    kinds = kinds.replace("->tpu", "->gpu").replace("tpu->", "gpu->")
    return (
        log_sigma.get(f"{kinds} {family}")
        or log_sigma.get(kinds)
        or log_sigma.get("all", DEFAULT_LOG_SIGMA)
    )


@lru_cache(maxsize=1)
def llm_calibration() -> Calibration:
    """The shipped fit with the LLM parameters of ``calibration-llm.json`` laid over it, and
    that fit's own spread (``log_sigma``); the shipped fit alone when the file is absent."""
    base = shipped_calibration()
    try:
        blob = json.loads(shipped(LLM_CALIBRATION_FILE).read_text())
    except FileNotFoundError:
        return base
    values: dict[str, Any] = {name: float(blob[name]) for name in LLM_PARAMETERS if name in blob}
    sigma = {k: float(v) for k, v in blob.get("log_sigma", {}).items()}
    runs = {k: int(v) for k, v in blob.get("stack_runs", {}).items()}
    return replace(base, **values, log_sigma={**base.log_sigma, **sigma}, stack_runs=runs)
