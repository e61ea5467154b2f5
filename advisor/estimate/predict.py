"""A probe measured on device S, a training time predicted on target T.

    T_target = T_measured x sum over parts k of share_k(S) x part_k(T) / part_k(S)  (+ all-reduce)

The shares come from the probe itself where it measured them (``op_split``; the per-step
overhead from ``batch_scaling``), else from the step model; the per-part ratios come from the
step model, so a bias shared by source and target cancels. Measurements beat predictions: a probe
taken on the target itself is returned as it is.
"""

from __future__ import annotations

import math

from advisor.errors import UsageError
from advisor.estimate import catalog, memory
from advisor.estimate.floor import step_floor
from advisor.estimate.machine import (
    MODERN,
    Machine,
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
from advisor.estimate.parameters import DEFAULT_LOG_SIGMA, Calibration, shipped_calibration
from advisor.estimate.prediction import Prediction, Target
from advisor.estimate.steps import (
    Parts,
    allreduce_seconds,
    step_parts,
)
from probes import backend, reference
from probes.result import Fingerprint, ProbeResult

EXTRAPOLATION_LOG_SIGMA = 0.35
"""Extra spread (added in quadrature) where the target lies beyond the calibrated hardware."""
_Z95 = 1.959964


DEFAULT_RUN_LOG_SIGMA = 0.183
"""How far a probe's prediction of ``model.fit`` lands from the real run on a shared machine, in
log units, when this device has no probe history yet: the root mean square log error of 18
interleaved probe/real pairs of the zoo's mnist_mlp, mnist_cnn and imdb_bilstm on a 2-vCPU cloud
VM, two quiet passes (``python benchmarks/run_spread.py
benchmarks/results/local_accuracy_pass3.json benchmarks/results/local_accuracy_pass1.json``). Most
of it is the real runs' own spread (their iterator stalls, ``probes.teardown``); the user models
of those passes are held out of this fit."""


def predict(
    probe: ProbeResult,
    target: Target,
    *,
    precision: str = "fp32",
    run_log_sigma: float | None = None,
) -> Prediction:
    """The full-training time of ``probe``'s workload on ``target``, with its spread.

    ``run_log_sigma`` is how much repeated probes of workloads on the probe's device disagree
    (``probes.history.run_log_sigma``); without it, ``DEFAULT_RUN_LOG_SIGMA``."""
    check_precision(precision)
    if target.accelerator and catalog.accelerator(target.accelerator) is None:
        return _excluded(f"accelerator {target.accelerator} not in the device catalog")
    if not target.accelerator and not target.vcpus:
        return _excluded("the target has neither an accelerator nor a vCPU count")
    same_precision = probe.device.precision == _probe_precision(precision)
    if is_same_device(probe.device, target) and (same_precision or not target.accelerator):
        return _measured(probe, run_log_sigma)  # on a CPU, mixed precision runs fp32 kernels
    calibration = with_measured_thread_scaling(shipped_calibration(), probe)
    facts = facts_for(probe)
    source, source_guess = source_machine(probe.device, calibration, facts.cudnn_rnn)
    if source is None:
        return _excluded(
            f"the probe's accelerator {probe.device.accelerator} is not in the catalog"
        )
    facts = with_inferred_recurrence(probe, facts, source, calibration)
    machine = target_machine(target, calibration, precision, facts.cudnn_rnn)
    batch = probe.config.batch_size
    parts_s = step_parts(facts, source, batch, calibration)
    parts_t = step_parts(facts, machine, batch, calibration)
    allreduce = allreduce_seconds(facts.parameters, machine)
    shares = measured_shares(probe, parts_s)
    ratios = {name: _ratio(name, parts_s, parts_t, source, machine, allreduce) for name in shares}
    step_ratio = sum(shares[name] * ratios[name] for name in shares)
    floor_note = ""
    if machine.kind != "cpu":
        floor = step_floor(probe, machine.kind, calibration)
        if probe.step_seconds * step_ratio < floor.seconds:
            floor_note = (
                f"the floor binds: modelled step {probe.step_seconds * step_ratio * 1e3:.3g} ms "
                f"is below the {floor.describe()}"
            )
            step_ratio = floor.seconds / probe.step_seconds
    train_steps = probe.config.steps_per_epoch * probe.config.epochs
    per_epoch = probe.epoch_overhead_seconds * probe.config.epochs
    scaled = max(probe.predicted_seconds - per_epoch, 0.0)
    seconds = scaled * step_ratio + per_epoch + allreduce * train_steps
    recurrent = facts.family == "recurrent"
    fit = memory.check(probe, machine, facts.activation_bytes_per_sample, facts.optimizer)
    # cuDNN's recurrent path is fitted on measured kernels (advisor.estimate.kernels) and
    # checked on held-out CPU<->GPU results, so it no longer flags a prediction by itself.
    extrapolated = (
        machine.extrapolated
        or source.extrapolated
        or source_guess
        or probe.extrapolated
        or not backend.calibrated(probe.device.backend)
    )
    path = f"{machine.lstm_kernel}, {machine.kernel_path}" if recurrent else machine.kernel_path
    return Prediction(
        seconds=seconds,
        log_sigma=_spread(
            probe, source, machine, calibration, extrapolated, run_log_sigma, facts.family
        ),
        fits=fit is None or fit.fits,
        reason=None if fit is None or fit.fits else f"{machine.label}: {fit.reason(batch)}",
        extrapolated=extrapolated,
        kernel_path=path,
        steps=(
            f"source: {source.label}, {source.kernel_path}; step {probe.step_seconds:.4g} s",
            "shares of the step: " + _percentages(shares),
            "part ratios target/source: " + ", ".join(f"{k} x{v:.3g}" for k, v in ratios.items()),
            f"target: {machine.label}, {path}; step x{step_ratio:.3g}"
            + (f" + all-reduce {allreduce * 1e3:.3g} ms/step" if allreduce else ""),
            *([floor_note] if floor_note else []),
            f"full training: {probe.predicted_seconds:.4g} s -> {seconds:.4g} s",
        ),
    )


def source_machine(
    device: Fingerprint, calibration: Calibration, cudnn_rnn: bool = True
) -> tuple[Machine | None, bool]:
    """The machine a probe ran on, and whether its CPU family was guessed (``cudnn_rnn``: the
    workload's recurrent layers can run cuDNN's kernel on a GPU)."""
    precision = _target_precision(device.precision)
    if device.accelerator:
        machine = accelerator_machine(
            device.accelerator, 1, calibration, precision=precision, cudnn_eligible=cudnn_rnn
        )
        return machine, False
    family, guessed = catalog.family_of_cpu_model(device.cpu_model)
    threads = device.threads or device.logical_cpus
    # TensorFlow 2 wheels are vectorised (AVX2/AVX-512) with or without oneDNN.
    return cpu_machine(family, threads, calibration, stack=MODERN, precision=precision), guessed


def target_machine(
    target: Target, calibration: Calibration, precision: str, cudnn_rnn: bool = True
) -> Machine:
    if target.accelerator:
        machine = accelerator_machine(
            target.accelerator,
            target.accelerator_count,
            calibration,
            precision=precision,
            cudnn_eligible=cudnn_rnn,
        )
        if machine is None:  # checked by the caller; kept for the type checker
            raise UsageError(f"accelerator {target.accelerator} not in the device catalog")
        return machine
    return cpu_machine(target.cpu_family, target.vcpus or 1, calibration, precision=precision)


def _ratio(
    name: str, s: Parts, t: Parts, source: Machine, target: Machine, allreduce: float
) -> float:
    modelled_s, modelled_t = getattr(s, name), getattr(t, name)
    if name == "overhead":
        modelled_t -= allreduce  # added once, in seconds, by the caller
    if modelled_s > 0 and modelled_t > 0:
        return float(modelled_t / modelled_s)
    capability = {  # the part is absent in the model: scale by the raw capability
        "compute": source.compute_flops / target.compute_flops * source.replicas / target.replicas,
        "memory": source.bandwidth / target.bandwidth,
        "sequential": target.cell_step_s / source.cell_step_s,
        "overhead": target.overhead_s / source.overhead_s,
    }
    if name == "input_pipeline":  # host-side work: scales with host CPUs only on a CPU target
        return capability["compute"] if target.kind == "cpu" else 1.0
    return capability[name]


def _spread(
    probe: ProbeResult,
    source: Machine,
    target: Machine,
    calibration: Calibration,
    extrapolated: bool,
    run_log_sigma: float | None,
    family: str = "",
) -> float:
    kind = f"{source.kind}->{'gpu' if target.kind == 'tpu' else target.kind}"
    model = calibration.log_sigma.get(kind) or calibration.log_sigma.get("all", DEFAULT_LOG_SIGMA)
    if family == "transformer" and kind == "gpu->gpu" and calibration.transformer_log_sigma > 0:
        model = calibration.transformer_log_sigma
    extra = EXTRAPOLATION_LOG_SIGMA if extrapolated else 0.0
    local = local_log_sigma(probe, run_log_sigma)
    return math.sqrt(model**2 + extra**2 + local**2)


def local_log_sigma(probe: ProbeResult, run_log_sigma: float | None = None) -> float:
    """The spread of the probe's own prediction, in log units: the wider of what its
    measurements allow and how much this machine's answers move between runs, widened by the
    speed change the reference kernel saw while it ran.

    Repeated probes disagree by ``run_log_sigma``; a real run on the same machine varies about
    as much again, so a local prediction misses the real run by sqrt(2) x that."""
    return spread_of_local(probe_log_sigma(probe), probe.machine_drift, run_log_sigma)


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
    return Prediction(
        seconds=probe.predicted_seconds,
        log_sigma=local_log_sigma(probe, run_log_sigma),
        measured=True,
        kernel_path=f"measured on this device ({probe.device.precision})",
        steps=(f"measured by a probe on this device: {probe.predicted_seconds:.4g} s",),
    )


def _excluded(reason: str) -> Prediction:
    return Prediction(seconds=math.inf, log_sigma=0.0, fits=False, reason=reason)


def _probe_precision(precision: str) -> str:
    return "fp32" if precision in ("fp32", "tf32") else "mixed"


def _target_precision(probe_precision: str) -> str:
    return "fp32" if probe_precision in ("fp32", "tf32") else "mixed"


def _percentages(shares: dict[str, float]) -> str:
    return ", ".join(f"{name} {share:.0%}" for name, share in shares.items())
