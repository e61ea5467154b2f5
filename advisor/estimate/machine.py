"""A device as the step model sees it: effective compute, bandwidth, latencies, and the kernel path.

A ``Machine`` is resolved from a catalog row, a software stack and a precision. What kernels run
there decides more than the chip: TF32 tensor cores on Ampere and later in fp32, tensor cores only
with mixed precision before that, cuDNN's LSTM only from Keras 2's unified layer on (TensorFlow
1's Keras ran the generic LSTM on a GPU), XLA and the bf16 MXU on a TPU, and a generic (no AVX2)
pip build of TensorFlow 1 on a CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from advisor.errors import UsageError
from advisor.estimate import catalog
from advisor.estimate.frameworks import TENSORFLOW_2, Framework
from advisor.estimate.kernels import shipped_fit
from advisor.estimate.parameters import Calibration

PRECISIONS = ("fp32", "fp32-strict", "tf32", "fp16", "bf16", "mixed", "fp8")
"""``fp32``: the framework's default (``advisor.estimate.frameworks``: TF32 on Ampere and later
for TensorFlow 2, JAX and NVIDIA's containers, for PyTorch's convolutions but not its matmuls);
``fp32-strict``: FP32 on the CUDA cores everywhere (six bf16 passes on a TPU); ``tf32``: TF32
tensor cores everywhere; ``fp16`` and ``bf16``: mixed precision with that 16-bit type (fp16
tensor cores from Volta, bf16 from Ampere, bf16 on every TPU); ``mixed``: the device's mixed
precision (fp16 on a GPU, bf16 on a TPU); ``fp8``: matrix products on FP8 tensor cores
(Transformer Engine, Hopper, Ada and Blackwell), everything else in bf16 (bf16 alone where a
GPU has no FP8 units)."""
HALF_PRECISIONS = frozenset({"fp16", "bf16", "mixed", "fp8"})
TPU_STRICT_FP32_PASSES = 6
"""bf16 passes of a float32 product on a TPU at ``Precision.HIGHEST`` ("On TPU: performs float32
computations in 6 bfloat16 passes", the ``jax.lax.Precision`` documentation); the default is one."""
CALIBRATED_ACCELERATORS = frozenset({"K80", "V100"})
CALIBRATED_CPU_FAMILIES = frozenset({"skylake"})


@dataclass(frozen=True)
class Stack:
    """The software that runs the step."""

    framework: Framework = TENSORFLOW_2
    """Which framework, version and container: what float32 runs as (``frameworks``)."""
    cpu_isa: str = "native"
    """The vector instructions its CPU kernels were built for (``CPU_ISAS``): ``native`` (the
    CPU's widest, chosen at run time or built for the machine: oneDNN, PyTorch, JAX, a build from
    source for its host), ``avx2`` (built for AVX2 and FMA and no wider: Woolf's compiled
    TensorFlow 1.2, ``-mavx2 -mfma``), ``avx`` (TensorFlow's pip wheels from 1.6, whose release
    notes say "Prebuilt binaries will use AVX instructions", until oneDNN's kernels became the
    default in 2.9: no FMA), ``sse`` (older pip wheels)."""
    cudnn_rnn: bool | None = None
    """Recurrent layers on a GPU run cuDNN's fused kernel; None: Keras's default (from TF 2 on;
    TensorFlow 1 needed the explicit ``CuDNNLSTM`` layer)."""
    layout: str = "nhwc"
    """How image tensors lie in memory: ``nhwc`` (channels last: Keras's default, what
    tensor-core convolutions read) or ``nchw`` (tf_cnn_benchmarks' and PyTorch's default)."""
    fused_optimizer: bool = True
    """The optimizer updates each variable in one fused kernel (TensorFlow's ``ResourceApply*``,
    PyTorch's foreach/fused steps, Keras 3 under XLA); False for Keras on TensorFlow 1, whose
    optimizers were Python expressions of one elementwise op each."""
    eager_attention: bool = False
    """Attention written out in eager PyTorch (matrix products and a softmax over the
    materialised scores, as nanoGPT's hand-written attention) rather than a fused kernel:
    under autocast the softmax runs in float32 (PyTorch's autocast op reference lists softmax
    among the ops that autocast to float32), so the scores cross memory at 32 bits, casts
    included, whatever the precision."""

    @property
    def vectorised(self) -> bool:
        """CPU kernels built with AVX2 and FMA or wider."""
        return self.cpu_isa in ("avx2", "native")

    @property
    def uses_cudnn_rnn(self) -> bool:
        if self.cudnn_rnn is not None:
            return self.cudnn_rnn
        return not self.framework.tensorflow_1


MODERN = Stack()


@dataclass(frozen=True)
class Rates:
    """What one replica's kernels reach, per second: the datasheet's units at the calibrated
    share of their peak."""

    conv_flops: float
    """FLOP/s of convolutions on this kernel path (on CUDA cores counted before the Winograd
    reduction is applied to the work)."""
    matmul_flops: float
    """FLOP/s of matrix products (dense layers, a transformer's GEMMs)."""
    bandwidth: float
    """Bytes/s of streaming kernels."""
    recurrent_flops: float = 0.0
    """FLOP/s of a recurrent layer's per-time-step matrix products (0: ``matmul_flops``)."""
    winograd_flops: float = 0.0
    """The CUDA cores' rate for what a 3x3 (or 5x5) layer keeps of its multiplications as
    Winograd transforms (``WINOGRAD_REDUCTION`` fewer). cuDNN takes each layer's faster
    algorithm, this or its unit's direct product at ``conv_flops``: on CUDA cores Winograd
    always wins; beside tensor cores it wins where their TF32 barely outruns the CUDA cores (a
    GeForce, an A6000, an L40), never under 16-bit tensor cores. 0: no Winograd (a TPU, a CPU)."""
    attention_flops: float = 0.0
    """FLOP/s of fused attention (FlashAttention) on its 16-bit unit (0: as the matrix
    products): used only where a workload counts its attention apart."""
    element_rate: float = 0.0
    """Activation elements/s that the memory-bound kernels move at most, whatever ``bandwidth``
    allows, where they wait on latency (a GPU's NCHW tensor-core path, ``Kernels.transposes``):
    its multiprocessors' cycles times the elements each keeps in flight per cycle (0:
    bandwidth alone)."""


@dataclass(frozen=True)
class Peaks:
    """What the datasheet allows one replica: no kernel beats it (but for what Winograd saves)."""

    conv_flops: float
    """FLOP/s of the unit convolutions run on."""
    matmul_flops: float
    """FLOP/s of the unit matrix products run on."""
    bandwidth: float
    """Memory bandwidth, bytes/s."""
    attention_flops: float = 0.0
    """FLOP/s of the unit attention runs on (0: ``matmul_flops``)."""


@dataclass(frozen=True)
class Latencies:
    """What takes time whatever the work."""

    overhead_s: float
    """Fixed cost of one step."""
    cell_step_s: float
    """One recurrent time step (one direction, forward + backward), its arithmetic aside."""
    recurrent_call_s: float = 0.0
    """One recurrent layer call, one direction (cuDNN's per-call set-up)."""


@dataclass(frozen=True)
class Topology:
    """How many replicas share a step, and how they talk."""

    replicas: int = 1
    threads: float = 1.0
    """CPU threads that share a step's batch (1 on an accelerator)."""
    interconnect_bytes_s: float = 0.0
    interconnect: str = ""
    """How the replicas of one node talk (``nvlink4``, ``pcie4``, ``ici``: ``data/devices.csv``;
    ``pcie4-host`` where the cards have no peer access and every exchange crosses the host)."""
    nodes: int = 1
    """Machines the replicas are spread over, ``replicas / nodes`` on each."""
    network_bytes_s: float = 0.0
    """Each node's network to the others, bytes/s (what crosses between nodes)."""

    @property
    def staged(self) -> bool:
        """The node's GPUs have no peer-to-peer access (GeForce since Ampere): NCCL stages
        every exchange through host memory, which all of them share."""
        return self.interconnect.endswith("-host")

    @property
    def per_node(self) -> int:
        """Replicas on one node, joined by ``interconnect``."""
        return max(1, self.replicas // max(self.nodes, 1))


@dataclass(frozen=True)
class Kernels:
    """How the software runs a step on the device."""

    path: str = ""
    """How conv/matmul run (``oneDNN fp32``, ``mixed fp16 on tensor cores``, ``XLA, bf16 MXU``)."""
    lstm: str = ""
    """How a recurrent layer runs (``cuDNN LSTM``, ``generic LSTM``)."""
    half_precision: bool = False
    """Activations in 16 bits (mixed precision that actually runs on 16-bit units)."""
    host_overlap: bool = False
    """The host dispatches a step while the device runs (an accelerator under TensorFlow 2,
    PyTorch or JAX); TensorFlow 1's Keras fed each step and waited for it (``feed_dict``)."""
    fused_optimizer: bool = True
    """See ``Stack.fused_optimizer``."""
    transposes: bool = False
    """Tensor-core convolutions on NCHW tensors: cuDNN transposes each one's input and output
    to NHWC and back (NVIDIA, "Deep Learning Performance: Convolutional Layers", tensor
    layouts), more activation traffic."""
    scores_32bit: bool = False
    """A transformer's attention scores stay 32-bit in mixed precision (``Stack.eager_attention``)."""
    precision: str = ""
    """The number type the products run in here (``fp8``, ``bf16``, ``fp16``, ``tf32``,
    ``fp32``): what a task tells the training script ("" on a CPU)."""
    fallback: str = ""
    """What the precision asked runs as instead here (``fp8 asked: no fp8 units on A100, bf16
    runs``), "" when it runs as asked: what an answer warns of."""
    roofline: bool = False
    """The step takes the larger of its arithmetic and its memory traffic, not their sum less
    ``kernel_overlap``'s share: XLA on a TPU fuses the elementwise work (batch norm, activations,
    residual adds) into the products around it."""
    fa2_share: float = 1.0
    """Share of the attention rate FlashAttention-2 reaches here: ``FA2_SHARE`` on a GPU newer
    than the Ampere it was written for, 1 elsewhere (``attention_kernel``)."""


@dataclass(frozen=True)
class Machine:
    """One device as the step model sees it (per data-parallel replica), built from its parts:
    the rates its kernels reach, the datasheet's peaks, its latencies, how many replicas share a
    step and how they talk, and how the software runs it."""

    kind: str
    """``cpu``, ``gpu`` or ``tpu``."""
    label: str
    rates: Rates
    peaks: Peaks
    latencies: Latencies
    topology: Topology = Topology()
    kernels: Kernels = Kernels()
    memory_bytes: float | None = None
    """Device memory per replica; None on a CPU (host memory is the instance's concern)."""
    extrapolated: bool = False
    """Beyond the hardware or kernel paths the calibration data measured."""

    @property
    def winograd(self) -> bool:
        """A 3x3 convolution runs as Winograd transforms here, faster than a direct product."""
        return self.rates.winograd_flops * WINOGRAD_REDUCTION > self.rates.conv_flops


FA2_SHARE = 0.52
"""FlashAttention-2's rate on an H100 over the kernels written for Hopper: 329 TFLOP/s against
cuDNN's 631 and FlashAttention-3's 632 (bf16, 24 heads of 128, 4,608 tokens; TritonBench in
pytorch/pytorch#142132, 2024-12). FA2 issues Ampere's ``mma.sync``; Hopper's warpgroup products
and asynchronous copies are what FlashAttention-3 adds (Shah et al. 2024: FA2 "achieves only
35% utilization on H100", FA3 75%). Blackwell is taken alike: FA2 has no kernels of its own
there either."""
FA2_BEHIND = frozenset({"hopper", "blackwell"})
"""GPU generations whose own attention kernels outrun FlashAttention-2 (``FA2_SHARE``)."""


def attention_kernel(machine: Machine, kernel: str) -> Machine:
    """``machine`` running its fused attention with ``kernel`` (``FineTune.attention``):
    ``fa2`` at FlashAttention-2's share of the rate where the GPU is newer than it (``native``:
    as built)."""
    if kernel != "fa2" or machine.kernels.fa2_share == 1.0 or not machine.rates.attention_flops:
        return machine
    rates = replace(
        machine.rates, attention_flops=machine.rates.attention_flops * machine.kernels.fa2_share
    )
    return replace(machine, rates=rates)


WINOGRAD_REDUCTION = 2.25
"""Fewer multiplications of Winograd F(2x2, 3x3) against direct 3x3 convolution (Lavin and Gray,
"Fast Algorithms for Convolutional Neural Networks", CVPR 2016), the smallest of cuDNN's tiles;
taken for 5x5 filters too (F(2x2, 5x5) saves 2.78x)."""


def usl_law(calibration: Calibration, stack: Stack) -> tuple[float, float]:
    """(contention, coherency) of a step's threads under ``stack``: today's oneDNN builds',
    which keep scaling to 192 cores and have no coherency term (``Calibration.modern_usl_alpha``),
    or the law fitted on TensorFlow 1.2's runs, which slowed past 32-64 vCPUs (Woolf 2017)."""
    if stack.framework.scales_like_onednn:
        return calibration.modern_usl_alpha, 0.0
    return calibration.usl_alpha, calibration.usl_beta


def usl_speedup(vcpus: float, law: tuple[float, float], slowdown: float = 1.0) -> float:
    """Universal scalability law: throughput of ``vcpus`` threads relative to one thread's
    unslowed work under ``law`` (``usl_law``). ``slowdown`` stretches the threads' own work (a
    generic build's scalar arithmetic), not their contention and coherency waits, which stay
    the machine's."""
    alpha, beta = law
    n = max(vcpus, 1.0)
    return n / (slowdown + alpha * (n - 1) + beta * n * (n - 1))


def usl_peak(law: tuple[float, float], slowdown: float = 1.0) -> float:
    """The thread count past which ``usl_speedup`` falls: sqrt((slowdown - alpha) / beta)."""
    alpha, beta = law
    if beta <= 0:
        return float("inf")
    return math.sqrt(max(slowdown - alpha, 0.0) / beta)


def threads_used(vcpus: float, calibration: Calibration, stack: Stack) -> float:
    """The threads a step runs on among ``vcpus``: all of them under TensorFlow 1, whose runs
    were measured slower on 64 vCPUs than on 32 (Woolf's 2017 rows, the fit's coherency term);
    under any other no more than its law's peak (none for today's: they keep scaling), since a
    run can be given fewer intra-op threads: more vCPUs are never slower."""
    if stack.framework.tensorflow_1:
        return vcpus
    return min(vcpus, max(1.0, usl_peak(usl_law(calibration, stack))))


CPU_ISAS = ("sse", "avx", "avx2", "native")
AVX2_FLOPS_PER_CYCLE = 32
"""FP32 operations a core issues per cycle in AVX2 with FMA: two 256-bit FMA pipes, 8 lanes, 2
operations each. A core with AVX-512 on two 512-bit pipes (``catalog.CpuFamily``'s 64) issues
twice as many, but only to code built for them."""


def build_speed(cpu_isa: str, calibration: Calibration, flops_per_cycle: int) -> float:
    """A build's arithmetic speed on a core of ``flops_per_cycle`` FP32 operations a cycle (its
    family's), against kernels that use all of them (``native``). An AVX2 build uses AVX2's 32
    of them: half
    of an AVX-512 core with two 512-bit pipes (Skylake-SP to Emerald Rapids, Zen 5), all of any
    other. An SSE build's speed is fitted (``generic_build_speed``); an AVX build's is twice
    that, its vectors twice as wide at the same instruction mix (per cycle SSE, AVX and AVX2 with
    FMA issue 8, 16 and 32 FP32 operations on two vector ports), never above an AVX2 build's."""
    avx2 = min(1.0, AVX2_FLOPS_PER_CYCLE / flops_per_cycle)
    if cpu_isa == "native":
        return 1.0
    if cpu_isa == "avx2":
        return avx2
    if cpu_isa == "avx":
        return min(avx2, 2.0 * calibration.generic_build_speed)
    if cpu_isa == "sse":
        return calibration.generic_build_speed
    raise ValueError(f"unknown CPU build {cpu_isa!r} (one of {', '.join(CPU_ISAS)})")


def cpu_machine(
    family_name: str | None,
    vcpus: float,
    calibration: Calibration,
    *,
    stack: Stack = MODERN,
    precision: str = "fp32",
    threads_per_core: int = 0,
    threads: float | None = None,
) -> Machine:
    """``vcpus`` threads of a CPU family (the stated default family when unknown), each one of
    ``threads_per_core`` threads of its core (0: the family's, as a cloud VM rents them); a step
    on ``threads`` of them where given (an intra-op thread count a run is set to), never more
    than ``threads_used``."""
    family, defaulted = catalog.cpu_family(family_name)
    most = threads_used(vcpus, calibration, stack)
    used = most if threads is None else max(1.0, min(threads, most))
    law = usl_law(calibration, stack)
    speedup = usl_speedup(used, law)
    build = build_speed(stack.cpu_isa, calibration, family.fp32_flops_per_cycle)
    per_cpu = family.gflops_per_cpu(threads_per_core) * 1e9
    peak = per_cpu * vcpus
    threads = usl_speedup(used, law, 1 / build)  # the build slows their work alone
    compute = per_cpu * calibration.cpu_efficiency * threads
    bandwidth = family.memory_gbs_per_vcpu * 1e9 * calibration.cpu_memory_efficiency * speedup
    clock = 2.0 / family.all_core_ghz
    path = {
        "native": f"{'oneDNN' if stack.framework.cpu_kernels == 'onednn' else 'Eigen'} fp32",
        "avx2": "AVX2 build (no AVX-512), fp32",
        "avx": "AVX build (no AVX2/FMA), fp32",
        "sse": "generic build (no AVX), fp32",
    }[stack.cpu_isa]
    if precision in HALF_PRECISIONS:
        path += " (mixed precision gives no speed-up here: fp32 kernels assumed)"
    if used < most:
        path += f" ({used:.0f} of {vcpus:g} threads: more would slow this step)"
    elif used < vcpus:
        path += f" ({used:.0f} of {vcpus:g} threads: more add nothing in the model)"
    return Machine(
        kind="cpu",
        label=f"{vcpus:g} vCPU {family.name}{' (default family)' if defaulted else ''}",
        rates=Rates(conv_flops=compute, matmul_flops=compute, bandwidth=bandwidth),
        peaks=Peaks(
            conv_flops=peak,
            matmul_flops=peak,
            bandwidth=family.memory_gbs_per_vcpu * 1e9 * vcpus,
        ),
        latencies=Latencies(
            overhead_s=calibration.cpu_overhead_s
            * clock
            * (1 + calibration.cpu_sync_per_thread * used),
            cell_step_s=calibration.cpu_cell_step_s * clock,
        ),
        topology=Topology(threads=used),
        kernels=Kernels(
            path=path,
            lstm="oneDNN LSTM" if stack.vectorised else "generic LSTM",
            fused_optimizer=stack.fused_optimizer,
        ),
        extrapolated=defaulted or not measured(family.name, calibration, CALIBRATED_CPU_FAMILIES),
    )


def accelerator_machine(
    name: str,
    count: int,
    calibration: Calibration,
    *,
    stack: Stack = MODERN,
    precision: str = "fp32",
    cudnn_eligible: bool = True,
    nodes: int = 1,
    network_bytes_s: float = 0.0,
) -> Machine | None:
    """``count`` units of an accelerator (a TPU unit is a slice of chips) on each of ``nodes``
    machines joined by a network of ``network_bytes_s`` each; None if unknown."""
    machine = _one_node(name, count, calibration, stack, precision, cudnn_eligible)
    if machine is None or nodes <= 1:
        return machine
    replicas = machine.topology.replicas * nodes
    path = machine.kernels.path.removesuffix(data_parallel(machine.topology.replicas))
    return replace(
        machine,
        label=f"{nodes} nodes x {machine.label}",
        topology=replace(
            machine.topology, replicas=replicas, nodes=nodes, network_bytes_s=network_bytes_s
        ),
        kernels=replace(
            machine.kernels, path=path + data_parallel(replicas, nodes, network_bytes_s)
        ),
    )


def data_parallel(replicas: int, nodes: int = 1, network_bytes_s: float = 0.0) -> str:
    """How a GPU machine's kernel path ends where its step is split over several GPUs:
    ``, 8 GPUs data-parallel``, or ``, 16 GPUs data-parallel over 2 nodes (1,000 Gb/s each)``."""
    if replicas <= 1:
        return ""
    text = f", {replicas} GPUs data-parallel"
    if nodes > 1:
        text += f" over {nodes} nodes ({network_bytes_s * 8 / 1e9:,.0f} Gb/s each)"
    return text


def _one_node(
    name: str,
    count: int,
    calibration: Calibration,
    stack: Stack,
    precision: str,
    cudnn_eligible: bool,
) -> Machine | None:
    """``count`` units of accelerator ``name`` in one machine; None if the catalog lacks it."""
    spec = catalog.accelerator(name)
    if spec is None:
        return None
    replicas = max(count, 1) * spec.chips
    label = f"{count}x {name}" if count > 1 else name
    if spec.kind == "tpu":
        return _tpu_node(spec, label, replicas, calibration, precision)
    return _gpu_node(name, spec, label, replicas, calibration, stack, precision, cudnn_eligible)


def _tpu_node(
    spec: catalog.Accelerator,
    label: str,
    replicas: int,
    calibration: Calibration,
    precision: str,
) -> Machine:
    """A TPU machine of ``replicas`` chips: XLA on the bf16 MXU, at the precision asked."""
    # a TPU's MXU multiplies bf16: float32 products run in one pass by default, and in six
    # when strict FP32 is asked (XLA's Precision.HIGHEST)
    passes = TPU_STRICT_FP32_PASSES if precision == "fp32-strict" else 1
    peak = spec.half_tflops * 1e12 / passes
    return Machine(
        kind="tpu",
        label=label,
        rates=Rates(
            conv_flops=peak * calibration.tpu_efficiency,
            matmul_flops=peak * calibration.tpu_efficiency,
            bandwidth=spec.bandwidth_gbs * 1e9 * calibration.memory_efficiency,
        ),
        peaks=Peaks(conv_flops=peak, matmul_flops=peak, bandwidth=spec.bandwidth_gbs * 1e9),
        latencies=Latencies(
            overhead_s=calibration.tpu_overhead_s, cell_step_s=calibration.tpu_cell_step_s
        ),
        topology=Topology(
            replicas=replicas,
            interconnect_bytes_s=spec.interconnect_gbs * 1e9,
            interconnect=spec.interconnect,
        ),
        kernels=Kernels(
            path=f"XLA, bf16 MXU, {replicas} chip(s) data-parallel"
            + _tpu_precision_note(precision),
            lstm="XLA while-loop LSTM",
            precision="fp32" if precision == "fp32-strict" else "bf16",
            fallback=_tpu_fallback(precision),
            # XLA converts a float32 product's operands for the MXU; the activations between
            # the products stay float32 in memory unless the model computes in bfloat16
            half_precision=precision in HALF_PRECISIONS,
            host_overlap=True,
            roofline=True,
        ),
        memory_bytes=spec.memory_gib * 2**30,
        extrapolated=True,
    )


def _gpu_node(
    name: str,
    spec: catalog.Accelerator,
    label: str,
    replicas: int,
    calibration: Calibration,
    stack: Stack,
    precision: str,
    cudnn_eligible: bool,
) -> Machine:
    """A machine of ``replicas`` GPUs ``name``: each kernel class on the unit the precision
    and the framework run it on (``gpu_unit``), at the calibrated share of its peak; recurrent
    layers on cuDNN's kernel where ``cudnn_eligible`` and the stack uses it."""
    conv = gpu_unit(spec, precision, stack.framework, "conv")
    matmul = gpu_unit(spec, precision, stack.framework, "matmul")
    # a generation's convolutions reach their own share of the peak, never more than all of it
    conv_speed = calibration.conv_speed(spec.architecture)
    attention = conv if matmul.name == "fp8" else matmul  # FlashAttention runs in 16 bits
    conv_efficiency = (
        calibration.tensor_efficiency if conv.tensor_cores else calibration.gpu_efficiency
    )
    gemm_efficiency = (
        calibration.fp8_gemm_efficiency if matmul.name == "fp8" else calibration.gemm_efficiency
    )
    cudnn = cudnn_eligible and stack.uses_cudnn_rnn
    nchw = stack.layout == "nchw" and not (conv.half and stack.framework.half_runs_nhwc)
    transposes = conv.tensor_cores and nchw
    rnn = shipped_fit().recurrent  # fitted on DeepBench's measured cuDNN RNN kernels
    fp32 = fp32_cores(spec)
    # Winograd runs on the CUDA cores: at the convolutions' own rate there (a P100's fp16 too),
    # else beside TF32 tensor cores in FP32; 16-bit tensor cores always outrun it
    winograd_cores = conv if not conv.tensor_cores else fp32 if not conv.half else None
    path = _describe_paths(spec, precision, conv, matmul)
    return Machine(
        kind="gpu",
        label=label,
        rates=Rates(
            conv_flops=conv.attainable * min(1.0, conv_efficiency * conv_speed),
            matmul_flops=matmul.attainable * gemm_efficiency,
            bandwidth=spec.bandwidth_gbs * 1e9 * calibration.memory_efficiency,
            recurrent_flops=fp32.attainable * rnn.efficiency if cudnn else 0.0,
            winograd_flops=(
                winograd_cores.attainable * min(1.0, calibration.gpu_efficiency * conv_speed)
                if winograd_cores
                else 0.0
            ),
            attention_flops=attention.peak * attention.speed * calibration.attention_efficiency,
            element_rate=(
                spec.sm_cycles_per_second * calibration.elements_per_sm_cycle if transposes else 0.0
            ),
        ),
        peaks=Peaks(conv.peak, matmul.peak, spec.bandwidth_gbs * 1e9, attention.peak),
        latencies=Latencies(
            overhead_s=calibration.gpu_overhead_s,
            cell_step_s=rnn.step_s if cudnn else calibration.gpu_generic_cell_step_s,
            recurrent_call_s=rnn.call_s if cudnn else 0.0,
        ),
        topology=Topology(
            replicas=replicas,
            interconnect_bytes_s=spec.interconnect_gbs * 1e9,
            interconnect=spec.interconnect,
        ),
        kernels=Kernels(
            path=path + data_parallel(replicas),
            lstm="cuDNN LSTM" if cudnn else "generic LSTM",
            half_precision=conv.half,
            # TensorFlow 2, PyTorch and JAX queue a step's kernels and return: the host works ahead
            host_overlap=not stack.framework.tensorflow_1,
            fused_optimizer=stack.fused_optimizer,
            transposes=transposes,
            scores_32bit=stack.eager_attention,
            precision=matmul.name if matmul.name == "fp8" else conv.name,
            fallback=precision_fallback(spec, precision, conv, matmul),
            fa2_share=FA2_SHARE if spec.architecture in FA2_BEHIND else 1.0,
        ),
        memory_bytes=spec.memory_gib * 2**30,
        extrapolated=not measured(name, calibration, CALIBRATED_ACCELERATORS),
    )


def _tpu_fallback(precision: str) -> str:
    """What a 16-bit or 8-bit type asked of a TPU runs as: bf16 ("" for the others: float32's
    products in bf16 are XLA's default there, as TF32 is a GPU framework's, said in the path)."""
    if precision in ("fp8", "fp16"):
        return f"{precision} asked: a TPU has no {precision} units, bf16 runs"
    return ""


def _tpu_precision_note(precision: str) -> str:
    if precision in ("bf16", "mixed"):
        return ""
    if precision == "fp32-strict":
        return f" (fp32-strict: float32 products in {TPU_STRICT_FP32_PASSES} bf16 passes)"
    return f" ({precision} asked: float32 products run in bf16, XLA's default on a TPU)"


def measured(name: str, calibration: Calibration, fallback: frozenset[str]) -> bool:
    """Whether the fitted measurements ran on ``name`` (an accelerator or a CPU family); the
    ``fallback`` set where the calibration does not list its devices (an older file)."""
    return name in (calibration.measured_devices or fallback)


@dataclass(frozen=True)
class Unit:
    """The unit one kernel class runs on: its number type and datasheet FLOP/s."""

    name: str
    """``fp32``, ``tf32``, ``fp16``, ``bf16`` or ``fp8``."""
    peak: float
    tensor_cores: bool
    issue_share: float = 1.0
    """Share of ``peak`` a matrix product can issue there: below 1 on CUDA cores whose FP32
    lanes also run the product's integer work (``catalog.Accelerator.fp32_gemm_share``)."""
    speed: float = 1.0
    """How much faster than a typical card, per datasheet FLOP, the card's tensor cores run
    (``catalog.tensor_speed``: its measured GEMM peak; 1 where not measured)."""

    @property
    def attainable(self) -> float:
        """The FLOP/s a matrix product's instruction mix can issue (before any efficiency)."""
        return self.peak * self.issue_share * self.speed

    @property
    def half(self) -> bool:
        """Its activations are 16-bit (FP8 products read and write bf16 activations)."""
        return self.name in ("fp16", "bf16", "fp8")


def fp32_cores(spec: catalog.Accelerator) -> Unit:
    """A GPU's CUDA cores in FP32, at what a matrix product can issue of their peak."""
    return Unit("fp32", spec.fp32_tflops * 1e12, False, spec.fp32_gemm_share)


def gpu_unit(spec: catalog.Accelerator, precision: str, framework: Framework, kernel: str) -> Unit:
    """Where a GPU runs one kernel class (``conv`` or ``matmul``) at ``precision``: the 16-bit
    tensor cores under mixed precision (when the GPU has a fast 16-bit type), TF32 where asked
    for or where the framework's float32 default is TF32 (``frameworks``), else FP32."""
    fp32 = fp32_cores(spec)
    speed = catalog.tensor_speed(spec) if spec.has_tensor_cores else 1.0
    if precision == "fp8" and kernel == "matmul" and spec.fp8_tflops > 0:
        return Unit("fp8", spec.fp8_tflops * 1e12, True, speed=speed)
    if precision in HALF_PRECISIONS:
        peak, name = _half_peak(spec, precision)
        if peak * 1e12 > fp32.attainable:
            return Unit(name, peak * 1e12, spec.has_tensor_cores, speed=speed)
        return fp32
    tf32 = precision == "tf32" or (precision == "fp32" and framework.tf32(kernel))
    # the library takes the tensor cores wherever they outrun what the CUDA cores can issue (a
    # GeForce's or an L40's TF32 peak equals its FP32 one, half of whose lanes also run INT32)
    if tf32 and spec.tf32_tflops * 1e12 > fp32.attainable:
        return Unit("tf32", spec.tf32_tflops * 1e12, True, speed=speed)
    return fp32


def precision_fallback(spec: catalog.Accelerator, precision: str, conv: Unit, matmul: Unit) -> str:
    """What ``precision`` runs as instead on ``spec`` ("" when it runs as asked): FP8 without
    FP8 units, a 16-bit type the GPU has no fast units for, TF32 no faster than FP32."""
    ran = conv.name if conv.half else "fp32"
    if precision == "fp8" and matmul.name != "fp8":
        return f"fp8 asked: no fp8 units on {spec.name}, {ran} runs"
    if precision in HALF_PRECISIONS and precision != "fp8" and conv.half is False:
        return f"{precision} asked: no fast 16-bit units on {spec.name}, fp32 runs"
    if precision == "bf16" and conv.half and conv.name != "bf16":
        return f"bf16 asked: no bf16 units on {spec.name}, {conv.name} runs"
    if precision == "tf32" and conv.name != "tf32":
        return f"tf32 asked: no faster than fp32 on {spec.name}, fp32 runs"
    return ""


def _describe_paths(spec: catalog.Accelerator, precision: str, conv: Unit, matmul: Unit) -> str:
    """``mixed fp16 on tensor cores``, ``fp32 as TF32``, ``fp32: convolutions TF32, matmuls
    strict FP32``, with what a precision the GPU cannot speed up falls back to."""
    if matmul.name == "fp8":
        return "fp8 matmuls on tensor cores (Transformer Engine), bf16 elsewhere"
    if conv.half:
        where = "on tensor cores" if conv.tensor_cores else "(fast fp16, no tensor cores)"
        lacking = f" (no fp8 units on {spec.name}: bf16)" if precision == "fp8" else ""
        return f"mixed {conv.name} {where}{lacking}"
    if precision in HALF_PRECISIONS:
        half = "bf16" if precision in ("bf16", "fp8") else "fp16"
        return f"fp32, Winograd 3x3 (no fast {half} on {spec.name}: fp32 assumed)"
    if conv.name == matmul.name:
        path = "fp32 as TF32" if conv.name == "tf32" else "fp32, Winograd 3x3"
    else:
        path = f"fp32: convolutions {_unit_name(conv)}, matmuls {_unit_name(matmul)}"
    if precision == "tf32" and conv.name != "tf32":
        path += f" (tf32 does not run faster than fp32 on {spec.name}: fp32 assumed)"
    if "fp32" in (conv.name, matmul.name) and spec.fp32_gemm_share < 1:
        path += (
            f" (strict FP32 products issue {spec.fp32_gemm_share:.3g} of the FP32 peak:"
            " half the FP32 lanes also run INT32)"
        )
    return path


def _unit_name(unit: Unit) -> str:
    return "TF32" if unit.name == "tf32" else "strict FP32"


def _half_peak(spec: catalog.Accelerator, precision: str) -> tuple[float, str]:
    """The datasheet peak of a GPU's 16-bit type for ``precision`` (0 when it runs none)."""
    if precision in ("fp16", "mixed"):
        return spec.fp16_tflops or spec.half_tflops, "fp16"
    if precision in ("bf16", "fp8"):  # fp8: what runs outside the FP8 products, or everything
        return spec.bf16_tflops, "bf16"
    return 0.0, ""


def check_precision(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UsageError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
