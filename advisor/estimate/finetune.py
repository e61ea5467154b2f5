"""An LLM fine-tuning step on one node or several: its layout, its time from the device model.

A ``advisor.workloads.llm.FineTune`` becomes ``WorkloadFacts`` (FLOPs per token by method, fused
attention apart, the trained parameters' optimizer traffic, the activations' traffic, QLoRA's
dequantisation, the weights sharded when they are) and one optimizer step over the global batch
is ``steps.step_parts`` on the target's machine:

    step = max(host dispatch, device work) + what the gradient exchange does not hide

never below the hardware's bound (``roofline``). The GPUs hold the whole model each (data
parallel) when it fits; otherwise FSDP / ZeRO-3 shards weights, gradients and optimizer state
across them and gathers each layer in every pass. Where the stack can (``data/llm-stacks.csv``,
``parallel``), the planner also weighs HSDP (FSDP within each node, gradients reduced across
nodes) and Megatron's split of the model: tensor parallel inside a node times pipeline stages
(1F1B, interleaved), whose bubble, activation collectives and stage-to-stage sends it adds. The
fastest layout that fits wins. The predictions are absolute: the probe gives only the host's
per-step dispatch (``probes.dispatch``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from advisor.estimate import memory
from advisor.estimate.floor import launch_latency
from advisor.estimate.frameworks import Framework
from advisor.estimate.layout import Layout
from advisor.estimate.machine import (
    Machine,
    Stack,
    accelerator_machine,
    attention_kernel,
    cpu_machine,
)
from advisor.estimate.memory import Fit
from advisor.estimate.parameters import Calibration
from advisor.estimate.roofline import least_step_seconds
from advisor.estimate.steps import (
    WorkloadFacts,
    activation_bytes_of,
    hybrid_seconds,
    step_parts,
)
from advisor.workloads import stacks
from advisor.workloads.llm import TARGETS, FineTune
from advisor.workloads.llm_memory import footprint, layer_activation_bytes

PYTORCH = Stack(framework=Framework("torch", (2, 4)))
"""What LLM fine-tuning runs under: PyTorch (Hugging Face TRL and PEFT, torchtune, NeMo)."""
MAX_AUTO_MICRO_BATCH = 8
"""Largest micro-batch tried per GPU when the job names none (powers of two up to it)."""
RECOMPUTE_PASSES = 8 / 6
"""Activation traffic under checkpointing against without it: the forward's writes and reads
happen twice (the six passes of ``steps`` become eight)."""
COMPILED_SPEEDUP = 8998 / 7075
"""How much faster a step's device work runs under ``torch.compile`` (``FineTune.compiled``):
torchtune's optimisation table (README, 2024-11) fine-tuned Llama 3.2 3B on an A100 at 7,075
tokens/s eager and 8,998 compiled, 1.272x, the rest of the recipe unchanged. Our own H100 run
(``benchmarks/gpu/llm_gpu_check.py`` runs 2 and 11, Qwen2.5 1.5B, held out) measured 1.269x.
Fusion removes elementwise kernels' traffic and launches; the factor is the measured whole,
not a count of them."""
LAYER_KERNELS = 20
"""Kernels one Llama block launches in its forward pass: two RMSNorms (two each), the q, k, v
and o products, rotary embedding of q and k, FlashAttention, two residual adds, the gate, up
and down products, the activation and its product, two casts. The backward pass launches
twice as many."""
ADAPTER_KERNELS = 4
"""Forward kernels of one LoRA adapter: dropout, its two products, the scaled add."""
ADAPTER_ACCESSES = {
    False: {"forward": ((1, 0), (6, 0)), "backward": ((5, 0), (4, 0))},
    True: {"forward": ((1, 2), (2, 6)), "backward": ((4, 3), (2, 6))},
}
"""Reads and writes a LoRA adapter's path makes beside its frozen projection, per element of
the projection's input and of its output, as (16-bit, fp32) counts: ``{fp32 adapters: {pass:
(input, output)}}``. In 16 bits (torchtune, Megatron, PEFT under autocast) the forward reads
the input for the first product, writes the second's output, scales it (read, write) and adds
it to the projection's (two reads, a write); the backward scales the gradient (read, write),
reads it for both gradients of the second product, reads the input for the first product's
weight gradient, writes the input's gradient and adds it to the projection's (two reads, a
write). In fp32 without autocast the input is cast up (a 16-bit read, an fp32 write) and read in
fp32, every output-side tensor is fp32, the sum is cast back to 16 bits, and the backward casts
each gradient across the same boundaries (PEFT's ``lora.Linear.forward``)."""


def layout(
    gpus: int,
    micro_batch: int,
    minimum_global: int,
    sharding: str,
    tensor: int = 1,
    pipeline: int = 1,
    virtual: int = 1,
) -> Layout:
    """The layout whose global batch is the smallest multiple of its copies' micro-batches that
    holds ``minimum_global`` sequences; a pipeline's, a multiple of its stages (Megatron's
    interleaved schedule asks it, and fewer micro-batches than stages leave stages idle)."""
    per_pass = max(1, gpus // (tensor * pipeline)) * micro_batch
    steps = max(1, -(-minimum_global // per_pass))
    steps = -(-steps // pipeline) * pipeline
    return Layout(gpus, micro_batch, per_pass * steps, sharding, tensor, pipeline, virtual)


@dataclass(frozen=True)
class Step:
    """One optimizer step's time and what it is made of."""

    seconds: float
    device: float
    """Compute and memory traffic of all its micro-batches."""
    exchange: float
    """Gradient exchange and gathers the device's work does not hide."""
    host: float
    least: float
    """The hardware bound (``roofline``)."""
    tokens: int
    """Tokens of the global batch."""
    flops: float
    gpus: int

    @property
    def tokens_per_second_per_gpu(self) -> float:
        return self.tokens / self.seconds / self.gpus

    @property
    def flops_per_gpu(self) -> float:
        """FLOP/s each GPU reaches (the FLOPs it runs, recomputation included)."""
        return self.flops / self.seconds / self.gpus


def facts_of(tune: FineTune, plan: Layout) -> WorkloadFacts:
    """The device model's view of ``tune`` laid out as ``plan``."""
    sequence = tune.shape.sequence
    counted = footprint(tune)
    kept = tune.shape.layers * layer_activation_bytes(tune) * sequence
    traffic = activation_bytes_of(kept / 2) * (RECOMPUTE_PASSES if tune.checkpointing else 1)
    traffic += activation_bytes_of(logit_bytes(tune) / 2) * sequence
    traffic += adapter_traffic(tune) * sequence
    return WorkloadFacts(
        flops_per_sample=tune.flops_per_token() * sequence,
        parameters=tune.trainable_parameters() // plan.model_parallel,
        family="transformer",
        optimizer="adamw",
        activation_bytes_per_sample=traffic,
        # a GPU's products stay a micro-batch's tokens wide however the model is split: tensor
        # parallelism narrows their columns and a pipeline their depth, never their rows
        tokens=sequence * plan.model_parallel,
        attention_flops_per_sample=tune.attention_flops_per_token() * sequence,
        accumulation=plan.accumulation,
        dequant_bytes=tune.dequant_bytes(),
        sharded_bytes=counted.gathered if plan.sharded else 0.0,
    )


def adapter_traffic(tune: FineTune) -> float:
    """What fp32 adapters add to a token's traffic through every layer (``ADAPTER_ACCESSES``:
    the fp32 path's accesses less the 16-bit path's, the forward twice under checkpointing),
    counted as the activation traffic is: 4 bytes an access of a 16-bit tensor, which a 16-bit
    machine halves, so an fp32 access counts twice. The 16-bit path itself is in the fitted
    efficiencies: every published run they were fitted on ran one, several fused (counting it
    as well left NVIDIA's held-out LoRA runs 20-27% too slow: docs/PREDICTION.md)."""
    inputs, outputs = tune.adapted_widths()
    if not tune.fp32_adapters or not inputs:
        return 0.0
    total = 0.0
    for name, times in (("forward", 2 if tune.checkpointing else 1), ("backward", 1)):
        (in16, in32), (out16, out32) = ADAPTER_ACCESSES[True][name]
        (base_in, _), (base_out, _) = ADAPTER_ACCESSES[False][name]
        extra_in = in16 + 2 * in32 - base_in
        extra_out = out16 + 2 * out32 - base_out
        total += times * (inputs * extra_in + outputs * extra_out)
    return 4.0 * total * tune.shape.layers


def logit_bytes(tune: FineTune) -> float:
    """16-bit bytes of logits a token's loss moves, as the zoo's decoders count them
    (``advisor.workloads.transformers.Shape.activation_bytes_16bit``): the fp32 logits and their fp32
    gradient, 4 bytes a vocabulary entry; half of that when the loss runs over chunks (torchtune,
    Liger) or in one fused kernel (flash-attn's), neither of which writes an fp32 copy of them
    all. Not recomputed under checkpointing."""
    return (2.0 if tune.chunked_loss or tune.fused_loss else 4.0) * tune.shape.vocabulary


def kernels_per_pass(tune: FineTune) -> int:
    """Kernels one micro-batch's forward and backward passes launch (a recomputed forward
    again, a dequantisation before every 4-bit product of every pass)."""
    forward = LAYER_KERNELS + ADAPTER_KERNELS * len(TARGETS[tune.targets]) * tune.adapted
    passes = 3 + tune.checkpointing
    dequant = len(tune.shape.projections()) * (passes - 1) if tune.storage != "none" else 0
    return tune.shape.layers * (forward * passes + dequant)


def machine_for(
    accelerator: str | None,
    count: int,
    calibration: Calibration,
    precision: str,
    *,
    vcpus: float | None = None,
    cpu_family: str | None = None,
    stack: Stack = PYTORCH,
    nodes: int = 1,
    network_bytes_s: float = 0.0,
) -> Machine | None:
    """The target's machine under ``stack`` (PyTorch, as people fine-tune) at ``precision``
    (None: an unknown accelerator), ``nodes`` of them over a network of ``network_bytes_s``."""
    if accelerator:
        return accelerator_machine(
            accelerator, count, calibration, stack=stack, precision=precision,
            nodes=nodes, network_bytes_s=network_bytes_s,
        )  # fmt: skip
    return cpu_machine(cpu_family, vcpus or 1, calibration, stack=stack, precision=precision)


def step_of(
    tune: FineTune,
    plan: Layout,
    machine: Machine,
    calibration: Calibration,
    host_seconds: float | None = None,
) -> Step:
    """The optimizer step of ``tune`` laid out as ``plan`` on ``machine``; ``host_seconds`` is
    the host's dispatch of a step (the probe's; else the calibrated GPU overhead), to which
    each micro-batch adds its kernels' launches (``floor``)."""
    machine = attention_kernel(machine, tune.attention)
    facts = facts_of(tune, plan)
    parts = step_parts(facts, machine, plan.global_batch, calibration)
    work = parts.compute + parts.memory + parts.sequential
    device = work / COMPILED_SPEEDUP if tune.compiled else work
    device /= stacks.get(tune.stack).speed * calibration.stack_speed.get(tune.stack, 1.0)
    device = device * (1 + plan.bubble) + model_parallel_seconds(tune, plan, machine, calibration)
    exchange = parts.exchange
    if plan.sharding == "hybrid":
        hybrid = hybrid_seconds(facts, machine, calibration)
        exchange = max(0.0, hybrid - calibration.collective_overlap * work)
    launches = kernels_per_pass(tune) / plan.pipeline * launch_latency().get(machine.kind, 0.0)
    host = ((host_seconds or machine.latencies.overhead_s) + launches) * plan.accumulation
    step = (max(host, device) if parts.overlapped else host + device) + exchange
    least = least_step_seconds(facts, machine, plan.global_batch)
    tokens = plan.global_batch * tune.shape.sequence
    flops = facts.flops_per_sample * plan.global_batch
    return Step(max(step, least), device, exchange, host, least, tokens, flops, plan.gpus)


def model_parallel_seconds(
    tune: FineTune, plan: Layout, machine: Machine, calibration: Calibration
) -> float:
    """What splitting the model adds to a GPU's step, in its critical path: tensor
    parallelism's all-gathers and reduce-scatters of every layer's activations over the node's
    interconnect (sequence parallel: two of each a layer in the forward pass, as many in the
    backward, again in a recomputed forward: Korthikanti et al. 2022, section 4.2.2), and the
    pipeline's sends of a micro-batch's activations and their gradients between stages, over
    the network where a stage fills a node (Megatron puts a stage's tensor and data ranks
    together)."""
    hidden = plan.micro_batch * tune.shape.sequence * tune.shape.hidden * 2.0  # 16-bit
    topology = machine.topology
    link = max(topology.interconnect_bytes_s, 1e9) * calibration.collective_efficiency
    seconds = 0.0
    if plan.tensor > 1:
        passes = 3 if tune.checkpointing else 2
        per_layer = 2 * 2 * passes * (plan.tensor - 1) / plan.tensor * hidden
        seconds += plan.accumulation * tune.shape.layers / plan.pipeline * per_layer / link
    if plan.pipeline > 1:
        across = plan.tensor * plan.data >= topology.per_node and topology.nodes > 1
        network = max(topology.network_bytes_s, 1e8) * calibration.collective_efficiency
        send = network / topology.per_node if across else link
        sends = 2 * plan.virtual * plan.accumulation  # forward activations, backward gradients
        seconds += sends * hidden / plan.tensor / send
    return seconds


def fit_of(tune: FineTune, plan: Layout, machine: Machine) -> Fit | None:
    """Whether ``plan`` fits each GPU of ``machine`` (None on a CPU)."""
    fp8 = machine.kernels.precision == "fp8"
    share = footprint(tune, fp8).split(plan.tensor, plan.pipeline, plan.virtual)
    return memory.llm_check(
        share, machine, plan.sharding, _sharded_over(plan, machine), plan.micro_batch,
        tune.shape.sequence,
    )  # fmt: skip


def _sharded_over(plan: Layout, machine: Machine) -> int:
    """GPUs whose copies of the model split their state: HSDP's within one node."""
    if plan.sharding == "hybrid":
        return min(plan.data, machine.topology.per_node)
    return plan.data


def recomputed(tune: FineTune) -> FineTune | None:
    """The recipe with activation recompute, where its stack keeps every activation by default
    (NeMo's and AutoModel's recipes): what their users turn on when a model does not fit
    (``recompute_granularity``, ``activation_checkpointing``), since it changes no arithmetic,
    only adds a forward pass. None where it recomputes already, or where a user turned off the
    stack's own recompute (``--no-checkpointing``)."""
    if tune.checkpointing or stacks.get(tune.stack).checkpointing:
        return None
    return replace(tune, checkpointing=True)


def recipes(tune: FineTune) -> list[FineTune]:
    """The recipes a plan tries in turn until one fits: the job's own, with recompute
    (``recomputed``), then ``low_memory``'s of each."""
    own = [tune, *filter(None, [recomputed(tune)])]
    smaller = [found for found in map(low_memory, own) if found is not None]
    return list(dict.fromkeys([*own, *smaller]))


def low_memory(tune: FineTune) -> FineTune | None:
    """The recipe full fine-tuning falls back to where mixed-precision AdamW fits no layout:
    pure bf16 weights and 8-bit AdamW, 6 bytes a weight instead of 18 (torchtune's low-memory
    recipes, data/llm-finetune-published.csv); None for adapters (their optimizer is small)."""
    if tune.adapted or (tune.master, tune.optimizer) == ("bf16", "adamw8bit"):
        return None
    return replace(tune, master="bf16", optimizer="adamw8bit")


def choose_layout(
    tune: FineTune,
    machine: Machine,
    gpus: int,
    minimum_global: int,
    micro_batch: int | None = None,
    calibration: Calibration | None = None,
    host_seconds: float | None = None,
) -> tuple[FineTune, Layout, Fit | None]:
    """The fastest layout that fits: each GPU holding the whole model when it can, else FSDP
    across the GPUs; with ``calibration``, also the stack's other ways to spread a model (HSDP
    over several nodes, tensor and pipeline parallel), the fastest a sequence winning. The
    micro-batch given, or the largest power of two up to ``MAX_AUTO_MICRO_BATCH`` that fits;
    the first of ``recipes`` that fits somewhere (recompute, then the low-memory recipe, where
    the job's own fits nowhere). When nothing fits:
    the asked (or smallest) layout sharded as far as the GPUs allow, with the fit that says why
    and what would fit."""
    sizes = [micro_batch] if micro_batch else _powers(MAX_AUTO_MICRO_BATCH)
    for recipe in recipes(tune):
        families = [_data_parallel(gpus)]
        if calibration is not None and gpus > 1:
            families += _spread(recipe, machine, gpus)
        fitting = []
        for family in families:
            found = _first_fit(recipe, machine, gpus, family, sizes, minimum_global)
            if found is not None:
                fitting.append(found)
        if len(fitting) > 1 and calibration is not None:
            return recipe, *_fastest(recipe, fitting, machine, calibration, host_seconds)
        if fitting:
            return recipe, *fitting[0]
    plan = layout(gpus, sizes[-1], minimum_global, "full" if gpus > 1 else "none")
    return tune, plan, fit_of(tune, plan, machine)


def _fastest(
    tune: FineTune,
    fitting: list[tuple[Layout, Fit | None]],
    machine: Machine,
    calibration: Calibration,
    host_seconds: float | None,
) -> tuple[Layout, Fit | None]:
    """The layout that trains a sequence soonest (their global batches may differ)."""

    def per_sequence(found: tuple[Layout, Fit | None]) -> float:
        plan = found[0]
        return step_of(tune, plan, machine, calibration, host_seconds).seconds / plan.global_batch

    return min(fitting, key=per_sequence)


Family = list[tuple[str, int, int, int]]
"""Ways to lay a job out, in order of preference: (sharding, tensor, pipeline, chunks)."""


def _data_parallel(gpus: int) -> Family:
    """Every GPU a whole copy of the model, else FSDP across them all."""
    return [("none", 1, 1, 1), ("full", 1, 1, 1)] if gpus > 1 else [("none", 1, 1, 1)]


def _spread(tune: FineTune, machine: Machine, gpus: int) -> list[Family]:
    """The stack's other layouts on ``gpus``: HSDP over several nodes; tensor parallel within
    a node times pipeline stages (each stage in chunks of two layers, interleaved, or whole),
    their copies under the distributed optimizer."""
    ways = stacks.get(tune.stack).parallel
    per_node = machine.topology.per_node
    found = []
    if "hsdp" in ways and machine.topology.nodes > 1:
        found.append([("hybrid", 1, 1, 1)])
    tensors = [t for t in (1, 2, 4, 8) if t <= per_node and "tp" in ways] or [1]
    stages = [p for p in (1, 2, 4, 8, 16) if "pp" in ways and tune.shape.layers % p == 0] or [1]
    for tensor in tensors:
        for pipeline in stages:
            if tensor * pipeline == 1 or gpus % (tensor * pipeline):
                continue
            chunks = tune.shape.layers // (2 * pipeline) if pipeline > 1 else 1
            for virtual in sorted({1, chunks if tune.shape.layers % (2 * pipeline) == 0 else 1}):
                found.append([("optimizer", tensor, pipeline, virtual)])
    return found


def _first_fit(
    tune: FineTune,
    machine: Machine,
    gpus: int,
    family: Family,
    sizes: list[int],
    minimum_global: int,
) -> tuple[Layout, Fit | None] | None:
    """The first of ``family``'s layouts, at the largest micro-batch, that fits."""
    for sharding, tensor, pipeline, virtual in family:
        for size in sizes:
            plan = layout(gpus, size, minimum_global, sharding, tensor, pipeline, virtual)
            fit = fit_of(tune, plan, machine)
            if fit is None or fit.fits:
                return plan, fit
    return None


def _powers(largest: int) -> list[int]:
    """Largest first: 8, 4, 2, 1."""
    return [2**k for k in range(int(math.log2(largest)), -1, -1)]
