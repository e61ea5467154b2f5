"""A probe measured on device S, a training time predicted on target T, in absolute terms.

The step on T comes from the device model (``steps``: each kernel class at a fitted share of the
datasheet peak of the unit it runs on, memory traffic at a share of the bandwidth), fitted on
published absolute measurements (``calibrate``), and from what the probe measured:

- on a device of another kind (this machine's CPU, a GPU target): the device's work is the
  model's, absolute; the host's part (its per-step dispatch, measured here) runs beside it, and
  the step takes the longer of the two. A CPU's speed on a workload says little about a GPU's:
  scaling the probe's CPU time by a modelled GPU:CPU ratio carried every error of the CPU model
  into the GPU time (docs/PREDICTION.md, "Absolute, not a ratio");
- on a device of the same kind (a cloud CPU from this CPU, a GPU from a GPU probe): the probe's
  time scaled part by part, as Habitat does, since what the model misses about this workload
  is mostly shared by the two:

    T_target = T_measured x sum over parts k of share_k(S) x part_k(T) / part_k(S)

Either way no step is faster than the hardware allows (``roofline``), and per-epoch host work
the probe measured is carried over as it is. Measurements beat predictions: a probe taken on
the target itself is returned as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from advisor.errors import UsageError
from advisor.estimate import catalog, feed, frameworks, memory
from advisor.estimate.floor import Floor, step_floor
from advisor.estimate.machine import (
    HALF_PRECISIONS,
    MODERN,
    Machine,
    Stack,
    accelerator_machine,
    check_precision,
    cpu_machine,
)
from advisor.estimate.measured import (
    facts_for,
    is_same_device,
    measured_shares,
    with_inferred_recurrence,
    with_measured_thread_scaling,
)
from advisor.estimate.parameters import (
    Calibration,
    across_kinds,
    shipped_calibration,
    sigma_of,
)
from advisor.estimate.prediction import Prediction, Target
from advisor.estimate.roofline import achieved_flops, least_step_seconds
from advisor.estimate.steps import (
    Parts,
    WorkloadFacts,
    step_parts,
)
from probes import backend, reference
from probes.result import Fingerprint, ProbeResult

EXTRAPOLATION_LOG_SIGMA = 0.35
"""Extra spread (added in quadrature) where the target lies beyond the calibrated hardware."""
_Z95 = 1.959964


DEFAULT_RUN_LOG_SIGMA = 0.183
"""How far a probe's prediction of ``model.fit`` lands from the real run on a shared machine, in
log units, when this device has no probe history yet: fitted on recorded probe/real pairs by
``advisor.fitting.run_spread`` (``make refit-check`` holds this constant to its fit)."""


def predict(
    probe: ProbeResult,
    target: Target,
    *,
    precision: str = "fp32",
    run_log_sigma: float | None = None,
    stack: Stack | None = None,
    batch_size: int | None = None,
    global_batch: int | None = None,
    calibration: Calibration | None = None,
    augmented: bool | None = None,
) -> Prediction:
    """The full-training time of ``probe``'s workload on ``target``, with its spread.

    ``run_log_sigma`` is how much repeated probes of workloads on the probe's device disagree
    (``probes.history.run_log_sigma``); without it, ``DEFAULT_RUN_LOG_SIGMA``. ``stack`` is the
    software the training runs under on the target (what ``fp32`` means there, the CPU build,
    the tensor layout); by default the probe's own framework. A probe's measurement carries
    over only to its own software: on another (a published 2017 run under TensorFlow 1) the
    device model alone predicts.

    ``batch_size`` is the batch each device (data-parallel replica) computes, the probe's by
    default: on N devices the global batch is N times it and an epoch takes N times fewer steps,
    as DDP, ``tf.distribute``, Keras's distribution API and JAX sharding train (weak scaling).
    Where that batch does not fit a device, the largest that does is predicted, and said.
    ``global_batch`` fixes the global batch instead, whatever the devices (strong scaling: a
    recipe that fixes it, or a published run that states it).

    ``calibration`` replaces the shipped fit (a benchmark's fit without the source it checks).
    ``augmented`` False: the training feeds its arrays unaugmented, whatever the workload's
    recipe (a published run of synthetic data)."""
    check_precision(precision)
    unpredictable = _unpredictable(target)
    if unpredictable is not None:
        return unpredictable
    per_device = batch_size or probe.config.batch_size
    own_stack = Stack(framework=probe_framework(probe))
    stack = stack or own_stack
    if global_batch:
        same_batch = global_batch == probe.global_batch
    else:
        same_batch = per_device == probe.config.batch_size
    if _measured_on_target(probe, target, precision, stack, own_stack, same_batch):
        # on a CPU, mixed precision runs fp32 kernels
        measured = _measured(probe, run_log_sigma)
        return _held_to_hardware(measured, probe, target, precision, stack, calibration)
    calibration = with_measured_thread_scaling(calibration or shipped_calibration(), probe)
    facts = _as_fed(facts_for(probe), augmented)
    source, source_guess = source_machine(probe.device, calibration, facts.cudnn_rnn)
    if source is None:
        return _excluded(
            f"the probe's accelerator {probe.device.accelerator} is not in the catalog"
        )
    facts = with_inferred_recurrence(probe, facts, source, calibration)
    machine = target_machine(target, calibration, precision, facts.cudnn_rnn, stack)
    batch = global_batch or per_device * machine.topology.replicas
    fit = memory.check(probe, machine, facts.activation_bytes_per_sample, facts.optimizer, batch)
    smaller = _largest_fitting(fit, machine, per_device) if global_batch is None else None
    if fit is not None and smaller is not None:
        return _at_smaller_batch(
            predict(
                probe, target, precision=precision, run_log_sigma=run_log_sigma, stack=stack,
                batch_size=smaller, calibration=calibration, augmented=augmented,
            ),
            machine, per_device, fit,
        )  # fmt: skip
    job = _Job(probe, facts, source, source_guess, machine, calibration, batch)
    job, parts_t, step = _fastest_step(job, target, precision, stack, own_stack)
    waits = _foreign_waits(probe, stack, own_stack)
    return _prediction(job, step, parts_t.exchange, fit, waits, run_log_sigma, global_batch)


def _fastest_step(
    job: _Job, target: Target, precision: str, stack: Stack, own_stack: Stack
) -> tuple[_Job, Parts, _Step]:
    """The target's step; on a CPU under today's frameworks, at the intra-op thread count that
    runs it fastest, up to the threads the machine uses: a small model whose per-step
    synchronisation outweighs what more threads compute runs on fewer (frameworks let a run set
    them). The step is convex in the thread count (compute over the USL speed-up, a linear
    synchronisation term), so a ternary search finds the fastest; the threads searched only grow
    with the vCPUs, so more vCPUs of a family are never slower."""
    own = same_software(stack, own_stack)

    def at(threads: float | None) -> tuple[_Job, Parts, _Step]:
        machine = job.machine
        if threads is not None:
            machine = target_machine(
                target, job.calibration, precision, job.facts.cudnn_rnn, stack, threads=threads
            )
        trial = replace(job, machine=machine)
        parts = step_parts(trial.facts, machine, trial.batch, trial.calibration)
        return trial, parts, _target_step(trial, target, parts, stack, own)

    most = job.machine.topology.threads
    if job.machine.kind != "cpu" or stack.framework.tensorflow_1 or most < 2:
        return at(None)
    tried = {most: at(None)}

    def seconds(threads: float) -> float:
        if threads not in tried:
            tried[threads] = at(threads)
        return tried[threads][2].seconds

    low, high = 1, math.floor(most)
    while high - low > 2:
        left, right = low + (high - low) // 3, high - (high - low) // 3
        if seconds(left) <= seconds(right):
            high = right
        else:
            low = left
    best = min([*range(low, high + 1), most], key=lambda threads: (seconds(threads), -threads))
    return tried[best]


def _unpredictable(target: Target) -> Prediction | None:
    """The exclusion of a target nothing can be predicted on (an accelerator the catalog lacks,
    neither an accelerator nor vCPUs, unreachable), else None."""
    if target.accelerator and catalog.accelerator(target.accelerator) is None:
        return _excluded(f"accelerator {target.accelerator} not in the device catalog")
    if not target.accelerator and not target.vcpus:
        return _excluded("the target has neither an accelerator nor a vCPU count")
    if target.unreachable:
        return _excluded(target.unreachable)
    return None


def _measured_on_target(
    probe: ProbeResult,
    target: Target,
    precision: str,
    stack: Stack,
    own_stack: Stack,
    same_batch: bool,
) -> bool:
    """Whether the probe measured the job itself: on the target's device, at its precision (on
    a CPU, mixed precision runs fp32 kernels), at the batch asked (``same_batch``: the global
    one asked, else the per-device one, is the probe's) and under the probe's own software."""
    # a probe runs its framework's float32 default, TF32 on the GPUs that have it: never strict
    same_precision = precision != "fp32-strict" and probe.device.precision == _precision_class(
        precision
    )
    same_job = same_batch and stack == own_stack
    return (
        is_same_device(probe.device, target)
        and (same_precision or not target.accelerator)
        and same_job
    )


def _as_fed(facts: WorkloadFacts, augmented: bool | None) -> WorkloadFacts:
    """``facts`` with the arrays fed as ``augmented`` says: False, as they are, no augmentation,
    no decoding; None, as the workload's recipe feeds them."""
    if augmented is None:
        return facts
    return replace(
        facts, host_augmentation=augmented, decodes_jpeg=facts.decodes_jpeg and augmented
    )


@dataclass(frozen=True)
class _Job:
    """What a prediction off the target starts from: the probe, its workload's facts, the
    machine it ran on (``source_guess``: its CPU family guessed), the target's machine, the
    calibration and the global batch."""

    probe: ProbeResult
    facts: WorkloadFacts
    source: Machine
    source_guess: bool
    machine: Machine
    calibration: Calibration
    batch: int


@dataclass(frozen=True)
class _Step:
    """The target's step: its seconds (the gradient exchange apart), the lines that explain
    it, the least its hardware allows and whether the probe's step was scaled to it (rather
    than the device model's taken as it is)."""

    seconds: float
    notes: list[str]
    least: float
    scaled: bool


def _target_step(
    job: _Job, target: Target, parts_t: Parts, stack: Stack, own_software: bool
) -> _Step:
    """The step on the target: the probe's scaled part by part on a device of its own kind
    under its own software, the device model's beside the host's otherwise; never faster than
    the images can be decoded (a workload that decodes JPEGs) or than the hardware allows."""
    probe, facts, source, machine, batch = job.probe, job.facts, job.source, job.machine, job.batch
    floor = _floor(probe, target, machine, job.calibration, stack, own_software, facts, batch)
    scaled_path = _kind(source) == _kind(machine) and own_software
    if scaled_path:
        step, steps = _scaled_step(probe, facts, source, machine, parts_t, job.calibration, floor)
    else:
        step, steps = _absolute_step(parts_t, floor)
    if facts.decodes_jpeg:
        loading = feed.input_seconds(target, machine, batch / machine.topology.replicas)
        if loading > step:
            steps.append(feed.describe(loading, target, machine))
            step = loading
    waited = _waited_for_data(probe, target, machine, facts, batch)
    if waited > step:
        steps.append(
            f"input-bound: the script's loop waited {probe.input_wait_seconds * 1e3:.3g} ms a "
            f"step here for its data; {waited * 1e3:.3g} ms at the target's host"
        )
        step = waited
    least = least_step_seconds(facts, machine, batch)
    if step < least:
        steps.append(
            f"the hardware bound binds: {step * 1e3:.3g} ms/step is below the "
            f"{least * 1e3:.3g} ms {machine.label} needs at its datasheet peaks"
        )
        step = least
    return _Step(step, steps, least, scaled_path)


def _prediction(
    job: _Job,
    target_step: _Step,
    allreduce: float,
    fit: memory.Fit | None,
    foreign_waits: float,
    run_log_sigma: float | None,
    global_batch: int | None,
) -> Prediction:
    """The full training from the target's step: the probe's repeating part scaled with the
    time of an epoch's steps, its per-epoch host work as it is, the gradient exchange
    (``allreduce`` seconds a step) added, and the spread of the kind of prediction made."""
    probe, facts, source, machine, batch = job.probe, job.facts, job.source, job.machine, job.batch
    step, scaled_path = target_step.seconds, target_step.scaled
    # the repeating part scales with the time of an epoch's steps (validation keeps its ratio)
    step_ratio = (step * _steps(probe, batch)) / (probe.step_seconds * _steps(probe, None))
    per_epoch = probe.epoch_overhead_seconds * probe.config.epochs
    scaled = max(probe.predicted_seconds - per_epoch - foreign_waits, 0.0)
    train_steps = _steps(probe, batch) * probe.config.epochs
    seconds = scaled * step_ratio + per_epoch + allreduce * train_steps
    rate = achieved_flops(facts, batch, step)
    recurrent = facts.family == "recurrent"
    # cuDNN's recurrent path is fitted on measured kernels (advisor.estimate.kernels) and
    # checked on held-out CPU<->GPU results, so it no longer flags a prediction by itself.
    # the probe's own step reaches the target only on the scaled path: its extrapolation and
    # its CPU's family matter there alone
    extrapolated = machine.extrapolated or not backend.calibrated(probe.device.backend)
    if scaled_path:
        extrapolated = extrapolated or source.extrapolated or job.source_guess or probe.extrapolated
    path = f"{machine.kernels.lstm}, {machine.kernels.path}" if recurrent else machine.kernels.path
    # the spread of a scaled prediction is a pair's, of an absolute one a row's (``calibrate``)
    target_kind = _kind(machine)
    kinds = f"{target_kind}->{target_kind}" if scaled_path else across_kinds(target_kind)
    measured_share = (per_epoch + (scaled * step_ratio if scaled_path else 0.0)) / (seconds or 1.0)
    return Prediction(
        seconds=seconds,
        log_sigma=_spread(
            probe, kinds, job.calibration, extrapolated, run_log_sigma, facts.family, measured_share
        ),
        fits=fit is None or fit.fits,
        reason=None if fit is None or fit.fits else f"{machine.label}: {fit.reason(batch)}",
        extrapolated=extrapolated,
        kernel_path=path,
        fallback=machine.kernels.fallback,
        least_seconds=target_step.least * train_steps,
        steps=(
            f"source: {source.label}, {source.kernels.path}; step {probe.step_seconds:.4g} s "
            f"at batch {probe.config.batch_size}",
            *target_step.notes,
            f"target: {machine.label}, {path}; step {step * 1e3:.4g} ms at "
            + describe_batch(batch, machine.topology.replicas)
            + (f" + all-reduce {allreduce * 1e3:.3g} ms/step" if allreduce else "")
            + (f", {rate / 1e12:.3g} TFLOP/s" if rate else ""),
            f"full training: {probe.predicted_seconds:.4g} s here -> {seconds:.4g} s",
        ),
        step_seconds=step + allreduce,
        batch_per_device=batch / machine.topology.replicas,
        global_batch=batch,
        batch_grown=global_batch is None and machine.topology.replicas > 1,
    )


def describe_batch(global_batch: int, replicas: int) -> str:
    """``batch 64`` on one device, ``batch 64 per device x 8 = 512`` on several."""
    if replicas <= 1:
        return f"batch {global_batch}"
    return f"batch {global_batch / replicas:.4g} per device x {replicas} = {global_batch}"


def _largest_fitting(fit: memory.Fit | None, machine: Machine, per_device: int) -> int | None:
    """The largest per-device batch that fits where ``per_device`` does not (None: it fits, or
    not even one sample does)."""
    if fit is None or fit.fits or not fit.largest_batch:
        return None
    largest = fit.largest_batch // machine.topology.replicas
    return largest if 1 <= largest < per_device else None


def _at_smaller_batch(
    prediction: Prediction, machine: Machine, asked: int, fit: memory.Fit
) -> Prediction:
    """``prediction`` at the largest per-device batch that fits, saying so: people train at the
    batch their device holds rather than not at all."""
    need, have = fit.needed_bytes / 2**30, fit.available_bytes / 2**30
    note = (
        f"batch {asked} per device needs ~{need:.1f} GiB on {machine.label}, which has "
        f"{have:.1f} GiB a device: predicted at batch {prediction.batch_per_device:g} per "
        "device, the largest that fits"
    )
    return replace(prediction, steps=(note, *prediction.steps), batch_note=note)


def same_software(stack: Stack, own: Stack) -> bool:
    """Whether ``stack`` runs what the probe measured: its framework at the same major version
    with the same CPU kernels (TensorFlow before 2.9 ran Eigen's, later ones oneDNN's), built
    for the same vector instructions; layouts and containers do not move a CPU's step."""
    return (
        stack.framework.same_generation(own.framework)
        and stack.framework.cpu_kernels == own.framework.cpu_kernels
        and stack.cpu_isa == own.cpu_isa
    )


def _foreign_waits(probe: ProbeResult, stack: Stack, own: Stack) -> float:
    """The waits of dropped tf.data iterators in the probe's predicted time (``probes.teardown``)
    that a run under another framework or major version does not pay: they are Keras's on
    TensorFlow 2, and TensorFlow 1's Keras fed NumPy batches through ``feed_dict``, no iterator
    to drop. Their seconds are the epoch boundaries', the last epoch's being in the one-time
    part."""
    if stack.framework.same_generation(own.framework):
        return 0.0
    epochs = probe.config.epochs
    return probe.teardown_seconds * (epochs - 1) / epochs if epochs else 0.0


def probe_framework(probe: ProbeResult) -> frameworks.Framework:
    """The framework a probe trained under (its Keras backend, or a script's own PyTorch or JAX
    loop, and that framework's version)."""
    return frameworks.from_backend(probe.device.backend, probe.device.tensorflow, probe.keras)


def _steps(probe: ProbeResult, batch: int | None) -> int:
    """Training steps of one epoch at ``batch`` (the probe's own by default)."""
    return -(-probe.config.samples // (batch or probe.config.batch_size))


def _kind(machine: Machine) -> str:
    return "gpu" if machine.kind == "tpu" else machine.kind


def _floor(
    probe: ProbeResult,
    target: Target,
    machine: Machine,
    calibration: Calibration,
    stack: Stack,
    own_software: bool,
    facts: WorkloadFacts,
    batch: int,
) -> Floor | None:
    """The step floor on an accelerator where the host's work is measured: the target runs the
    probe's software, or its framework's GPU host was measured (``advisor.estimate.floor``);
    None on a CPU or where only the calibrated overhead is known. Each replica's process
    dispatches its own step on the target's host (``host_time_scale``)."""
    if machine.kind == "cpu":
        return None
    floor = step_floor(
        probe,
        machine.kind,
        calibration,
        stack.framework,
        own_software=own_software,
        step_input_bytes=facts.input_bytes_per_sample * batch / machine.topology.replicas,
        host_scale=host_time_scale(probe, target),
    )
    return floor if own_software or floor.gpu_host else None


def _waited_for_data(
    probe: ProbeResult, target: Target, machine: Machine, facts: WorkloadFacts, batch: int
) -> float:
    """What a replica's loop waits for its data each step on an accelerator target: the wait
    measured here a sample, at the target host's clock (``host_time_scale``), for its batch. An
    accelerator computes while the host loads (0 on a CPU, whose measured step holds the wait).
    With loader workers, the wait here is what they did not hide: a least cost."""
    if machine.kind == "cpu" or facts.input_seconds_per_sample <= 0:
        return 0.0
    per_replica = batch / machine.topology.replicas
    return facts.input_seconds_per_sample * per_replica * host_time_scale(probe, target)


def host_time_scale(probe: ProbeResult, target: Target) -> float:
    """How the host work a probe measured here (its dispatch, its layers' Python) stretches on
    the target's host CPU: freed of the other processes' share of this machine while it ran
    (``ProbeResult.contention``: a busy laptop must not slow a cloud prediction), at the target
    family's clock against this CPU's (the datasheets' all-core clocks, ``data/cpu-families.csv``;
    the stated default family where an offering does not name its host's). Dispatch is one
    thread's work: a core's clock sets it, not the host's count of cores. Each data-parallel
    replica runs its own process (DDP, one process per GPU; a TPU host's per-chip feed), so
    the host's share of a step does not grow with the replicas."""
    here, _ = catalog.family_of_cpu_model(probe.device.cpu_model)
    busy = min(max(probe.contention, 0.0), MAX_CONTENTION)
    return (1 - busy) * catalog.clock_ratio(here, target.cpu_family)


MAX_CONTENTION = 0.9
"""The most of this machine's CPU that other processes are taken to have used while a probe ran
(``probes.reference``): past it the probe's host figures say too little to be rescaled."""


def _absolute_step(parts: Parts, floor: Floor | None) -> tuple[float, list[str]]:
    """The step on a device of another kind than the probe's, or under other software: the
    device model's work beside the host's: the step ``floor`` (``advisor.estimate.floor``) where
    the target runs the probe's software or its framework's GPU host was measured, the
    calibrated overhead otherwise."""
    device = parts.device
    host, host_note = parts.overhead, f"host {parts.overhead * 1e3:.3g} ms/step (calibrated)"
    if parts.overlapped and floor is not None:
        host, host_note = floor.seconds, floor.describe()
    step = max(host, device) if parts.overlapped else host + device
    work = ", ".join(
        f"{name} {seconds * 1e3:.3g} ms"
        for name, seconds in parts.as_dict().items()
        if seconds and name != "overhead"
    )
    if not parts.overlapped:
        bound = "the host waits for each step: they add up"
    else:
        bound = "host-bound" if host >= device else "device-bound"
    return step, [f"the device model's step: {work}", f"{host_note}; {bound}"]


def _scaled_step(
    probe: ProbeResult,
    facts: WorkloadFacts,
    source: Machine,
    machine: Machine,
    parts_t: Parts,
    calibration: Calibration,
    floor: Floor | None,
) -> tuple[float, list[str]]:
    """The probe's step scaled part by part to a device of its own kind, never below the step
    ``floor`` (the target's gradient exchange, ``Parts.exchange``, apart: the caller adds it in
    seconds)."""
    parts_s = step_parts(facts, source, probe.config.batch_size, calibration)
    shares = measured_shares(probe, parts_s)
    ratios = {name: _ratio(name, parts_s, parts_t, source, machine) for name in shares}
    step_ratio = sum(shares[name] * ratios[name] for name in shares)
    lines = [
        "shares of the step: " + _percentages(shares),
        "part ratios target/source: " + ", ".join(f"{k} x{v:.3g}" for k, v in ratios.items()),
    ]
    step = probe.step_seconds * step_ratio
    if floor is not None and step < floor.seconds:
        lines.append(
            f"the floor binds: modelled step {step * 1e3:.3g} ms is below the {floor.describe()}"
        )
        step = floor.seconds
    return step, lines


def source_machine(
    device: Fingerprint, calibration: Calibration, cudnn_rnn: bool = True
) -> tuple[Machine | None, bool]:
    """The machine a probe ran on, and whether its CPU family was guessed (``cudnn_rnn``: the
    workload's recurrent layers can run cuDNN's kernel on a GPU)."""
    precision = _precision_class(device.precision)
    if device.accelerator:
        machine = accelerator_machine(
            device.accelerator, 1, calibration, precision=precision, cudnn_eligible=cudnn_rnn
        )
        return machine, False
    family, guessed = catalog.family_of_cpu_model(device.cpu_model)
    threads = device.threads or device.logical_cpus
    # TensorFlow 2 wheels are vectorised (AVX2/AVX-512) with or without oneDNN.
    machine = cpu_machine(
        family,
        threads,
        calibration,
        stack=MODERN,
        precision=precision,
        threads_per_core=device.threads_per_core,
    )
    return machine, guessed


def target_machine(
    target: Target,
    calibration: Calibration,
    precision: str,
    cudnn_rnn: bool = True,
    stack: Stack = MODERN,
    threads: float | None = None,
) -> Machine:
    """The target's machine (``threads``: a CPU's intra-op threads, where a run sets them)."""
    if target.accelerator:
        machine = accelerator_machine(
            target.accelerator,
            target.accelerator_count,
            calibration,
            stack=stack,
            precision=precision,
            cudnn_eligible=cudnn_rnn,
            nodes=target.nodes,
            network_bytes_s=target.network_gbps * 1e9 / 8,
        )
        if machine is None:  # checked by the caller; kept for the type checker
            raise UsageError(f"accelerator {target.accelerator} not in the device catalog")
        return machine
    return cpu_machine(
        target.cpu_family,
        target.vcpus or 1,
        calibration,
        stack=stack,
        precision=precision,
        threads_per_core=target.threads_per_core,
        threads=threads,
    )


def _ratio(name: str, s: Parts, t: Parts, source: Machine, target: Machine) -> float:
    modelled_s, modelled_t = getattr(s, name), getattr(t, name)
    if modelled_s > 0 and modelled_t > 0:
        return float(modelled_t / modelled_s)
    capability = {  # the part is absent in the model: scale by the raw capability
        "compute": source.rates.conv_flops
        / target.rates.conv_flops
        * source.topology.replicas
        / target.topology.replicas,
        "memory": source.rates.bandwidth / target.rates.bandwidth,
        "sequential": target.latencies.cell_step_s / source.latencies.cell_step_s,
        "overhead": target.latencies.overhead_s / source.latencies.overhead_s,
    }
    if name == "input_pipeline":  # host-side work: scales with host CPUs only on a CPU target
        return capability["compute"] if target.kind == "cpu" else 1.0
    return capability[name]


def _spread(
    probe: ProbeResult,
    kinds: str,
    calibration: Calibration,
    extrapolated: bool,
    run_log_sigma: float | None,
    family: str,
    measured_share: float,
) -> float:
    """The prediction's spread: the device model's held-out spread for this kind of prediction
    (and family), more where the target is extrapolated, and the probe's own spread in
    proportion to the share of the time that comes from what it measured."""
    model = sigma_of(calibration.log_sigma, kinds, family)
    extra = EXTRAPOLATION_LOG_SIGMA if extrapolated else 0.0
    local = local_log_sigma(probe, run_log_sigma) * min(1.0, max(measured_share, 0.0))
    return math.sqrt(model**2 + extra**2 + local**2)


def local_log_sigma(probe: ProbeResult, run_log_sigma: float | None = None) -> float:
    """The spread of the probe's own prediction, in log units: the wider of what its
    measurements allow and how much this machine's answers move between runs, widened by the
    speed change the reference kernel saw while it ran, or by the slowdown other processes'
    CPU time (``contention``) can explain, whichever is larger.

    Repeated probes disagree by ``run_log_sigma``; a real run on the same machine varies about
    as much again, so a local prediction misses the real run by sqrt(2) x that."""
    slowdown = probe.contention / max(1 - probe.contention, 0.05)  # a machine busy throughout
    drift = max(probe.machine_drift, slowdown)
    return spread_of_local(probe_log_sigma(probe), drift, run_log_sigma)


def spread_of_local(
    probe_log_sigma: float, machine_drift: float, run_log_sigma: float | None = None
) -> float:
    """``local_log_sigma`` from its parts: the probe's own spread, the reference kernel's drift
    while it ran and this device's probe-to-probe spread (``DEFAULT_RUN_LOG_SIGMA`` without
    history)."""
    runs = math.sqrt(2) * run_log_sigma if run_log_sigma is not None else DEFAULT_RUN_LOG_SIGMA
    drift = math.log1p(max(0.0, abs(machine_drift) - reference.NOISE))
    return math.hypot(max(probe_log_sigma, runs), drift)


def probe_log_sigma(probe: ProbeResult) -> float:
    """What the probe's own measurements allow, in log units (its 95% interval's width)."""
    low, high = probe.predicted_interval
    if low <= 0 or high <= low:
        return 0.0
    return math.log(high / low) / (2 * _Z95)


def _measured(probe: ProbeResult, run_log_sigma: float | None) -> Prediction:
    d = probe.device
    where = "this device" if d.devices == 1 else f"these {d.devices} devices, data parallel"
    where += f" over {d.nodes} nodes" if d.nodes > 1 else ""
    return Prediction(
        seconds=probe.predicted_seconds,
        log_sigma=local_log_sigma(probe, run_log_sigma),
        measured=True,
        kernel_path=f"measured on {where} ({probe.device.precision})",
        steps=(f"measured by a probe on {where}: {probe.predicted_seconds:.4g} s",),
        step_seconds=probe.step_seconds,
    )


def _held_to_hardware(
    measured: Prediction,
    probe: ProbeResult,
    target: Target,
    precision: str,
    stack: Stack,
    calibration: Calibration | None,
) -> Prediction:
    """A measurement on the target itself, never faster than the target's hardware allows: an
    imported probe that claims a whole ImageNet run in a microsecond is held at the roofline's
    least time for its steps, and says so, like any prediction."""
    facts = facts_for(probe)
    calibration = calibration or shipped_calibration()
    machine = target_machine(target, calibration, precision, facts.cudnn_rnn, stack)
    batch = probe.global_batch
    least = least_step_seconds(facts, machine, batch) * _steps(probe, batch) * probe.config.epochs
    if measured.seconds >= least:
        return replace(measured, least_seconds=least)
    return replace(
        measured,
        seconds=least,
        least_seconds=least,
        steps=(
            *measured.steps,
            f"the measurement's {measured.seconds:.4g} s is below the {least:.4g} s "
            f"{machine.label} needs at its datasheet peaks: held there",
        ),
    )


def _excluded(reason: str) -> Prediction:
    return Prediction(seconds=math.inf, log_sigma=0.0, fits=False, reason=reason)


def _precision_class(precision: str) -> str:
    """``mixed`` for the half precisions, ``fp32`` for the float32 ones: the two a probe runs."""
    return "mixed" if precision in HALF_PRECISIONS else "fp32"


def _percentages(shares: dict[str, float]) -> str:
    return ", ".join(f"{name} {share:.0%}" for name, share in shares.items())
