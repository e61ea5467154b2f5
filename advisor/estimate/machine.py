"""A device as the step model sees it: effective compute, bandwidth, latencies, and the kernel path.

A ``Machine`` is resolved from a catalog row, a software stack and a precision. What kernels run
there decides more than the chip: TF32 tensor cores on Ampere and later in fp32, tensor cores only
with mixed precision before that, cuDNN's LSTM only from Keras 2's unified layer on (TensorFlow
1's Keras ran the generic LSTM on a GPU), XLA and the bf16 MXU on a TPU, and a generic (no AVX2)
pip build of TensorFlow 1 on a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.errors import UsageError
from advisor.estimate import catalog
from advisor.estimate.kernels import shipped_fit
from advisor.estimate.parameters import Calibration

PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "mixed")
"""``fp32``: the framework's default (TensorFlow 2 runs fp32 matmuls as TF32 on Ampere and
later); ``tf32``: TF32 tensor cores asked for; ``fp16`` and ``bf16``: mixed precision with that
16-bit type (fp16 tensor cores from Volta, bf16 from Ampere, bf16 on every TPU); ``mixed``: the
device's mixed precision (fp16 on a GPU, bf16 on a TPU)."""
CALIBRATED_ACCELERATORS = frozenset({"K80", "V100"})
CALIBRATED_CPU_FAMILIES = frozenset({"skylake"})


@dataclass(frozen=True)
class Stack:
    """The software that runs the step."""

    tensorflow_major: int = 2
    vectorised: bool = True
    """CPU kernels built with AVX2/FMA or wider (oneDNN); False for TensorFlow 1's pip wheel."""
    tf32: bool | None = None
    """fp32 matmuls as TF32 on Ampere+; None: TensorFlow's default (on from 2.4, off in 1.x)."""
    cudnn_rnn: bool | None = None
    """Recurrent layers on a GPU run cuDNN's fused kernel; None: Keras's default (from TF 2 on;
    TensorFlow 1 needed the explicit ``CuDNNLSTM`` layer)."""

    @property
    def uses_tf32(self) -> bool:
        return self.tf32 if self.tf32 is not None else self.tensorflow_major >= 2

    @property
    def uses_cudnn_rnn(self) -> bool:
        return self.cudnn_rnn if self.cudnn_rnn is not None else self.tensorflow_major >= 2


MODERN = Stack()


@dataclass(frozen=True)
class Machine:
    """Effective capabilities of one device (per data-parallel replica)."""

    kind: str
    """``cpu``, ``gpu`` or ``tpu``."""
    label: str
    compute_flops: float
    """Effective FLOP/s of conv/matmul kernels on this kernel path, per replica."""
    bandwidth: float
    """Effective bytes/s of streaming kernels, per replica."""
    overhead_s: float
    """Fixed cost of one step."""
    cell_step_s: float
    """Latency of one recurrent time step (one direction, forward + backward), its arithmetic
    aside."""
    recurrent_flops: float = 0.0
    """FLOP/s of a recurrent layer's per-time-step matrix products (0: ``compute_flops``)."""
    matmul_flops: float = 0.0
    """FLOP/s of wide dense matrix products (a transformer's, as wide as batch x tokens), per
    replica: on a GPU the kernel path's datasheet peak at the CUDA-core efficiency
    (``gpu_efficiency``) whichever unit runs it; 0: ``compute_flops``. The lower
    ``tensor_efficiency`` of ``compute_flops`` is fitted on convnets (cuDNN convolutions at the
    seed's channel counts); a transformer's GEMMs reach the same share of the tensor-core peak
    as of the CUDA-core one (docs/PREDICTION.md, "Transformers")."""
    recurrent_call_s: float = 0.0
    """Fixed cost of one recurrent layer call, one direction (cuDNN's per-call set-up)."""
    replicas: int = 1
    threads: float = 1.0
    """CPU threads that share a step's batch (1 on an accelerator)."""
    interconnect_bytes_s: float = 0.0
    memory_bytes: float | None = None
    """Device memory per replica; None on a CPU (host memory is the instance's concern)."""
    half_precision: bool = False
    """Activations in 16 bits (mixed precision that actually runs on 16-bit units)."""
    winograd: bool = False
    """3x3 convolutions run as Winograd transforms (cuDNN on CUDA cores), fewer multiplications."""
    kernel_path: str = ""
    """How conv/matmul run (``oneDNN fp32``, ``mixed fp16 on tensor cores``, ``XLA, bf16 MXU``)."""
    lstm_kernel: str = ""
    """How a recurrent layer runs (``cuDNN LSTM``, ``generic LSTM``)."""
    extrapolated: bool = False
    """Beyond the hardware or kernel paths the calibration data measured."""


def usl_speedup(vcpus: float, calibration: Calibration) -> float:
    """Universal scalability law: throughput of ``vcpus`` threads relative to one."""
    n = max(vcpus, 1.0)
    return n / (1 + calibration.usl_alpha * (n - 1) + calibration.usl_beta * n * (n - 1))


def cpu_machine(
    family_name: str | None,
    vcpus: float,
    calibration: Calibration,
    *,
    stack: Stack = MODERN,
    precision: str = "fp32",
) -> Machine:
    """``vcpus`` threads of a CPU family (the stated default family when unknown)."""
    family, defaulted = catalog.cpu_family(family_name)
    speedup = usl_speedup(vcpus, calibration)
    build = 1.0 if stack.vectorised else calibration.generic_build_speed
    compute = family.vcpu_gflops * 1e9 * calibration.cpu_efficiency * build * speedup
    bandwidth = family.memory_gbs_per_vcpu * 1e9 * calibration.memory_efficiency * speedup
    clock = 2.0 / family.all_core_ghz
    path = "oneDNN fp32" if stack.vectorised else "generic build (no AVX2/FMA), fp32"
    if precision != "fp32":
        path += " (mixed precision gives no speed-up here: fp32 kernels assumed)"
    return Machine(
        kind="cpu",
        label=f"{vcpus:g} vCPU {family.name}{' (default family)' if defaulted else ''}",
        compute_flops=compute,
        bandwidth=bandwidth,
        overhead_s=calibration.cpu_overhead_s
        * clock
        * (1 + calibration.cpu_sync_per_thread * vcpus),
        cell_step_s=calibration.cpu_cell_step_s * clock,
        threads=vcpus,
        kernel_path=path,
        lstm_kernel="oneDNN LSTM" if stack.vectorised else "generic LSTM",
        extrapolated=defaulted or family.name not in CALIBRATED_CPU_FAMILIES,
    )


def accelerator_machine(
    name: str,
    count: int,
    calibration: Calibration,
    *,
    stack: Stack = MODERN,
    precision: str = "fp32",
    cudnn_eligible: bool = True,
) -> Machine | None:
    """``count`` units of an accelerator (a TPU unit is a slice of chips); None if unknown."""
    spec = catalog.accelerator(name)
    if spec is None:
        return None
    replicas = max(count, 1) * spec.chips
    if spec.kind == "tpu":
        return Machine(
            kind="tpu",
            label=f"{count}x {name}" if count > 1 else name,
            compute_flops=spec.half_tflops * 1e12 * calibration.tpu_efficiency,
            bandwidth=spec.bandwidth_gbs * 1e9 * calibration.memory_efficiency,
            overhead_s=calibration.tpu_overhead_s,
            cell_step_s=calibration.tpu_cell_step_s,
            replicas=replicas,
            interconnect_bytes_s=spec.interconnect_gbs * 1e9,
            memory_bytes=spec.memory_gib * 2**30,
            half_precision=True,
            kernel_path=f"XLA, bf16 MXU, {replicas} chip(s) data-parallel"
            + ("" if precision in ("bf16", "mixed") else f" ({precision} asked: TPUs run bf16)"),
            lstm_kernel="XLA while-loop LSTM",
            extrapolated=True,
        )
    half_peak, half_name = _half_peak(spec, precision)
    half = half_peak > spec.fp32_tflops
    tf32 = spec.tf32_tflops > 0 and (precision == "tf32" or stack.uses_tf32)
    if half:
        peak, efficiency, path = half_peak, calibration.tensor_efficiency, f"mixed {half_name}"
        winograd = False  # tensor-core kernels run 3x3 convolutions as implicit GEMM
        path += " on tensor cores" if spec.has_tensor_cores else " (fast fp16, no tensor cores)"
    elif tf32:
        peak, efficiency, path = spec.tf32_tflops, calibration.tensor_efficiency, "fp32 as TF32"
        winograd = False
    else:
        peak, efficiency, path = spec.fp32_tflops, calibration.gpu_efficiency, "fp32, Winograd 3x3"
        winograd = True  # cuDNN picks Winograd for 3x3 stride-1 convolutions on CUDA cores
    if precision not in ("fp32", "mixed") and not (half or (tf32 and precision == "tf32")):
        path += f" ({precision} does not run faster than fp32 on {name}: fp32 assumed)"
    elif precision == "mixed" and not half:
        path += " (no fast fp16 on this GPU)"
    cudnn = cudnn_eligible and stack.uses_cudnn_rnn
    rnn = shipped_fit().recurrent  # fitted on DeepBench's measured cuDNN RNN kernels
    return Machine(
        kind="gpu",
        label=f"{count}x {name}" if count > 1 else name,
        compute_flops=peak * 1e12 * efficiency,
        matmul_flops=peak * 1e12 * calibration.gpu_efficiency,
        bandwidth=spec.bandwidth_gbs * 1e9 * calibration.memory_efficiency,
        overhead_s=calibration.gpu_overhead_s,
        cell_step_s=rnn.step_s if cudnn else calibration.gpu_generic_cell_step_s,
        recurrent_flops=spec.fp32_tflops * 1e12 * rnn.efficiency if cudnn else 0.0,
        recurrent_call_s=rnn.call_s if cudnn else 0.0,
        replicas=replicas,
        interconnect_bytes_s=spec.interconnect_gbs * 1e9,
        memory_bytes=spec.memory_gib * 2**30,
        half_precision=half,
        winograd=winograd,
        kernel_path=path + (f", {replicas} GPUs data-parallel" if replicas > 1 else ""),
        lstm_kernel="cuDNN LSTM" if cudnn else "generic LSTM",
        extrapolated=name not in CALIBRATED_ACCELERATORS,
    )


def _half_peak(spec: catalog.Accelerator, precision: str) -> tuple[float, str]:
    """The datasheet peak of a GPU's 16-bit type for ``precision`` (0 when it runs none)."""
    if precision in ("fp16", "mixed"):
        return spec.fp16_tflops or spec.half_tflops, "fp16"
    if precision == "bf16":
        return spec.bf16_tflops, "bf16"
    return 0.0, ""


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UsageError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
