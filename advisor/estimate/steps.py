"""One training step split into parts that scale differently, on any ``Machine``.

    step = overhead + compute + memory + sequential + input pipeline (+ gradient all-reduce)

The sequential part is a recurrent layer's own time: per-call cost, a latency per time step and
the per-step matrix products, so that a probe's measured recurrent share scales like the whole
layer (on a CPU the products dominate it; on a GPU with cuDNN the latency does).

Each part is work divided by the machine's matching capability, in absolute seconds: the
parameters are fitted on published absolute measurements (``calibrate``), and a prediction for a
device of another kind than the probe's is these parts themselves, never faster than the
hardware allows (``roofline``). Only on a device of the probe's own kind and software are they
used as ratios (``T_target = T_measured * part(target) / part(source)``, per part), so that what
the model misses about the workload there cancels (``predict``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from advisor.estimate.kernels import recurrent_flops_per_step, shipped_fit
from advisor.estimate.machine import WINOGRAD_REDUCTION, Machine
from advisor.estimate.parameters import Calibration
from advisor.workloads import weights, zoo

PART_NAMES = ("overhead", "compute", "memory", "sequential", "input_pipeline")
_ACTIVATION_PASSES = 6
"""Times each activation byte crosses memory in a training step (write, re-read, gradients)."""
_FALLBACK_ACTIVATION_BYTES_PER_FLOP = 0.013
"""For a model outside the zoo: activation traffic per training FLOP (typical of convnets)."""
_NARROW_FAMILIES = frozenset({"dense", "embedding", "recurrent"})
"""Families whose matrix products are as narrow as the batch (no pixels to widen them)."""
_ALLREDUCE_LATENCY_S = 30e-6
"""Per ring hop latency of one all-reduce (NCCL/ICI order of magnitude; an assumption)."""
_GATHERS = 2
"""Passes that gather sharded weights: the forward and the backward (a checkpointed layer is
recomputed inside the backward pass, while its weights are gathered)."""
_REDUCED_GRADIENT_BYTES = 2.0
"""Bytes of one gradient that sharded data parallelism reduce-scatters (bf16, FSDP's and
DeepSpeed's default reduce type under bf16 mixed precision)."""


@dataclass(frozen=True)
class WorkloadFacts:
    """What the step model needs to know about a training workload."""

    flops_per_sample: float
    parameters: int
    family: str
    """``dense``, ``conv``, ``recurrent`` or ``embedding``."""
    timesteps: int = 0
    """Recurrent time steps per sample (0 when not recurrent)."""
    directions: int = 1
    optimizer: str = "adam"
    activation_bytes_per_sample: float = 0.0
    """Activation traffic of one sample's forward and backward pass, fp32."""
    score_bytes_per_sample: float = 0.0
    """The part of ``activation_bytes_per_sample`` in a transformer's attention scores (0 for
    anything else): what crosses memory at 32 bits even in mixed precision where the softmax
    runs in float32 over materialised scores (``Machine.scores_32bit``)."""
    host_augmentation: bool = False
    """Images are augmented on the host CPU each step (an input-pipeline cost)."""
    decodes_jpeg: bool = False
    """The recipe trains on JPEGs decoded and augmented on the host (ImageNet's): on an
    accelerator the host's vCPUs may bound the step (``advisor.estimate.feed``)."""
    input_seconds_per_sample: float = 0.0
    """A user's script's loop waited this long here for each sample's data (a PyTorch
    ``DataLoader``'s wait between steps): host work an accelerator's step cannot be shorter
    than; 0 where not measured."""
    winograd_share: float = 0.0
    """Share of the training FLOPs in 3x3 stride-1 convolutions (Winograd-eligible)."""
    conv_share: float = 0.0
    """Share of the training FLOPs (recurrent layers aside) in convolutions; the rest are
    matrix products (dense layers, attention)."""
    conv_channels: float = 0.0
    """The convolutions' output channels (FLOP-weighted harmonic mean): a convolution is a
    product batch x pixels long and this wide; 0 when not known."""
    recurrent_layers: int = 0
    """Recurrent layer calls per direction (0 when not known)."""
    input_bytes_per_sample: float = 0.0
    """Bytes of one sample's inputs, what the host copies to an accelerator each step (0: not
    known)."""
    recurrent_flops_per_step: float = 0.0
    """Training FLOPs per sample of one time step of one direction, over the recurrent layers:
    the arithmetic the recurrence serialises (0 when not known: latency alone is modelled)."""
    cudnn_rnn: bool = True
    """Every recurrent layer can run cuDNN's fused kernel on a GPU; False when one runs Keras's
    generic per-step loop there (a SimpleRNN, an LSTM with a non-default activation, ...)."""
    tokens: int = 0
    """Tokens per sample of a transformer (0 otherwise): its matrix products are batch x tokens
    rows wide, and run at the machine's ``matmul_flops``."""
    attention_flops_per_sample: float = 0.0
    """The part of ``flops_per_sample`` in fused attention kernels (FlashAttention), which runs
    at the machine's ``attention_flops``; 0: attention is counted with the matrix products."""
    accumulation: int = 1
    """Micro-batches per optimizer step (gradient accumulation): a step's batch is computed in
    this many passes, as wide as one of them; the optimizer's traffic and the gradient
    exchange happen once a step."""
    dequant_bytes: float = 0.0
    """Bytes one forward-and-backward pass moves expanding quantised weights to 16 bits before
    their products (QLoRA), whatever the batch; 0 when no weight is quantised."""
    sharded_bytes: float = 0.0
    """Bytes of weights, as stored, spread over the replicas and gathered by each of them in
    the forward and in the backward pass (FSDP / ZeRO-3), whose trained weights' gradients are
    reduce-scattered; 0: every replica holds every weight and gradients are all-reduced."""

    @property
    def recurrent_flops(self) -> float:
        """Training FLOPs per sample the recurrence serialises: every time step of every
        direction, never more than the whole sample's."""
        return min(
            self.recurrent_flops_per_step * self.timesteps * self.directions, self.flops_per_sample
        )


@dataclass(frozen=True)
class Parts:
    """Seconds of one step, by part."""

    overhead: float
    compute: float
    memory: float
    sequential: float
    input_pipeline: float = 0.0
    exchange: float = 0.0
    """The gradient exchange the device's work does not hide, per step (data parallelism's
    all-reduce, sharded data parallelism's gathers): the host part waits for it."""
    overlapped: bool = False
    """The host dispatches the step while the device runs the previous one (an accelerator
    under an asynchronous framework): the step takes the longer of the two, not their sum."""

    @property
    def device(self) -> float:
        """Everything but the per-step host overhead."""
        return self.compute + self.memory + self.sequential + self.input_pipeline

    @property
    def total(self) -> float:
        host = self.overhead + self.exchange
        return max(host, self.device) if self.overlapped else host + self.device

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in PART_NAMES}


def facts_of(workload: zoo.Workload) -> WorkloadFacts:
    recurrent = workload.family == "recurrent"
    return WorkloadFacts(
        flops_per_sample=workload.train_flops_per_sample,
        parameters=workload.parameters,
        family=workload.family,
        timesteps=workload.input_shape[0] if recurrent else 0,
        directions=2 if recurrent and "bi" in workload.id else 1,
        optimizer=workload.optimizer,
        activation_bytes_per_sample=activation_bytes(workload),
        score_bytes_per_sample=(
            traffic_of_16bit(workload.transformer.score_bytes_16bit())
            if workload.transformer is not None
            else 0.0
        ),
        host_augmentation=workload.host_augmented,
        decodes_jpeg=workload.samples == zoo.IMAGENET_TRAIN,
        winograd_share=workload.winograd_share,
        conv_share=workload.conv_share,
        conv_channels=workload.conv_channels,
        recurrent_layers=len(workload.recurrent_layers),
        input_bytes_per_sample=math.prod(workload.input_shape) * _ITEM_BYTES[workload.input_dtype],
        recurrent_flops_per_step=sum(
            recurrent_flops_per_step(cell, hidden, inputs, 1)
            for cell, inputs, hidden in workload.recurrent_layers
        ),
        tokens=workload.transformer.sequence if workload.transformer is not None else 0,
    )


_ITEM_BYTES = {"float32": 4, "int32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "uint8": 1}


def activation_bytes(workload: zoo.Workload) -> float:
    """Activation traffic per sample of a zoo workload, fp32. A transformer's is counted from its
    shape (Korthikanti et al. 2022, in ``advisor.workloads.transformers``: attention's
    sequence-squared x heads term included), any other's from its counted activations."""
    if workload.transformer is not None:
        return traffic_of_16bit(workload.transformer.activation_bytes_16bit())
    if not workload.activations:
        return activation_bytes_of_flops(workload.train_flops_per_sample)
    return activation_bytes_of(workload.activations)


def activation_bytes_of_flops(flops_per_sample: float) -> float:
    """Activation traffic per sample of a model whose activations nobody counted: from its
    training FLOPs, at a convnet's typical traffic per FLOP."""
    return _FALLBACK_ACTIVATION_BYTES_PER_FLOP * flops_per_sample


def traffic_of_16bit(stored_bytes: float) -> float:
    """Activation traffic per sample, fp32, of what a sample keeps for its backward pass in
    16-bit training (twice the bytes, crossing memory ``_ACTIVATION_PASSES`` times)."""
    return 2.0 * stored_bytes * _ACTIVATION_PASSES


def activation_bytes_of(elements: float) -> float:
    """Activation traffic per sample of ``elements`` fp32 activations counted per sample."""
    return 4.0 * elements * _ACTIVATION_PASSES


def optimizer_slots(optimizer: str) -> int:
    """Per-parameter state tensors of an optimizer (Adam's two moments; 2 when unknown)."""
    return weights.SLOTS.get(optimizer.lower(), 2)


def parameter_traffic_bytes(
    facts: WorkloadFacts, calibration: Calibration, fused: bool = True
) -> float:
    """Bytes the optimizer moves per step: read weights, gradients and slots, write them back
    (``fused``: once each; else every elementwise op of the update reads and writes its own)."""
    slots = optimizer_slots(facts.optimizer)
    scale = (
        calibration.embedding_traffic_scale
        if facts.family == "embedding"
        else calibration.param_traffic_scale
    )
    unfused = 1.0 if fused else calibration.unfused_optimizer_traffic
    return 4.0 * facts.parameters * (3 + 2 * slots) * scale * unfused


def allreduce_seconds(parameters: int, machine: Machine, calibration: Calibration) -> float:
    """All-reduce of fp32 gradients across the machine's replicas (0 for one replica): a ring
    inside each node, and between nodes a ring of the nodes (``transfer_seconds``), each link at
    its full bandwidth where the GPUs reach each other, at NCCL's host-staged share of it where
    they do not (``Topology.staged``)."""
    if machine.topology.replicas <= 1:
        return 0.0
    efficiency = calibration.pcie_collective_efficiency if machine.topology.staged else 1.0
    payload = 4.0 * parameters
    return (
        2 * transfer_seconds(payload, machine, efficiency) + _hops(machine) * _ALLREDUCE_LATENCY_S
    )


def transfer_seconds(payload: float, machine: Machine, efficiency: float = 1.0) -> float:
    """Seconds of one pass of a ring collective (a reduce-scatter or an all-gather) of
    ``payload`` bytes over the machine's replicas, hierarchically as NCCL runs it over several
    nodes: each node's ring on its interconnect moves (g - 1) / g of it, and the nodes' ring
    (k - 1) / k of it over each node's network, every GPU of a node sending its shard over its
    own share of the node's NICs, each link at ``efficiency`` of its bandwidth. An all-reduce is
    two passes. GPUs without peer access (``Topology.staged``) each put their (g - 1) / g
    through the one host, so a node's pass takes g times its ring's: more such GPUs add
    exchange as fast as they add compute (Lambda's eight RTX 3090s trained no faster than two)."""
    g, k = machine.topology.per_node, max(machine.topology.nodes, 1)
    inside = 0.0
    if g > 1:
        link = max(machine.topology.interconnect_bytes_s, 1e9) * efficiency
        shared = g if machine.topology.staged else 1
        inside = shared * (g - 1) / g * payload / link
    between = 0.0
    if k > 1:
        network = max(machine.topology.network_bytes_s, 1e8) * efficiency
        between = (k - 1) / k * payload / network
    return inside + between


def _hops(machine: Machine) -> float:
    """Latency-bound hops of an all-reduce over the nodes' rings and the nodes' ring."""
    inside = (
        _allreduce_hops(machine.topology.per_node, machine)
        if machine.topology.per_node > 1
        else 0.0
    )
    between = 2 * (machine.topology.nodes - 1) if machine.topology.nodes > 1 else 0.0
    return inside + between


def _allreduce_hops(n: int, machine: Machine) -> float:
    """Latency-bound hops of one collective (an all-reduce, or a gather and a reduce-scatter)
    over ``n`` replicas: a ring's 2 (n - 1); a TPU slice's ICI is a 2D torus (v2 and v3 Pods,
    v5e, v6e; v4 and v5p a 3D one, fewer hops still), reduced along each dimension's ring in
    turn (Ying et al., "Image Classification at Supercomputer Scale", 2018: 2D gradient
    summation on the TPU v3 Pod), 2 (sqrt(n) - 1) hops a dimension."""
    if machine.topology.interconnect == "ici":
        return 2 * 2 * (math.sqrt(n) - 1)
    return 2 * (n - 1)


def sharded_seconds(facts: WorkloadFacts, machine: Machine, calibration: Calibration) -> float:
    """One optimizer step's gathers and gradient reduce-scatters of sharded data parallelism,
    on the node's interconnect at NCCL's share of it (0 when nothing is sharded)."""
    n = machine.topology.replicas
    if n <= 1 or facts.sharded_bytes <= 0:
        return 0.0
    payload = _GATHERS * facts.sharded_bytes + _REDUCED_GRADIENT_BYTES * facts.parameters
    efficiency = (
        calibration.pcie_collective_efficiency
        if machine.topology.interconnect.startswith("pcie")
        else calibration.collective_efficiency
    )
    return (
        facts.accumulation * transfer_seconds(payload, machine, efficiency)
        + _hops(machine) * _ALLREDUCE_LATENCY_S
    )


def hybrid_seconds(facts: WorkloadFacts, machine: Machine, calibration: Calibration) -> float:
    """HSDP's step: FSDP's gathers and reduce-scatters within each node, and across the nodes
    an all-reduce of the gradient shard each GPU keeps, the node's GPUs sharing its network
    (PyTorch's ``HYBRID_SHARD``: only gradients cross the nodes, once a step)."""
    topology = machine.topology
    inside = replace(machine, topology=replace(topology, replicas=topology.per_node, nodes=1))
    gathers = sharded_seconds(facts, inside, calibration)
    nodes = topology.nodes
    if nodes <= 1:
        return gathers
    network = max(topology.network_bytes_s, 1e8) * calibration.collective_efficiency
    payload = _REDUCED_GRADIENT_BYTES * facts.parameters  # every shard of the node's GPUs
    across = 2 * (nodes - 1) / nodes * payload / network
    return gathers + across + 2 * (nodes - 1) * _ALLREDUCE_LATENCY_S


def communication_seconds(
    facts: WorkloadFacts, machine: Machine, calibration: Calibration, device_seconds: float
) -> float:
    """What a step's gradient exchange adds to it: the ring all-reduce, or sharded data
    parallelism's gathers less the share of the device's work they hide behind."""
    if facts.sharded_bytes > 0:
        gathers = sharded_seconds(facts, machine, calibration)
        return max(0.0, gathers - calibration.collective_overlap * device_seconds)
    return allreduce_seconds(facts.parameters, machine, calibration)


def step_parts(
    facts: WorkloadFacts, machine: Machine, batch_size: int, calibration: Calibration
) -> Parts:
    """Modelled seconds of one training step at ``batch_size`` (the global batch) on ``machine``.

    Compute and memory add up but for what the larger hides of the smaller (``kernel_overlap``,
    fitted): a transformer's activation traffic is softmax, dropout, LayerNorm, GELU, bias and
    residual kernels that run between the GEMMs, each memory-bound by itself, and a convnet's
    batch norm and activations beside its convolutions."""
    per_replica = batch_size / machine.topology.replicas
    steps = facts.timesteps * facts.directions
    compute = compute_seconds(facts, machine, per_replica, calibration)
    activation_bytes = (
        facts.activation_bytes_per_sample * per_replica * calibration.activation_traffic_scale
    )
    if facts.family == "transformer":
        activation_bytes *= calibration.transformer_traffic_scale
    if machine.kernels.transposes:
        activation_bytes *= 1 + calibration.nchw_transpose_traffic * facts.conv_share
    activation_elements = activation_bytes / 4.0  # counted in fp32
    if machine.kernels.half_precision:  # 16-bit activations: half the bytes, but for float32 scores
        scores = facts.score_bytes_per_sample if machine.kernels.scores_32bit else 0.0
        kept = scores / facts.activation_bytes_per_sample if scores else 0.0
        activation_bytes *= (1 + kept) / 2
    dequant = facts.dequant_bytes * facts.accumulation * calibration.dequant_traffic_scale
    streamed = (
        parameter_traffic_bytes(facts, calibration, machine.kernels.fused_optimizer) + dequant
    )
    # cuDNN's recurrent rate is fitted on layers at their own batch sizes: no occupancy on top
    recurrent_rate = machine.rates.recurrent_flops or machine.rates.matmul_flops * _occupancy(
        per_replica, _half_narrow(facts, machine, calibration)
    )
    sequential = (
        facts.directions * facts.recurrent_layers * machine.latencies.recurrent_call_s
        + steps * machine.latencies.cell_step_s
        + facts.recurrent_flops * per_replica / recurrent_rate
    )
    memory = streamed / machine.rates.bandwidth + activation_seconds(
        activation_bytes, activation_elements, machine
    )
    # kernels that are compute-bound hide some memory traffic, and the reverse: the smaller of
    # the two parts is partly hidden (0: a step is the sum of its kernels; 1: a roofline)
    exposed = 0.0 if machine.kernels.roofline else 1 - calibration.kernel_overlap
    compute, memory = (
        compute * exposed if compute < memory else compute,
        memory * exposed if memory <= compute else memory,
    )
    exchange = communication_seconds(facts, machine, calibration, compute + memory + sequential)
    return Parts(
        overhead=machine.latencies.overhead_s,
        compute=compute,
        memory=memory,
        sequential=sequential,
        input_pipeline=(
            calibration.host_augment_s_per_sample * batch_size if facts.host_augmentation else 0.0
        ),
        exchange=exchange,
        overlapped=machine.kernels.host_overlap,
    )


def activation_seconds(activation_bytes: float, elements: float, machine: Machine) -> float:
    """Seconds of a step's memory-bound kernels: their bytes at the machine's bandwidth, or,
    where the multiprocessors wait on latency first, their elements at its element rate (a
    16-bit element costs a thread what a 32-bit one does: half the bytes, not half the time)."""
    by_bandwidth = activation_bytes / machine.rates.bandwidth
    if machine.rates.element_rate <= 0:
        return by_bandwidth
    return max(by_bandwidth, elements / machine.rates.element_rate)


def work_flops(facts: WorkloadFacts, per_replica: float, winograd: bool) -> tuple[float, float]:
    """FLOPs of one replica's step by kernel class, (convolutions, matrix products), recurrent
    layers and fused attention aside; a convolution's 3x3 layers count the multiplications
    Winograd leaves when the machine runs it (``winograd``)."""
    rest = facts.flops_per_sample - facts.recurrent_flops - facts.attention_flops_per_sample
    rest = max(rest, 0.0)
    flops = rest * per_replica
    conv = flops * facts.conv_share
    if winograd:
        conv *= 1 - facts.winograd_share + facts.winograd_share / WINOGRAD_REDUCTION
    return conv, flops * (1 - facts.conv_share)


def compute_seconds(
    facts: WorkloadFacts, machine: Machine, per_replica: float, calibration: Calibration
) -> float:
    """Seconds of a replica's convolutions and matrix products: each class at its rate on its
    unit, slowed where the products are too narrow to fill the machine (the batch; a
    transformer's batch x tokens rows)."""
    conv, matmul = work_flops(facts, per_replica, winograd=False)
    width = per_replica / max(facts.accumulation, 1) * max(facts.tokens, 1)
    filled = _occupancy(per_replica, _half_conv(machine, calibration))
    if facts.conv_channels and machine.kind == "gpu":  # narrow channels leave a GPU idle
        filled *= _occupancy(facts.conv_channels, shipped_fit().gemm.half_narrow)
    conv_rate = machine.rates.conv_flops * filled
    # a 3x3 layer runs the faster of its unit's direct product and the CUDA cores' Winograd
    winograd_rate = max(conv_rate, machine.rates.winograd_flops * filled * WINOGRAD_REDUCTION)
    eligible = conv * facts.winograd_share
    conv_seconds = (conv - eligible) / conv_rate + eligible / winograd_rate if conv else 0.0
    occupancy = _occupancy(width, _half_narrow(facts, machine, calibration))
    matmul_rate = machine.rates.matmul_flops * occupancy
    attention = facts.attention_flops_per_sample * per_replica
    attention_rate = (machine.rates.attention_flops or machine.rates.matmul_flops) * occupancy
    return (
        conv_seconds
        + (matmul / matmul_rate if matmul else 0.0)
        + (attention / attention_rate if attention else 0.0)
    )


def _occupancy(width: float, half: float) -> float:
    """Share of a kernel's full rate at ``width`` rows: half of it at ``half``."""
    return width / (width + half)


def _half_narrow(facts: WorkloadFacts, machine: Machine, calibration: Calibration) -> float:
    """Width of a matrix product at which it reaches half its rate: on a GPU the narrow side
    fitted on DeepBench's SGEMMs (``kernels``), on a CPU a share of a batch per thread."""
    if machine.kind == "cpu":
        return calibration.cpu_half_batch_per_thread * machine.topology.threads
    if machine.kind == "gpu":
        return shipped_fit().gemm.half_narrow
    return 1.0


def _half_conv(machine: Machine, calibration: Calibration) -> float:
    """Batch at which convolutions reach half their rate. A convolution's product is as wide as
    batch x pixels, so the batch barely matters on a GPU (a prior: wider chips need more)."""
    if machine.kind == "cpu":
        return calibration.cpu_half_batch_per_thread * machine.topology.threads
    return max(1.0, 4.0 * math.log10(max(machine.rates.conv_flops, 1e12) / 1e12) + 2.0)
