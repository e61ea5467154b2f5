"""A fine-tuning job's training time on a target, with its spread: the engine's ``Prediction``.

The layout (``finetune.choose_layout``) decides how the node runs the job, or why it cannot: a
GPU too small even sharded is left out with the largest micro-batch or sequence that would fit,
a CPU with the time the device model gives it. The time is the optimizer steps of every epoch
times one step of the device model (absolute); a probe on this CPU gives only the host's
dispatch, and a probe of the job on a GPU corrects every GPU's time by one factor
(``advisor.estimate.residual``). The spread is the LLM fit's leave-one-source-out spread, wider
beyond the fitted hardware and by a correction's own (docs/PREDICTION.md, "LLM fine-tuning")."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from advisor.estimate import catalog
from advisor.estimate.finetune import (
    PYTORCH,
    Layout,
    Step,
    choose_layout,
    layout,
    machine_for,
    step_of,
)
from advisor.estimate.machine import Machine, Stack, check_precision, data_parallel
from advisor.estimate.memory import Fit
from advisor.estimate.parameters import DEFAULT_LOG_SIGMA, Calibration, llm_calibration
from advisor.estimate.predict import EXTRAPOLATION_LOG_SIGMA, probe_framework
from advisor.estimate.prediction import Prediction, Target
from advisor.estimate.residual import (
    Residual,
    combined,
    corrected_for,
    kind_of,
    log_sigma_of,
)
from advisor.workloads import stacks
from advisor.workloads.llm import FineTune
from advisor.workloads.llm_job import DEFAULT_GLOBAL_BATCH, Job, job_of_probe, probe_name
from probes.result import ProbeResult

Predictor = Callable[[Target], Prediction]
STARTUP_SECONDS = 60.0
"""Fixed start of a fine-tuning run: the container, CUDA, NCCL and the framework (an
assumption)."""
WEIGHTS_BYTES_PER_SECOND = 500e6
"""How fast a rented machine fetches and loads 16-bit weights from the Hugging Face Hub (an
assumption: a cloud VM's download of safetensors shards)."""
QUANTISED_KINDS = frozenset({"gpu"})
"""Where 4-bit QLoRA runs: bitsandbytes' kernels are CUDA's (its CPU backend is experimental)."""


def predict_job(
    job: Job,
    target: Target,
    *,
    calibration: Calibration | None = None,
    host_seconds: float | None = None,
    stack: Stack = PYTORCH,
) -> Prediction:
    """The whole job (every epoch's optimizer steps) on ``target`` under ``stack`` (PyTorch, as
    people fine-tune; a probe's own framework when its run is modelled), or why it cannot run."""
    calibration = calibration or llm_calibration()
    check_precision(job.precision)
    if target.accelerator and catalog.accelerator(target.accelerator) is None:
        return _excluded(f"accelerator {target.accelerator} not in the device catalog")
    if not target.accelerator and not target.vcpus:
        return _excluded("the target has neither an accelerator nor a vCPU count")
    count = max(target.accelerator_count, 1) if target.accelerator else 1
    precision = _precision(job.precision, target.accelerator)
    if target.unreachable:
        return _excluded(target.unreachable)
    machine = machine_for(
        target.accelerator, count, calibration, precision,
        vcpus=target.vcpus, cpu_family=target.cpu_family, stack=stack,
        nodes=target.nodes, network_bytes_s=target.network_gbps * 1e9 / 8,
    )  # fmt: skip
    if machine is None:
        return _excluded(f"accelerator {target.accelerator} not in the device catalog")
    software = stacks.get(job.tune.stack)
    if machine.kind != "cpu" and machine.kind not in software.runs_on:
        return _excluded(f"{machine.label}: {software.title} trains on NVIDIA GPUs")
    if job.tune.storage != "none" and machine.kind not in QUANTISED_KINDS:
        return _excluded(f"{machine.label}: 4-bit QLoRA (bitsandbytes) runs on NVIDIA GPUs")
    asked = job.tune
    if not machine.kernels.half_precision:  # everything is fp32 already: no cast, no extra copy
        asked = replace(asked, fp32_adapters=False)
    tune, plan, fit = choose_layout(
        asked, machine, machine.topology.replicas, DEFAULT_GLOBAL_BATCH, job.micro_batch,
        calibration, host_seconds,
    )  # fmt: skip
    if fit is not None and not fit.fits:
        how = f" with FSDP across {plan.gpus} GPUs" if plan.sharded else ""
        return _excluded(f"{machine.label}: {fit.reason(plan.micro_batch)}{how}", fits=False)
    step = step_of(tune, plan, machine, calibration, host_seconds)
    steps = optimizer_steps(job, plan)
    seconds = steps * step.seconds
    if machine.kind == "cpu":
        return _excluded(
            f"{machine.label}: ~{seconds / 3600:,.0f} h on CPUs by the device model; LLM "
            "fine-tuning is planned on GPUs and TPUs"
        )
    unchecked = not calibration.stack_runs.get(software.id, 1)
    extrapolated = machine.extrapolated or machine.kind == "tpu" or unchecked
    model = calibration.log_sigma.get("llm", DEFAULT_LOG_SIGMA)
    sigma = math.hypot(model, EXTRAPOLATION_LOG_SIGMA if extrapolated else 0.0)
    return Prediction(
        seconds=seconds,
        log_sigma=sigma,
        extrapolated=extrapolated,
        kernel_path=_path(machine, plan, tune),
        fallback=_fallback(
            job, precision, target.accelerator or machine.label, machine, asked, tune
        ),
        steps=(
            *_explain(job, asked, tune, plan, step, machine, steps, seconds, host_seconds),
            stack_line(job, calibration),
        ),
        compared=functools.cache(
            lambda: other_stacks(job, machine, calibration, host_seconds, (seconds, fit))
        ),
        environment=_environment(job, tune, plan, machine.kernels.precision or precision),
        layout=plan,
        least_seconds=steps * step.least,
    )


def stack_line(job: Job, calibration: Calibration) -> str:
    """The job's stack and how far its published runs were checked."""
    own = stacks.get(job.tune.stack)
    runs = calibration.stack_runs.get(own.id, 1)
    checked = (
        f"the LLM fit read {runs} published runs of it"
        if runs
        else f"no published run of it: checked as {stacks.get(own.nearest).title}, wider interval"
    )
    return f"stack: {own.describe()} ({checked})"


def other_stacks(
    job: Job,
    machine: Machine,
    calibration: Calibration,
    host_seconds: float | None,
    planned: tuple[float, Fit | None],
) -> tuple[str, ...]:
    """What each other stack that runs the job on ``machine`` would change against its
    ``planned`` time and fit (``with torchtune: 1.4x faster, 3.1 GiB less a GPU``)."""
    own = stacks.get(job.tune.stack)
    lines = []
    seconds, fit = planned
    mine = fit.needed_bytes if fit is not None else 0.0
    said = None if job.tune.checkpointing == own.checkpointing else job.tune.checkpointing
    for other in stacks.stacks().values():
        if other.id == own.id or job.tune.method not in other.methods:
            continue
        if machine.kind not in other.runs_on or (job.precision == "fp8" and not other.fp8):
            continue
        tune = other.recipe(job.tune, said)  # the user's own recompute choice, else its default
        chosen, plan, theirs_fit = choose_layout(
            tune, machine, machine.topology.replicas, DEFAULT_GLOBAL_BATCH, job.micro_batch,
            calibration, host_seconds,
        )  # fmt: skip
        if theirs_fit is not None and not theirs_fit.fits:
            lines.append(f"  with {other.id}: does not fit here")
            continue
        theirs = (
            optimizer_steps(job, plan)
            * step_of(chosen, plan, machine, calibration, host_seconds).seconds
        )
        lines.append(f"  with {other.id}: {_faster(seconds / theirs)}{_memory(mine, theirs_fit)}")
    return tuple(lines)


def _faster(ratio: float) -> str:
    if abs(ratio - 1.0) < 0.05:
        return "about as fast"
    return f"{ratio:.2g}x faster" if ratio > 1 else f"{1 / ratio:.2g}x slower"


def _memory(mine: float, fit: Fit | None) -> str:
    if fit is None or not mine:
        return ""
    moved = (fit.needed_bytes - mine) / 2**30
    if abs(moved) < 0.5:
        return ", about the same memory"
    return f", {abs(moved):.1f} GiB {'more' if moved > 0 else 'less'} a GPU"


def predictor_for_job(
    job: Job, host_seconds: float | None = None, residuals: Mapping[str, Residual] | None = None
) -> Predictor:
    """``predict_job`` for every target of a recommendation (one calibration read), corrected
    on each kind of accelerator by its residual (``job_residuals``)."""
    calibration = llm_calibration()
    found = residuals or {}

    def predictor(target: Target) -> Prediction:
        prediction = predict_job(job, target, calibration=calibration, host_seconds=host_seconds)
        return corrected_for(prediction, target, found)

    return predictor


def job_residuals(
    job: Job, measured: Iterable[ProbeResult], calibration: Calibration | None = None
) -> dict[str, Residual]:
    """How far the device model was from ``job`` where it was probed on an accelerator: the
    probe's full-training time there (its proxy extrapolated to the whole model) over the
    device model's time for the run the probe made (``probe_run_seconds``). Probes of another
    job, on a CPU or outside the catalog are passed over."""
    calibration = calibration or llm_calibration()
    found: dict[str, list[tuple[str, float, float]]] = {}
    for probe in measured:
        accelerator = probe.device.accelerator
        if not accelerator or probe.config.workload != probe_name(job):
            continue
        modelled = probe_run_seconds(probe, calibration)
        if modelled is None or not probe.predicted_seconds > 0:
            continue
        log_ratio = math.log(probe.predicted_seconds / modelled)
        target = Target(accelerator, 1)
        found.setdefault(kind_of(target), []).append((accelerator, log_ratio, log_sigma_of(probe)))
    return {kind: combined(kind, rows) for kind, rows in found.items()}


def probe_run_seconds(probe: ProbeResult, calibration: Calibration) -> float | None:
    """The device model's time for the run an LLM job's probe made on its accelerator, as it
    ran: the probe's sequences in steps of its batch, at its precision, under its own framework
    (float32 runs its products as TF32 under Keras on JAX or TensorFlow, as strict FP32 under
    PyTorch: up to 8x apart), without activation checkpointing, which a Keras proxy does not do,
    and with QLoRA's base unquantised, as Keras steps it. Whether the whole model would fit
    there does not matter: the probe stepped a proxy. None: a probe on a CPU, or on an
    accelerator outside the catalog."""
    if not probe.device.accelerator:
        return None
    config = probe.config
    probed = job_of_probe(config.workload, config.samples, config.epochs, config.batch_size)
    stack = Stack(framework=probe_framework(probe))
    machine = machine_for(
        probe.device.accelerator, 1, calibration, probe.device.precision, stack=stack
    )
    if machine is None:
        return None
    tune = replace(probed.tune, checkpointing=False, quantisation="none")
    plan = layout(1, config.batch_size, config.batch_size, "none")
    return optimizer_steps(probed, plan) * step_of(tune, plan, machine, calibration).seconds


def optimizer_steps(job: Job, plan: Layout) -> int:
    """The optimizer steps of every epoch of ``job`` in ``plan``'s global batches."""
    return -(-job.sequences // plan.global_batch) * job.epochs


def startup_seconds(job: Job) -> float:
    """What a run pays before its first step: start, and fetch and load the 16-bit weights
    (QLoRA quantises them as they load)."""
    return STARTUP_SECONDS + 2.0 * job.tune.shape.parameters() / WEIGHTS_BYTES_PER_SECOND


def _precision(asked: str, accelerator: str | None) -> str:
    """bf16 or fp8 asked of a GPU without bf16 units (T4, V100): fp16 mixed precision, as people
    fine-tune there (fp8 asked of a GPU with bf16 but no FP8 units runs bf16: ``gpu_unit``)."""
    spec = catalog.accelerator(accelerator) if accelerator else None
    if (
        asked in ("bf16", "fp8")
        and spec is not None
        and spec.kind == "gpu"
        and not spec.bf16_tflops
    ):
        return "fp16"
    return asked


def _fallback(
    job: Job, precision: str, device: str, machine: Machine, asked: FineTune, tune: FineTune
) -> str:
    """What the plan runs other than the job asked: a precision the GPU lacks, the recipe
    changed to fit (``switched``)."""
    said = []
    if precision != job.precision:
        said.append(f"{job.precision} asked: no bf16 units on {device}, {precision} runs")
    elif machine.kernels.fallback:
        said.append(machine.kernels.fallback)
    return "; ".join([*said, *switched(asked, tune)])


def switched(asked: FineTune, tune: FineTune) -> list[str]:
    """How the planned recipe ``tune`` differs from the one ``asked``, to fit
    (``finetune.recipes``): recompute turned on, the low-memory recipe."""
    said = []
    if tune.checkpointing and not asked.checkpointing:
        said.append(
            "no layout fits here without activation recompute: each layer's forward runs again "
            "in the backward pass"
        )
    if (tune.master, tune.optimizer) != (asked.master, asked.optimizer):
        said.append(
            f"mixed-precision AdamW fits no layout here: {tune.master} weights and 8-bit AdamW"
        )
    return said


def _path(machine: Machine, plan: Layout, tune: FineTune) -> str:
    """What runs where: the kernel path, the layout, and a fallback recipe's switches."""
    path = machine.kernels.path.removesuffix(
        data_parallel(
            machine.topology.replicas, machine.topology.nodes, machine.topology.network_bytes_s
        )
    )
    if tune.optimizer == "adamw8bit":
        path += f", {tune.master} weights, 8-bit AdamW"
    if tune.attention == "fa2" and machine.kernels.fa2_share < 1:
        path += f", FlashAttention-2 ({machine.kernels.fa2_share:.2g}x this GPU's own attention kernels)"
    return f"{path}; {plan.describe()}"


def _explain(
    job: Job,
    asked: FineTune,
    tune: FineTune,
    plan: Layout,
    step: Step,
    machine: Machine,
    steps: int,
    seconds: float,
    host_seconds: float | None,
) -> tuple[str, ...]:
    peak = machine.peaks.matmul_flops
    host = "measured here" if host_seconds else "calibrated"
    bound = "host-bound" if step.host >= step.device else "device-bound"
    changed = switched(asked, tune)
    return (
        f"job: {job.describe()}",
        f"layout on {machine.label}: {_path(machine, plan, tune)}"
        + (f" ({'; '.join(changed)})" if changed else ""),
        f"one optimizer step: device {step.device:.3g} s (the device model), host "
        f"{step.host:.3g} s (dispatch {host}, kernel launches), {bound}"
        + (f", + {step.exchange:.3g} s of exposed gathers" if step.exchange else ""),
        f"{step.tokens_per_second_per_gpu:,.0f} tokens/s per GPU, "
        f"{step.flops_per_gpu / 1e12:.3g} TFLOP/s a GPU ({step.flops_per_gpu / peak:.0%} of "
        f"its {peak / 1e12:.4g} TFLOP/s peak); hardware bound {step.least:.3g} s a step",
        f"{steps:,} optimizer steps x {step.seconds:.3g} s = {seconds / 3600:.3g} h",
    )


def _environment(
    job: Job, tune: FineTune, plan: Layout, precision: str
) -> tuple[tuple[str, str], ...]:
    """What a task file tells the training script about the plan."""
    pairs = [
        ("ADVISOR_OPTIMIZER", tune.optimizer),
        ("ADVISOR_WEIGHTS", tune.master if not tune.adapted else tune.storage),
        ("ADVISOR_MODEL", job.model.repository),
        ("ADVISOR_METHOD", job.tune.method),
        ("ADVISOR_SEQ_LEN", str(job.sequence)),
        ("ADVISOR_GPUS", str(plan.gpus)),
        ("ADVISOR_SHARDING", plan.launcher_sharding),
        ("ADVISOR_TENSOR_PARALLEL", str(plan.tensor)),
        ("ADVISOR_PIPELINE_PARALLEL", str(plan.pipeline)),
        ("ADVISOR_VIRTUAL_STAGES", str(plan.virtual)),
        ("ADVISOR_MICRO_BATCH", str(plan.micro_batch)),
        ("ADVISOR_GRAD_ACCUM", str(plan.accumulation)),
        ("ADVISOR_PRECISION", precision),
        ("ADVISOR_CHECKPOINTING", "1" if tune.checkpointing else "0"),
        ("ADVISOR_STACK", job.tune.stack),
        ("ADVISOR_COMPILE", "1" if job.tune.compiled else "0"),
    ]
    if job.tune.adapted:
        pairs += [
            ("ADVISOR_LORA_RANK", str(job.tune.rank)),
            ("ADVISOR_LORA_TARGETS", job.tune.targets),
            ("ADVISOR_ADAPTER_DTYPE", "fp32" if job.tune.fp32_adapters else "bf16"),
        ]
    return tuple(pairs)


def _excluded(reason: str, fits: bool = True) -> Prediction:
    return Prediction(seconds=math.inf, log_sigma=0.0, fits=fits, reason=reason)
