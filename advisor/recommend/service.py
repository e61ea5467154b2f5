"""The glue: open the database, find the stored probe (or run one), predict, price, rank.

The only module of the recommender that touches storage, probes and the estimation layer; every
decision is made by the pure ``engine.recommend``. A stored probe makes this fast: no TensorFlow
is imported unless a probe has to run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pricing.database as database
import pricing.query as query
import probes.device as probe_device
import probes.spec as probe_spec
import probes.store as probe_store
from advisor.errors import UsageError
from advisor.estimate import residual
from advisor.recommend import engine, spot
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.model import Assumptions, Constraints, Filters, Recommendation
from probes import zoo
from probes.result import ProbeResult, WorkloadConfig
from probes.spec import ProbeSpec


@dataclass(frozen=True)
class Request:
    """Everything ``advisor recommend`` was asked."""

    model: str
    """Zoo id, alias or a .keras file."""
    epochs: int | None = None
    batch_size: int | None = None
    samples: int | None = None
    validation_samples: int | None = None
    precision: str = "fp32"
    filters: Filters = field(default_factory=Filters)
    constraints: Constraints = field(default_factory=Constraints)


Runner = Callable[[ProbeSpec], ProbeResult]
"""Runs a probe of a spec (the CLI's runner draws a progress bar; the app's reports to its view)."""


def spec_of(request: Request) -> ProbeSpec:
    """What to probe for ``request`` (no TensorFlow: a zoo name or a hashed model file)."""
    return probe_spec.spec_for(
        request.model,
        epochs=request.epochs,
        batch_size=request.batch_size,
        samples=request.samples,
        validation_samples=request.validation_samples,
    )


def workload_config(request: Request) -> WorkloadConfig:
    return spec_of(request).config


def stored_probe(request: Request, db: Any = None) -> ProbeResult | None:
    """The stored probe of ``request``'s workload on this machine, or None (never probes)."""
    db = db if db is not None else database.connect()
    return probe_store.find(db, workload_config(request), probe_device.fingerprint().key)


def probe_and_store(
    request: Request,
    *,
    db: Any = None,
    runner: Runner | None = None,
    progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
) -> ProbeResult:
    """Probe ``request``'s workload here and store the result (a cancelled probe stores nothing)."""
    db = db if db is not None else database.connect()
    spec = spec_of(request)
    if runner is None:
        from probes.run import probe  # TensorFlow and numpy: only when a probe runs

        result = probe(spec, progress=progress, cancel=cancel)
    else:
        result = runner(spec)
    probe_store.save(db, result)
    return result


def assumptions_for(probe: ProbeResult, config: WorkloadConfig) -> Assumptions:
    """Start-up from the probe; checkpoint cost from the model size and its optimizer."""
    try:
        optimizer = zoo.get(config.workload).optimizer
    except UsageError:  # a user's .keras model: assume Adam (two slots, the larger checkpoint)
        optimizer = "adam"
    return Assumptions(
        startup_seconds=probe.startup_seconds,
        checkpoint_seconds=spot.checkpoint_seconds(probe.parameters, optimizer),
        reacquire_seconds=spot.REACQUIRE_SECONDS,
    )


def describe_probe(probe: ProbeResult, stored: bool) -> tuple[str, ...]:
    device = probe.device
    where = device.accelerator or f"{device.cpu_model} ({device.threads} threads)"
    return (
        f"{probe.step_seconds * 1000:.1f} ms per step at batch {probe.config.batch_size} on {where}, "
        f"{probe.config.steps_per_epoch} steps x {probe.config.epochs} epochs",
        f"full training here: {describe_seconds(probe.predicted_seconds)} "
        f"(start-up {describe_seconds(probe.startup_seconds)}); "
        + (f"stored probe from {probe.created_at}" if stored else "probed just now"),
    )


def rank(
    request: Request, probe: ProbeResult, *, db: Any = None, stored: bool = True
) -> Recommendation:
    """Predict ``probe``'s workload on every matching offering and rank them (pure but for
    reading prices and imported measurements; fast, no TensorFlow)."""
    db = db if db is not None else database.connect()
    measured: list[ProbeResult] = probe_store.latest(db, probe.config.workload)
    predictor = residual.predictor_for(probe, measured, precision=request.precision)
    f = request.filters
    offers = query.offer_groups(
        db,
        query.Filters(
            provider=f.provider,
            region=f.region,
            accelerator=f.accelerator,
            pricing=None if f.spot is None else ("spot" if f.spot else "on_demand"),
            cpu_only=f.cpu_only,
            max_count=f.max_accelerators,
        ),
    )
    return engine.recommend(
        offers,
        predictor,
        query.billing_rules(db),
        workload=probe.config.workload,
        filters=f,
        constraints=request.constraints,
        assumptions=assumptions_for(probe, probe.config),
        context=describe_probe(probe, stored),
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
    probe = None if fresh else stored_probe(request, db)
    stored = probe is not None
    if probe is None:
        probe = probe_and_store(request, db=db, runner=runner)
    return rank(request, probe, db=db, stored=stored)
