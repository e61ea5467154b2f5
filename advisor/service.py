"""The one door of the command line and the app to the engine: probes, recommendations, prices.

It opens the database, finds the stored probe (or runs one), predicts, prices and ranks; every
decision is made by the pure ``advisor.recommend.ranker``. Both interfaces call these functions
and present what they return, so the two cannot disagree. A stored probe makes a recommendation
fast: no TensorFlow is imported unless a probe has to run, and the price sources' HTTP client
only when prices are refreshed.
"""

from __future__ import annotations

import contextlib
import math
import re
import statistics
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pricing.database as database
import pricing.query as query
import pricing.spot_risk as spot_risk
import probes.device as probe_device
import probes.history as probe_history
import probes.script as user_script
import probes.spec as probe_spec
from advisor import display, store
from advisor.errors import AdvisorError, Cancelled, UsageError, did_you_mean
from advisor.estimate import llm_predict, residual
from advisor.recommend import ranker, spot
from advisor.recommend.clusters import LINEAR_SCALING_LIMIT, clusters
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.recommendation import Assumptions, Constraints, Recommendation
from advisor.workloads import llm, llm_job, zoo
from advisor.workloads.llm_job import Job, Options, job_of
from pricing.offers import Filters, OfferGroup, Rentable
from probes import reference
from probes.result import Fingerprint, ProbeResult, WorkloadConfig
from probes.spec import ProbeSpec

if TYPE_CHECKING:
    import sqlite_utils

    from pricing.query import PricePoint, SourceStatus
    from pricing.refresh import RefreshProgress, RunReport
    from probes.fitting import ProbeProgress


@dataclass(frozen=True)
class Request:
    """Everything ``advisor recommend`` was asked."""

    model: str
    """Zoo id, alias or a .keras file."""
    epochs: int | None = None
    batch_size: int | None = None
    """The batch each device computes (the zoo's by default)."""
    global_batch: int | None = None
    """A global batch held whatever the devices (a recipe that fixes it); None: the per-device
    batch times the devices."""
    samples: int | None = None
    validation_samples: int | None = None
    precision: str | None = None
    """None: the workload's default (fp32 for the zoo and a user's model, bf16 for an LLM)."""
    filters: Filters = field(default_factory=Filters)
    constraints: Constraints = field(default_factory=Constraints)
    finetune: Options = field(default_factory=Options)
    """An LLM's fine-tuning job (method, tokens or examples, sequence length, LoRA)."""
    data_bytes: float = 0.0
    """The data set each machine downloads before training (``--data``); 0: none."""
    data_from: str | None = None
    """The provider whose object store holds it (``--data-from``); None: each machine's own."""


Runner = Callable[[ProbeSpec], ProbeResult]
"""Runs a probe of a spec (the CLI's runner draws a progress bar; the app's reports to its view)."""


def _open(db: sqlite_utils.Database | None) -> sqlite_utils.Database:
    return db if db is not None else database.connect()


def job_for_request(request: Request) -> Job | None:
    """The fine-tuning job ``request`` asks for when its model is an LLM (None otherwise);
    a usage error when LLM options come with another model, or zoo sizes with an LLM."""
    given = request.finetune.given()
    if llm.find(request.model) is None:
        if not _names_a_file(request.model):
            try:
                zoo.get(request.model)
            except UsageError:
                names = [*zoo.names(), *llm.names()]
                raise UsageError(
                    f"unknown model {display.quoted(request.model)}"
                    f"{did_you_mean(request.model, names)} (see 'advisor models')"
                ) from None
        if given:
            raise UsageError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to an LLM"
                " ('advisor models' lists them), "
                f"not {display.quoted(request.model)}"
            )
        return None
    for flag, value in (
        ("--samples", request.samples),
        ("--validation-samples", request.validation_samples),
        ("--global-batch", request.global_batch),
    ):
        if value is not None:
            raise UsageError(f"{flag} is for the zoo's models; an LLM takes --tokens or --examples")
    return job_of(
        request.model, request.finetune, epochs=request.epochs,
        micro_batch=request.batch_size, precision=request.precision or "bf16",
    )  # fmt: skip


def _names_a_file(name: str) -> bool:
    """A model file's path rather than a mistyped name (``qwen2.5-7`` has a suffix too)."""
    return probe_spec.is_model_file(name) and (
        name.endswith((".keras", ".h5")) or "/" in name or Path(name).exists()
    )


def spec_of(request: Request) -> ProbeSpec:
    """What to probe for ``request`` (no TensorFlow: a zoo name, a hashed model file, or an
    LLM job's proxy: a layer or two of the model at its real width)."""
    job = job_for_request(request)
    if job is not None:
        return probe_spec.spec_for(
            llm_job.probe_name(job), samples=job.sequences, epochs=job.epochs,
            batch_size=job.micro_batch or 1,
        )  # fmt: skip
    return probe_spec.spec_for(
        request.model,
        epochs=request.epochs,
        batch_size=request.batch_size,
        samples=request.samples,
        validation_samples=request.validation_samples,
    )


def workload_config(request: Request) -> WorkloadConfig:
    return spec_of(request).config


def stored_probe(request: Request, db: sqlite_utils.Database | None = None) -> ProbeResult | None:
    """The stored probe of ``request``'s workload on this machine, or None (never probes)."""
    db = _open(db)
    return probe_history.find(db, workload_config(request), probe_device.fingerprint().key)


def probe_and_store(
    request: Request,
    *,
    db: sqlite_utils.Database | None = None,
    runner: Runner | None = None,
    progress: Callable[[ProbeProgress], None] | None = None,
    cancel: threading.Event | None = None,
) -> ProbeResult:
    """Probe ``request``'s workload here and store the result (a cancelled probe stores nothing;
    an LLM job's proxy that could not be probed is stored as a fallback, with its reason:
    ``stored_fallback``)."""
    db = _open(db)
    spec = spec_of(request)
    store.check_can_store(db, f"a probe of {spec.label}")  # before its seconds are spent
    try:
        if runner is None:
            from probes.run import probe  # TensorFlow and numpy: only when a probe runs

            result = probe(spec, progress=progress, cancel=cancel)
        else:
            result = runner(spec)
        probe_history.save(db, result)
    except Cancelled:
        raise
    except AdvisorError as exc:
        if llm_job.is_probe_name(spec.config.workload):  # ranked without it: remember why
            here = probe_device.fingerprint().key
            with contextlib.suppress(AdvisorError):  # the probe's own error says more
                probe_history.save_fallback(db, spec.config, here, str(exc))
        raise
    return result


def stored_fallback(
    request: Request, db: sqlite_utils.Database | None = None
) -> probe_history.Fallback | None:
    """Why ``request``'s LLM proxy could not be probed on this machine when it was tried, or
    None: such a job is ranked by the device model alone until ``--fresh`` probes it again."""
    here = probe_device.fingerprint().key
    return probe_history.find_fallback(_open(db), workload_config(request), here)


def fallback_note(fallback: probe_history.Fallback, again: str = "--fresh tries again") -> str:
    """Why an LLM job is ranked without its proxy's probe, as its answer says it."""
    return (
        f"the proxy could not be probed here ({fallback.reason}; tried {fallback.created_at}, "
        f"{again})"
    )


def assumptions_for(
    probe: ProbeResult,
    config: WorkloadConfig,
    data_bytes: float = 0.0,
    data_from: str | None = None,
) -> Assumptions:
    """Start-up from the probe; checkpoint cost from the model size and its optimizer, one
    saved at each epoch's end; each machine's start, set-up and ``data_bytes`` of data (from
    ``data_from``'s object store)."""
    try:
        optimizer = zoo.get(config.workload).optimizer
    except UsageError:  # a user's .keras model: assume Adam (two slots, the larger checkpoint)
        optimizer = "adam"
    checkpoint = spot.checkpoint_seconds(probe.parameters, optimizer)
    return billed(probe.startup_seconds, checkpoint, config.epochs, data_bytes, data_from)


def billed(
    startup: float, checkpoint: float, epochs: int, data_bytes: float, data_from: str | None
) -> Assumptions:
    """What a run's machines are billed for besides training: their start, set-up and data
    (``data_bytes`` from ``data_from``), a checkpoint of ``checkpoint`` seconds at each of the
    ``epochs``' ends, the framework's ``startup``, a spot machine's reacquisition."""
    return Assumptions(
        startup_seconds=startup,
        checkpoint_seconds=checkpoint,
        reacquire_seconds=spot.REACQUIRE_SECONDS,
        booting=True,
        setting_up=True,
        data_bytes=data_bytes,
        data_from=data_from,
        checkpoints=epochs,
    )


def describe_probe(probe: ProbeResult, stored: bool) -> tuple[str, ...]:
    device = probe.device
    where = device.accelerator or f"{device.cpu_model} ({device.threads} threads)"
    where += device.together
    busy = reference.busy_note(probe.contention, probe.machine_drift)
    return (
        f"{probe.step_seconds * 1000:.1f} ms per step at batch {probe.config.batch_size} on {where} "
        f"(Keras on {device.backend}), "
        f"{probe.steps_per_epoch} steps x {probe.config.epochs} epochs",
        f"model.fit here: {describe_seconds(probe.fit_seconds)} "
        f"(start-up {describe_seconds(probe.startup_seconds)} of it); "
        + (f"stored probe from {probe.created_at}" if stored else "probed just now"),
        *([f"warning: {busy}"] if busy else []),
    )


def offers_for(
    request: Request, db: sqlite_utils.Database, per_device: int | None = None
) -> list[OfferGroup]:
    """The offer groups ``request``'s filters keep, and the clusters of them it allows: a
    ``per_device`` batch grows with the devices no further than the linear scaling rule is
    known to hold, a fixed global batch gives each device one sample at least (None: the
    planner sets the batch, an LLM's)."""
    offers = query.offer_groups(db, request.filters)
    if request.global_batch:
        most: int | None = request.global_batch
    else:
        most = LINEAR_SCALING_LIMIT // per_device if per_device else None
    return offers + clusters(offers, request.constraints.max_nodes, most)


def rank(
    request: Request,
    probe: ProbeResult,
    *,
    db: sqlite_utils.Database | None = None,
    stored: bool = True,
) -> Recommendation:
    """Predict ``probe``'s workload on every matching offering and rank them (pure but for
    reading prices and imported measurements; fast, no TensorFlow)."""
    db = _open(db)
    scripted = probe.config.workload.startswith(user_script.PREFIX)
    job = None if scripted else job_for_request(request)
    if job is not None:
        return rank_job(request, job, probe, db=db)
    uncounted = scripted and probe.flops_per_sample <= 0 and probe.device.accelerator is None
    if uncounted:  # its steps' work is unknown: only CPUs like this one are predicted
        request = replace(request, filters=replace(request.filters, cpu_only=True))
    measured: list[ProbeResult] = probe_history.latest(db, probe.config.workload)
    spread = probe_history.run_log_sigma(db, probe.device.key)
    predictor = residual.predictor_for(
        probe,
        measured,
        precision=request.precision or "fp32",
        run_log_sigma=spread[0] if spread else None,
        global_batch=request.global_batch,
    )
    offers = offers_for(request, db, request.batch_size or probe.config.batch_size)
    busy = reference.busy_note(probe.contention, probe.machine_drift)
    if busy:
        warnings.warn(busy, stacklevel=2)
    rec = ranker.recommend(
        offers,
        predictor,
        query.billing_rules(db),
        workload=probe.config.workload,
        constraints=request.constraints,
        assumptions=assumptions_for(probe, probe.config, request.data_bytes, request.data_from),
        context=(*describe_probe(probe, stored), *([UNCOUNTED] if uncounted else [])),
        spot_risks=spot_risk.shipped_risks(),
    )
    return replace(rec, here_seconds=_here(probe))


def _here(probe: ProbeResult) -> float | None:
    """The probe's whole training here, where it was taken on this machine, else None."""
    if not _taken_here(probe, probe_device.fingerprint()):
        return None
    return probe.fit_seconds if math.isfinite(probe.fit_seconds) else None


def _taken_here(probe: ProbeResult, here: Fingerprint) -> bool:
    """``probe`` was taken on this machine (``here``), whatever framework it ran: a command's
    probe carries the backend it ran (PyTorch, Keras on JAX) in its device key."""
    return probe.device.key == replace(here, backend=probe.device.backend).key


UNCOUNTED = (
    "CPU machines only: the script's work per step is unknown (a loop Keras does not run); "
    "advisor.probe.plan(flops_per_sample=N) lets accelerators be predicted"
)


def rank_job(
    request: Request,
    job: Job,
    probe: ProbeResult | None = None,
    *,
    db: sqlite_utils.Database | None = None,
    note: str = "",
) -> Recommendation:
    """Rank every matching offering for an LLM fine-tuning job: the device model's absolute
    time on each (the probe, when there is one, gives the host's dispatch; ``note`` says why
    there is none), corrected by the job's probes taken on accelerators (imported from a
    workstation, say: ``llm_predict.job_residuals``)."""
    db = _open(db)
    host = probe.dispatch_seconds if probe is not None and probe.dispatch_seconds > 0 else None
    found = llm_predict.job_residuals(job, probe_history.latest(db, llm_job.probe_name(job)))
    trained = job.tune.trainable_parameters()
    assumptions = billed(
        llm_predict.startup_seconds(job), spot.checkpoint_seconds(trained, "adamw"),
        job.epochs, request.data_bytes, request.data_from,
    )  # fmt: skip
    where = "the host's dispatch measured here" if host else "host dispatch calibrated"
    if probe is not None:
        where += f"; the proxy: {describe_probe(probe, True)[0]}"
        if probe.extrapolated_from:
            where += f", {probe.extrapolated_from}"
    elif note:
        where += f"; {note}"
    for correction in found.values():
        where += f"; {correction.describe()}"
    return ranker.recommend(
        offers_for(request, db),
        llm_predict.predictor_for_job(job, host, found),
        query.billing_rules(db),
        workload=job.workload,
        constraints=request.constraints,
        assumptions=assumptions,
        context=(job.describe(), f"predicted by the device model ({where})"),
        spot_risks=spot_risk.shipped_risks(),
    )


def recommend(
    request: Request,
    *,
    db_path: Path | str | None = None,
    runner: Runner | None = None,
    fresh: bool = False,
) -> Recommendation:
    """Recommend where to train ``request.model``: the stored probe when there is one (fast, no
    TensorFlow), else a probe run here now by ``runner`` and stored."""
    db = database.connect(db_path)
    try:
        job = job_for_request(request)
    except UsageError:  # no model of the zoo, the LLMs or a file: a probed command's name?
        script = stored_script_probe(request.model, db)
        if script is None:
            raise
        return rank(request, script, db=db, stored=True)  # probed by advisor probe -- COMMAND
    probe = None if fresh else stored_probe(request, db)
    stored = probe is not None
    if job is not None:
        return _recommend_job(request, job, probe, db, runner, fresh)
    if probe is None:
        probe = probe_and_store(request, db=db, runner=runner)
    return rank(request, probe, db=db, stored=stored)


def _recommend_job(
    request: Request,
    job: Job,
    probe: ProbeResult | None,
    db: sqlite_utils.Database,
    runner: Runner | None,
    fresh: bool,
) -> Recommendation:
    """Rank an LLM job with its stored ``probe``, else with one run now; a proxy that could not
    be probed leaves the job's time to the device model, and the answer says why."""
    note = ""
    if probe is None:
        probe, note = job_probe(request, db=db, runner=runner, fresh=fresh)
    return rank_job(request, job, probe, db=db, note=note)


def job_probe(
    request: Request,
    *,
    db: sqlite_utils.Database | None = None,
    runner: Runner | None = None,
    fresh: bool = False,
    again: str = "--fresh tries again",
) -> tuple[ProbeResult | None, str]:
    """An LLM job's proxy probed here now (``runner``), or None and why it could not be: when
    last tried (its stored fallback, unless ``fresh``), or now (the error, stored as one).
    ``again`` says how to try again (the command line's ``--fresh``, the app's key)."""
    fallback = None if fresh else stored_fallback(request, db)
    if fallback is not None:
        return None, fallback_note(fallback, again)
    try:
        return probe_and_store(request, db=db, runner=runner), ""
    except Cancelled:
        raise
    except AdvisorError as exc:  # its device time is the model's: rank without it
        return None, f"the proxy could not be probed here ({exc}; stored, {again})"


# --- a user's own training command --------------------------------------------------------


def script_name(command: Sequence[str]) -> str:
    """The name a command's probe is stored under by default: its script's file name
    (``python train.py`` -> ``train``), else the program's."""
    for word in command:
        if word.endswith(".py"):
            return Path(word).stem
    return Path(command[0]).name if command else ""


SCRIPT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A command's probe name: what ``recommend --model NAME`` can type back."""


def check_script_name(name: str) -> None:
    """A usage error for a name that is not letters, digits, ``-``, ``_`` and ``.`` (at most 64),
    or that a zoo model, an LLM or a model file already answers to (it would never be found)."""
    if not SCRIPT_NAME.fullmatch(name):
        raise UsageError(
            f"a probe name is up to 64 letters, digits, -, _ and ., not {display.quoted(name)}"
            " (give one with --name)"
        )
    try:
        zoo.get(name)
        taken = True
    except UsageError:
        taken = llm.find(name) is not None or _names_a_file(name)
    if taken:
        raise UsageError(f"{display.quoted(name)} names a model advisor knows: give --name")


def typical_probe_seconds(
    db: sqlite_utils.Database | None = None, *, llm: bool = False
) -> float | None:
    """What a probe takes on this machine, the median of its recent ones (None: none yet);
    ``llm``: an LLM job's proxy's, of the recent ones of LLM jobs."""
    here = probe_device.fingerprint().key
    found = probe_history.recent_probe_seconds(_open(db), here, llm=llm)
    return statistics.median(found) if found else None


def stored_script_probe(name: str, db: sqlite_utils.Database | None = None) -> ProbeResult | None:
    """The newest probe on this machine of the training command stored as ``name``, or None
    (whatever framework the command ran: PyTorch, Keras on JAX)."""
    db = _open(db)
    here = probe_device.fingerprint()
    found = probe_history.latest(db, user_script.PREFIX + name)
    return next((p for p in found if _taken_here(p, here)), None)


def probe_script(
    command: Sequence[str],
    name: str,
    *,
    budget: float,
    epochs: int | None = None,
    samples: int | None = None,
    batch_size: int | None = None,
    db: sqlite_utils.Database | None = None,
    cancel: threading.Event | None = None,
) -> user_script.Probed:
    """Run the user's training ``command`` for at most ``budget`` seconds, read its steps and
    store what they say under ``name``; the run's sizes say where they came from."""
    check_script_name(name)
    db = _open(db)
    store.check_can_store(db, f"a probe of {name}")  # before its seconds are spent
    run = user_script.run_command(command, budget, epochs, cancel)
    user_script.check_run(run, budget)
    sizes = user_script.sizes_of(run.events, epochs=epochs, samples=samples, batch_size=batch_size)
    architecture = user_script.architecture_of(run.events.model.get("architecture"))
    result = user_script.result_of(run, name, sizes, probe_device.fingerprint(), architecture)
    probe_history.save(db, result)
    return user_script.Probed(result, sizes, user_script.observed(run.events))


# --- prices -------------------------------------------------------------------------------


def price_rows(
    filters: Filters, *, limit: int | None = None, db: sqlite_utils.Database | None = None
) -> list[Rentable]:
    """Rentable machines matching ``filters`` and their latest prices, cheapest first."""
    return query.rentable_rows(_open(db), filters, limit=limit)


def machines(name: str, db: sqlite_utils.Database | None = None) -> list[Rentable]:
    """Every rentable machine of an instance type, or else every one carrying that accelerator."""
    return query.show(_open(db), name)


def price_history(name: str, db: sqlite_utils.Database | None = None) -> list[PricePoint]:
    """Every stored price of an instance type (or of an attachable accelerator), oldest first."""
    return query.history(_open(db), name)


def source_status(
    ttl_days: float | None = None, db: sqlite_utils.Database | None = None
) -> list[SourceStatus]:
    """Each price source and cloud: last refresh, age, stale or not (TTL from the config)."""
    from advisor import config

    ttl = ttl_days if ttl_days is not None else config.load().prices_ttl_days
    return query.source_status(_open(db), ttl)


def priced_accelerators(db: sqlite_utils.Database | None = None) -> list[str]:
    """Accelerator names the price database offers."""
    return query.known_names(_open(db), "accelerator")


def refresh_prices(
    sources: list[str] | None = None,
    *,
    urls: dict[str, str] | None = None,
    progress: Callable[[RefreshProgress], None] | None = None,
    allow_shrink: bool = False,
    db: sqlite_utils.Database | None = None,
) -> list[RunReport]:
    """Fetch current prices from the public sources, under the config's URLs (overridden by
    ``urls``), download limits and deadline; a source whose new catalog would retire most of its
    prices is refused unless ``allow_shrink``."""
    from advisor import config
    from pricing import fetch, refresh

    settings = config.load()
    policy = fetch.RetryPolicy(
        deadline_seconds=settings.refresh_deadline_seconds,
        command_deadline_seconds=settings.refresh_command_deadline_seconds,
        stall_seconds=settings.refresh_stall_seconds,
        max_wait_seconds=settings.refresh_max_wait_seconds,
        max_download_bytes=int(settings.max_download_mib * fetch.MIB),
        max_body_bytes=int(settings.max_body_mib * fetch.MIB),
    )
    return refresh.refresh(
        _open(db),
        sources,
        urls={**settings.source_urls, **(urls or {})},
        progress=progress,
        policy=policy,
        allow_shrink=allow_shrink,
    )
