"""``probe()``: measure a workload's training here and predict its full training time.

Three phases, all real ``model.fit`` calls on synthetic data of the real shapes:

1. steady state: one fit over full-size arrays (shuffled, as the real run) that stops itself when
   the steady step time is known to +-2% (95%) or when what is left of the budget is just
   enough for phase 2 and the op profile; warm-up is cut where the step times become steady
   (``stats.warmup_end``), not after a fixed count;
2. epochs: eight short epochs (fewer, down to three, where tracing left the budget no room for
   eight) on a subset that keeps the real partial last batch, with a short
   validation pass, which give the validation step time and the per-epoch overhead (the mean,
   each reading's influence bounded, of every boundary read: these and those the steady fit
   crossed on the full-size arrays);
3. the prediction: epochs x (steps x step + validation steps x validation step + overhead),
   plus what the real fit pays when it drops each epoch's tf.data iterator, modelled at the
   real epoch's age (``probes.teardown``); the one-time costs inside ``fit`` (data set-up,
   tracing, the first validation pass's tracing, the last iterator's drop) are the start-up;
4. for other devices: the host's per-step dispatch (``probes.dispatch``), the kernels a step
   launches, a fixed reference kernel timed at the start, between the phases and at the end
   (``probes.reference``: did the machine's speed change meanwhile?), and the share of the
   machine's CPU time other processes took while the probe ran (was it busy throughout?).

Workloads whose one step would not fit the budget (ImageNet CNNs on a few cores) are measured at
two smaller batch sizes, as large as the budget allows at this CPU's measured speed, and the
step time is extrapolated to the real batch (``probes.scaling``); on a GPU they step their real
batch (``ASSUMED_ACCELERATOR_FLOPS``). Keras and the backend's framework (``probes.backend``)
are imported inside the functions only.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from advisor.errors import AdvisorError, Cancelled
from advisor.workloads import transformers, weights
from advisor.workloads.llm_job import is_probe_name
from probes import (
    architecture,
    backend,
    data,
    device,
    epochs,
    fitting,
    profile,
    quiet,
    reference,
    stats,
    teardown,
)
from probes.fitting import (
    Measurement,
    ProbeProgress,
    Progress,
    arrays,
    check_cancel,
    fit,
)
from probes.loading import (
    Prepared,
    parameter_count,
    prepare,
    proxy_parameter_cap,
    trained_equivalent,
)
from probes.result import Fingerprint, ProbeResult, WorkloadConfig
from probes.scaling import extrapolated_from
from probes.spec import ProbeSpec, check_model_file, config_for, spec_for
from probes.timing import StopRule, make_timer

__all__ = ["config_for", "probe", "spec_for"]

RESERVE_STEPS = math.ceil(epochs.EPOCHS * epochs.STEPS_PER_EPOCH) + profile.STEPS
"""Training steps' worth of time the steady phase leaves for what follows it: eight short
epochs (``epochs.STEPS_PER_EPOCH`` each) and the profiled steps (42)."""
BUDGET_SLACK = 0.1
"""Share of the budget a probe may run over rather than give up short epochs: what a small
model's re-tracing costs (under a second) when its steady fit used the time reserved for them
(``RESERVE_STEPS``); a model whose re-tracing would cost more gets fewer (``epochs.count``)."""
MIN_STEADY_SHARE = 0.4
"""Share of the budget the steady fit runs at least, however quickly it reaches +-2%."""
RESERVE_SECONDS = 1.5
"""Fixed time left for the validation function's tracing and the profiler's start and stop."""
DISPATCH_SECONDS = 1.0
"""Time of the short fit of a one-weight model that measures the host's per-step dispatch
(``probes.dispatch``), its build and tracing included."""
CHAIN_SECONDS = 1.5
"""Time of the short fit of a chain of tiny layers that measures the host's work per layer
(``probes.dispatch.layer_seconds``); its 24 layers take TensorFlow about a second to trace."""
HOST_SECONDS = DISPATCH_SECONDS + CHAIN_SECONDS
"""What the two host measurements after the steady fit take."""

LLM_TWO_BATCHES_BUDGET = 10.0
"""Budget below which an LLM job's proxy is stepped at one batch, not two: the second batch's
tracing and steps take 1.5-2 s on the 2-vCPU development VM, which a 5 s budget and
``LLM_PROBE_OVERRUN_SECONDS`` have no room for beside TensorFlow's import (3-4 s) and the first
tracing (2-3 s). One batch scales the whole step by the FLOP ratio (``probes.scaling``); an LLM
job's GPU predictions read only the host's dispatch."""
ASSUMED_FLOPS_PER_THREAD = 40e9
"""A cautious guess of one CPU thread's training FLOP/s, used only to decide how heavy a
workload is to probe (a step should take at most a twelfth of the budget) where the reference
kernel gave no rate."""
ASSUMED_ACCELERATOR_FLOPS = 5e12
"""A cautious training FLOP/s of any GPU of the catalog, used only to decide how heavy a workload
is to probe there: a K80 die sustains about 2e12, a T4 4e12 in fp32, newer GPUs far more. At
this rate the zoo's ImageNet CNNs step at their real batch on a GPU within the default budget
(ResNet-50's step planned at 0.3 s), where small batches are latency-bound and say nothing of
the real one: extrapolated from them, the accelerator check of 2026-11-26 put ResNet-50 on an
H200 at 60x its measured time; at the real batch its probe came within 14%."""
TRAINING_SHARE_OF_REFERENCE = 0.5
"""A cautious share of the reference kernel's FLOP rate that training reaches: Keras's
ResNet-50 trains at 0.9 of it on the 2-vCPU development VM (oneDNN, AVX-512;
``benchmarks/research/heavy_batches.py``), so a step planned at half of it takes half its time slot."""


def probe(
    spec: ProbeSpec | str,
    *,
    budget_seconds: float = 20.0,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    profile_ops: bool = True,
    thread_counts: Sequence[int] = (),
    started: float | None = None,
) -> ProbeResult:
    """Probe ``spec`` (a spec, or a zoo name with its default sizes) on this machine.

    Raises ``Cancelled`` when ``cancel`` is set or on Ctrl-C; nothing is stored either way (the
    caller stores the result with ``probes.history.save``). ``profile_ops`` adds the op-class
    split (a few profiled steps); ``thread_counts`` measures those intra-op thread counts too,
    each in a fresh process (CPU thread scaling; seconds each, so opt-in). ``started`` is the
    ``time.perf_counter()`` reading the budget counts from (a probe's own process: its start,
    TensorFlow's import included); now when None.
    """
    if isinstance(spec, str):
        spec = spec_for(spec)
    if not 0 < budget_seconds < math.inf:  # NaN and infinity too: the phases divide it
        raise AdvisorError("the probe budget must be a finite number of seconds > 0")
    backend.active()  # KERAS_BACKEND names a backend advisor probes with, or a usage error now
    check_weights_fit(spec)
    started = time.perf_counter() if started is None else started
    report = progress or (lambda _: None)
    try:
        clock = reference.cpu_clock()
        readings = [reference.reference_seconds()]
        result = _probe(spec, started, budget_seconds, report, cancel, profile_ops, readings)
        readings.append(reference.reference_seconds())
        contention = reference.contention(clock, reference.cpu_clock(), result.device.logical_cpus)
        result = replace(result, reference_seconds=tuple(readings), contention=contention)
        if thread_counts:
            result = _with_thread_scaling(spec, result, thread_counts, budget_seconds, cancel)
            result = replace(result, probe_seconds=time.perf_counter() - started)
    except KeyboardInterrupt:
        raise Cancelled("probe cancelled; nothing was stored") from None
    except Exception:
        if cancel is not None and cancel.is_set():  # an interrupted TensorFlow call
            raise Cancelled("probe cancelled; nothing was stored") from None
        raise
    report(ProbeProgress("done", 0, (), None, time.perf_counter() - started, 0.0))
    return result


def check_weights_fit(spec: ProbeSpec) -> None:
    """Refuse, before Keras is imported or anything built, a model whose weights, gradients and
    optimizer slots do not fit in the memory available now: a zoo workload by its published
    count, a user's file by the weights its layers declare (``advisor.workloads.weights``). A transformer
    is checked once built: its proxy is stepped, an 8B LLM's full weights never are."""
    if spec.workload is not None and spec.workload.transformer is not None:
        return
    if spec.workload is not None:
        declared = weights.of_workload(spec.workload.parameters, spec.workload.optimizer)
    else:
        assert spec.path is not None
        declared = check_model_file(spec.path)
    data.check_memory(
        declared.training_bytes,
        f"training {spec.label} ({declared.describe()})",
        "; refused before building it",
    )


def _probe(
    spec: ProbeSpec,
    started: float,
    budget: float,
    report: Progress,
    cancel: threading.Event | None,
    profile_ops: bool,
    readings: list[float],
) -> ProbeResult:
    """The phases of a probe; ``readings`` holds the reference kernel's first reading and gets
    one after the measurement (the last is the caller's). An LLM job's proxy skips the layer
    chain (``probes.dispatch.layer_seconds``, a second and a half): its GPU predictions read
    the host's dispatch alone (``advisor.estimate.llm_predict``)."""
    built = _build(spec, budget, report, cancel, readings)
    check_cancel(cancel)
    measured = _measure_steps(spec, built, started, budget, report, cancel)
    readings.append(reference.reference_seconds())
    from probes.dispatch import dispatch_seconds, layer_seconds

    now = time.perf_counter()
    dispatch = dispatch_seconds(started, now + _dispatch_seconds(spec, budget), report, cancel)
    per_layer = 0.0  # not measured: an LLM job's prediction reads the dispatch alone
    if not is_probe_name(spec.config.workload):
        now = time.perf_counter()
        per_layer = layer_seconds(started, now + CHAIN_SECONDS, dispatch, report, cancel)
    split: dict[str, float] = {}
    if profile_ops and measured.arrays is not None:
        split = built.framework.op_split(
            built.prepared.model, *measured.arrays, spec.config.batch_size, measured.step_seconds
        )
    return _result(spec, built, measured, started, dispatch, per_layer, split)


@dataclass(frozen=True)
class _Built:
    """A probe's model as built: the backend it trains under, this machine's fingerprint, the
    prepared model, the training FLOP/s its batches were planned at and the build's seconds."""

    framework: backend.Backend
    machine: Fingerprint
    prepared: Prepared
    rate: float
    seconds: float


def _build(
    spec: ProbeSpec,
    budget: float,
    report: Progress,
    cancel: threading.Event | None,
    readings: list[float],
) -> _Built:
    """Build ``spec``'s model at a size this machine can step within ``budget``: at the rate
    assumed of any accelerator, or at the one the reference kernel's first reading
    (``readings[0]``) allows this CPU; a model that does not fit in memory says so in a line."""
    report(ProbeProgress("build", 0, (), None, 0.0, None))
    quiet.prepare()
    import keras  # noqa: F401  (imported before the build is timed: not part of training)

    framework = backend.active()
    check_cancel(cancel)
    threads = framework.threads()
    machine = device.fingerprint(threads=threads)  # the GPU it trains on, if one is visible
    built = time.perf_counter()
    try:
        rate = (
            ASSUMED_ACCELERATOR_FLOPS
            if machine.accelerator
            else _training_rate(readings[0], threads)
        )
        prepared = prepare(spec, rate * budget / 24, _parameter_cap(spec, machine, budget))
    except Exception as exc:
        _raise_if_out_of_memory(framework, spec.label, exc)
        raise
    return _Built(framework, machine, prepared, rate, time.perf_counter() - built)


def _parameter_cap(spec: ProbeSpec, machine: Fingerprint, budget: float) -> int | None:
    """The most weights an LLM job's proxy may have here (``probes.loading.proxy_parameter_cap``):
    on a CPU they are held in this process's memory and stepped by it; on an accelerator, in
    its own memory and at its speed (None)."""
    w = spec.workload
    if machine.accelerator or w is None or w.transformer is None:
        return None
    return proxy_parameter_cap(w, budget) if w.transformer.kind == transformers.CAUSAL_LM else None


def _measure_steps(
    spec: ProbeSpec,
    built: _Built,
    started: float,
    budget: float,
    report: Progress,
    cancel: threading.Event | None,
) -> Measurement:
    """The training measured (``_measured``; at smaller batches, extrapolated, for a workload
    too heavy to step its real batch within the budget), with the waits of the iterators the
    real fit drops; a batch that does not fit in memory is refused first, and said in a line."""
    prepared, framework = built.prepared, built.framework
    config = spec.config
    specs = [*prepared.inputs, prepared.target]
    data.check_memory(
        data.training_bytes(trained_equivalent(prepared.model), specs, 0, config.batch_size),
        f"{spec.label} at batch {config.batch_size}",
    )
    heavy_batches = _heavy_batches(prepared, config, built.rate, budget)
    if is_probe_name(config.workload) and budget < LLM_TWO_BATCHES_BUDGET:
        heavy_batches = heavy_batches[-1:]  # a second batch's tracing would overrun the budget
    try:
        if heavy_batches:
            from probes.scaling import extrapolate

            # the dispatch fit and the profiler's start and stop follow: leave them their time
            fits = budget - _host_seconds(spec, budget) - RESERVE_SECONDS
            measured = extrapolate(prepared, config, started, fits, report, cancel, heavy_batches)
        else:
            measured = _measured(prepared, config, started, budget, report, cancel)
    except Exception as exc:
        _raise_if_out_of_memory(framework, spec.label, exc)
        raise
    return with_teardown(measured, config, framework.teardown_rates())


def _host_seconds(spec: ProbeSpec, budget: float) -> float:
    """What the host's measurements after the steps take: the dispatch alone for an LLM job."""
    if is_probe_name(spec.config.workload):
        return _dispatch_seconds(spec, budget)
    return HOST_SECONDS


def _dispatch_seconds(spec: ProbeSpec, budget: float) -> float:
    """The dispatch fit's time: ``DISPATCH_SECONDS``, an LLM job's a tenth of a smaller budget
    (half a second of a 0.4 ms step is a thousand steps, its lower quartile as steady)."""
    if is_probe_name(spec.config.workload):
        return min(DISPATCH_SECONDS, budget / 10)
    return DISPATCH_SECONDS


def _result(
    spec: ProbeSpec,
    built: _Built,
    measured: Measurement,
    started: float,
    dispatch: float,
    per_layer: float,
    split: dict[str, float],
) -> ProbeResult:
    """The probe's result from its measurements: the step's, the host's per-step ``dispatch``
    and ``per_layer`` work, the op classes' ``split``; the model's architecture, parameters
    and kernels counted, and the memory the probe took read now."""
    config, prepared = spec.config, built.prepared
    counted = architecture.read(prepared.model)
    layers, kernels = step_counts(prepared)
    return ProbeResult(
        config=config,
        device=built.machine,
        step_seconds=measured.step_seconds,
        step_interval=measured.step_interval,
        validation_step_seconds=measured.validation_step_seconds,
        epoch_overhead_seconds=measured.epoch_overhead_seconds,
        startup_seconds=measured.startup_seconds,
        build_seconds=built.seconds,
        teardown_seconds=measured.teardown_seconds,
        predicted_seconds=measured.predicted_seconds,
        predicted_interval=measured.predicted_interval,
        samples_per_second=config.batch_size / measured.step_seconds,
        probe_seconds=time.perf_counter() - started,
        flops_per_sample=prepared.flops_per_sample or counted.train_flops_per_sample,
        # a proxy's layers are not the model's: its facts come from the zoo, not from them
        architecture=None if prepared.proxy else counted,
        parameters=_parameters(spec, prepared),
        peak_host_bytes=data.peak_rss_bytes(),
        peak_device_bytes=built.framework.peak_device_bytes(),
        op_split=split,
        batch_scaling=measured.batch_scaling,
        extrapolated=measured.extrapolated,
        extrapolated_from=extrapolated_from(prepared, measured.batch_scaling, config.batch_size),
        device_kernels=kernels,
        dispatch_seconds=dispatch,
        layer_dispatch_seconds=per_layer,
        host_layers=layers,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _measured(
    prepared: Prepared,
    config: WorkloadConfig,
    started: float,
    budget: float,
    report: Progress,
    cancel: threading.Event | None,
) -> Measurement:
    """Steady fit, short epochs, prediction."""
    batch = config.batch_size
    x, y = arrays(prepared, config.samples, batch, seed=0)
    timer = fit(prepared.model, x, y, batch, started, started + budget, report, cancel,
                 min_seconds=budget * MIN_STEADY_SHARE, reserve_steps=RESERVE_STEPS,
                 reserve_seconds=RESERVE_SECONDS + HOST_SECONDS)  # fmt: skip
    durations = timer.stamps.durations()
    steady_steps, start = fitting.steady_steps(timer)
    steady = stats.steady_stats(steady_steps)
    step = steady.mean
    startup = traced = sum(durations[:start]) - start * step
    rows = data.row_count(x)
    if 0 < rows < config.samples:
        # arrays cut at the memory cap: the real run's set-up (a copy into tensors) grows with
        # its rows, so the set-up read at the cap is scaled to the real array size
        startup += timer.stamps.setup_seconds * (config.samples / rows - 1)
    # the first short epoch traces again (the partial batch, validation): at most what the
    # first step's tracing took; the host's measurements and the profile follow
    deadline = started + budget * (1 + BUDGET_SLACK)
    left = deadline - time.perf_counter() - HOST_SECONDS - RESERVE_SECONDS - traced
    count = epochs.count(left, step)
    phase = _epoch_phase(prepared, config, step, count, started, report, cancel)
    # every boundary read counts, the short epochs' and those the steady fit crossed on the
    # full-size arrays, each without its idle wait: the prediction adds the iterator waits at
    # the real run's ages (``with_teardown``)
    readings = [
        *phase.train_overhead_readings,
        *epochs.boundaries(timer.stamps, durations, step),
    ]
    if readings:
        phase = replace(phase, train_overhead=max(0.0, stats.bounded_mean(readings)))
    measured = _predict(config, steady, stats.drift(steady_steps), phase, startup)
    return replace(measured, arrays=(x, y))


def _epoch_phase(
    prepared: Prepared,
    config: WorkloadConfig,
    step: float,
    count: int,
    started: float,
    report: Progress,
    cancel: threading.Event | None,
) -> epochs.EpochPhase:
    """``count`` short epochs (``probes.epochs``) on a subset with the real partial batches."""
    batch = config.batch_size
    full_train = min(epochs.TRAIN_BATCHES, config.samples // batch)
    train_rows = full_train * batch + config.samples % batch
    x, y = arrays(prepared, train_rows, batch, seed=1)
    validation = None
    if config.validation_samples:
        full_val = min(epochs.VALIDATION_BATCHES, config.validation_samples // batch)
        val_rows = full_val * batch + config.validation_samples % batch
        validation = arrays(prepared, val_rows, batch, seed=2)
    report(ProbeProgress("epochs", 0, (), None, time.perf_counter() - started, None))
    timer = make_timer(StopRule(deadline=math.inf, cancel=cancel))
    prepared.model.fit(
        x, y, batch_size=batch, epochs=count, shuffle=True, verbose=0,
        validation_data=validation, callbacks=[timer],
    )  # fmt: skip
    check_cancel(cancel)
    return epochs.figures(timer.stamps, step, math.ceil(train_rows / batch))


def _predict(
    config: WorkloadConfig,
    steady: stats.SteadyStats,
    drift: float,
    phase: epochs.EpochPhase,
    startup: float,
) -> Measurement:
    """The full run from its parts; the interval widens to the drift of the step time when the
    machine's load changed during the probe."""

    def total(step: float, val_step: float, overhead: float) -> float:
        per_epoch = config.steps_per_epoch * step + config.validation_steps * val_step + overhead
        return config.epochs * per_epoch

    half = steady.half_width if math.isfinite(steady.half_width) else 0.2 * steady.mean
    half = max(half, drift * steady.mean)
    step_low, step_high = max(0.0, steady.mean - half), steady.mean + half
    spread = phase.overhead_spread / 2
    overhead = phase.train_overhead + phase.validation_overhead
    predicted = total(steady.mean, phase.validation_step, overhead)
    low = total(step_low, phase.validation_interval[0], max(0.0, overhead - spread))
    high = total(step_high, phase.validation_interval[1], overhead + spread)
    return Measurement(
        step_seconds=steady.mean,
        step_interval=(step_low, step_high),
        validation_step_seconds=phase.validation_step,
        epoch_overhead_seconds=overhead,
        startup_seconds=max(0.0, startup) + phase.first_epoch_extra,
        predicted_seconds=predicted,
        predicted_interval=(min(low, predicted), max(high, predicted)),
        batch_scaling={config.batch_size: steady.mean},
    )


def with_teardown(
    measured: Measurement, config: WorkloadConfig, rates: teardown.TeardownRates
) -> Measurement:
    """Add the waits of the iterators the real fit drops (``probes.teardown``), at the ages its
    real epochs and validation passes will have: each epoch's waits, those of every epoch but the
    last to the repeating part, the last epoch's (paid when ``fit`` returns) to the one-time
    part. The interval moves with the expected wait; how much a run's waits vary is in the
    run-to-run spread the local prediction's interval holds (``advisor.estimate.predict``)."""
    validation = config.validation_steps * measured.validation_step_seconds
    epoch = (
        config.steps_per_epoch * measured.step_seconds
        + validation
        + measured.epoch_overhead_seconds
    )
    per_epoch = rates.per_epoch(epoch, validation)
    boundaries = (config.epochs - 1) * per_epoch
    low, high = measured.predicted_interval
    return replace(
        measured,
        predicted_seconds=measured.predicted_seconds + boundaries,
        predicted_interval=(low + boundaries, high + boundaries),
        startup_seconds=measured.startup_seconds + per_epoch,
        teardown_seconds=boundaries + per_epoch,
    )


def _training_rate(reference_seconds: float, threads: int) -> float:
    """A cautious training FLOP rate of this CPU: a share of the reference kernel's measured
    rate, never below the written guess per thread."""
    measured = TRAINING_SHARE_OF_REFERENCE * reference.flops_per_second(reference_seconds)
    return max(measured, ASSUMED_FLOPS_PER_THREAD * threads)


def _heavy_batches(
    prepared: Prepared, config: WorkloadConfig, rate: float, budget: float
) -> list[int]:
    """Smaller batch sizes to measure when one step at the real batch would not fit: the
    largest that fits a twelfth of the budget at ``rate`` FLOP/s, alone for a convnet (its step
    costs the same per sample from batch 2 to 32 within 10%, ``benchmarks/research/heavy_batches.py``,
    and each batch size is traced anew, seconds of the budget), with half of it for a
    transformer's proxy (whose per-step cost, the optimizer's pass, scales apart). A proxy is
    always measured this way, to be scaled to the real model: a ResNet's at its real batch when
    that fits."""
    affordable = budget / 12
    flops = prepared.stepped_flops_per_sample  # a proxy's, when the real model is scaled down
    fits = flops * config.batch_size / rate <= affordable
    if fits and not prepared.proxy:
        return []
    transformer = bool(prepared.proxy) and not prepared.stages
    if fits and not transformer:
        return [config.batch_size]
    largest = 1
    while largest * 2 < config.batch_size and flops * largest * 2 / rate <= affordable:
        largest *= 2
    if not transformer:
        return [largest]
    return [max(1, largest // 2), largest] if largest > 1 else [1, 2]


def _with_thread_scaling(
    spec: ProbeSpec,
    result: ProbeResult,
    counts: Sequence[int],
    budget: float,
    cancel: threading.Event | None,
) -> ProbeResult:
    """Step seconds by thread count, at the largest batch actually measured (an extrapolated
    result's real batch would be far too slow to step with one thread)."""
    from probes import threads

    if "proxy" in result.extrapolated_from:  # a fresh process would step another model
        return result
    batch = max(result.batch_scaling) if result.extrapolated else spec.config.batch_size
    scaling = {result.device.threads: result.batch_scaling.get(batch, result.step_seconds)}
    name = spec.workload.id if spec.workload else str(spec.path)
    config = replace(spec.config, batch_size=batch)
    for count in sorted(set(counts) - set(scaling)):
        check_cancel(cancel)
        scaling[count] = threads.measure(name, config, count, budget=max(1.0, budget * 0.3))
    return replace(result, thread_scaling=dict(sorted(scaling.items())))


def _parameters(spec: ProbeSpec, prepared: Prepared) -> int:
    """The real model's parameters (a transformer's proxy has fewer)."""
    if prepared.proxy and spec.workload is not None:
        return spec.workload.parameters
    return parameter_count(prepared.model)


def kernels_per_step(model: Any) -> int:
    """Kernels one training step launches on an accelerator, counted from the model: the forward
    pass runs two per layer with weights (the matmul or convolution, then its bias and
    activation) and one per other layer, the backward pass about twice the forward, and the
    optimizer one fused update per trainable variable. A count for a floor, not a profile: XLA
    fusion can only lower it, so the floor stays a floor."""
    return 3 * _forward_kernels(_called_layers(model)) + len(model.trainable_variables)


def _forward_kernels(layers: Iterable[Any]) -> int:
    """Forward kernels of ``layers``: two a layer with weights, one for the others."""
    return sum(2 if layer.weights else 1 for layer in layers)


def step_counts(prepared: Prepared) -> tuple[int, int]:
    """The layers the host calls and the kernels a step launches, of the real workload: the
    stepped model's, and for a proxy one of its blocks once more for each block of the real
    model it leaves out (``_left_out``)."""
    called = list(_called_layers(prepared.model))
    layers, kernels = len(called), kernels_per_step(prepared.model)
    for block, missing in _left_out(prepared, called):
        trained = sum(len(layer.trainable_variables) for layer in block)
        layers += missing * len(block)
        kernels += missing * (3 * _forward_kernels(block) + trained)
    return layers, kernels


def _left_out(prepared: Prepared, called: list[Any]) -> list[tuple[list[Any], int]]:
    """The blocks a proxy leaves out, as a block it steps and how many more the real model runs:
    a transformer's last block (every block runs the same layers, from one attention layer to
    the next); each ResNet stage's last bottleneck block, its shortcut projection aside (the
    blocks after a stage's first add their input unprojected)."""
    if prepared.stages:
        return [_stage_block(called, index, real) for index, real in enumerate(prepared.stages)]
    starts = [i for i, layer in enumerate(called) if type(layer).__name__ in _ATTENTION_LAYERS]
    missing = prepared.blocks - len(starts)
    if missing <= 0 or len(starts) < 2:
        return []
    return [(called[starts[-2] : starts[-1]], missing)]


def _stage_block(called: list[Any], index: int, real: int) -> tuple[list[Any], int]:
    """Stage ``index``'s last block as ``keras.applications`` names its layers
    (``conv4_block12_2_conv``; ``_0_`` the shortcut's), and the blocks the proxy leaves out."""
    stage = f"conv{index + 2}_block"
    numbers = [int(layer.name[len(stage) :].split("_")[0]) for layer in called
               if layer.name.startswith(stage)]  # fmt: skip
    last = f"{stage}{max(numbers)}_"
    block = [layer for layer in called
             if layer.name.startswith(last) and not layer.name[len(last) :].startswith("0_")]  # fmt: skip
    return block, real - max(numbers)


_ATTENTION_LAYERS = frozenset({"MultiHeadAttention", "GroupQueryAttention"})
"""The layer each transformer block holds one of (``probes.transformer_layers``)."""


def host_layers(model: Any) -> int:
    """Layers the host calls in a training step (``probes.dispatch.layer_seconds`` prices
    each)."""
    return sum(1 for _ in _called_layers(model))


def _called_layers(model: Any) -> Iterator[Any]:
    """Every layer a step calls: the model's and those of the models nested in it, their
    inputs aside."""
    for layer in model.layers:
        if hasattr(layer, "layers"):
            yield from _called_layers(layer)
        elif type(layer).__name__ != "InputLayer":
            yield layer


def _raise_if_out_of_memory(framework: backend.Backend, label: str, exc: Exception) -> None:
    """One line for a model or batch that does not fit, whatever the backend calls it."""
    if framework.out_of_memory(exc):
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise AdvisorError(f"{label} does not fit in memory: {first}") from None
