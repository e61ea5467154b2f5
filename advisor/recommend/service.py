"""The glue: open the database, find the stored probe (or run one), predict, price, rank.

The only module of the recommender that touches storage, probes and the estimation layer; every
decision is made by the pure ``engine.recommend``. A stored probe makes this fast: no TensorFlow
is imported unless a probe has to run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pricing.database as database
import pricing.query as query
import probes.device as probe_device
import probes.run as probe_run
import probes.store as probe_store

from advisor.errors import UsageError
from advisor.estimate import measured_on, predict  # type: ignore[attr-defined, unused-ignore]
from advisor.estimate.model import Prediction, Target
from advisor.recommend import engine, spot
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.model import Assumptions, Constraints, Filters, Recommendation
from probes import zoo
from probes.result import ProbeResult, WorkloadConfig


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


def workload_config(request: Request) -> WorkloadConfig:
    return probe_run.config_for(
        request.model,
        epochs=request.epochs,
        batch_size=request.batch_size,
        samples=request.samples,
        validation_samples=request.validation_samples,
    )


def find_or_probe(
    db: Any,
    config: WorkloadConfig,
    *,
    precision: str = "fp32",
    progress: Callable[..., None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> tuple[ProbeResult, bool]:
    """The stored probe of ``config`` on this machine, else a fresh one; True when it was stored."""
    fingerprint = probe_device.fingerprint(precision=precision)
    stored = probe_store.find(db, config, fingerprint.key)
    if stored is not None:
        return stored, True
    return probe_run.probe(config, progress=progress, cancel=cancel), False


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


def recommend(
    request: Request,
    *,
    db_path: Path | str | None = None,
    progress: Callable[..., None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> Recommendation:
    """Recommend where to train ``request.model`` (runs a probe only when none is stored)."""
    config = workload_config(request)
    db = database.connect(db_path)
    probe, stored = find_or_probe(
        db, config, precision=request.precision, progress=progress, cancel=cancel
    )
    measured: list[ProbeResult] = probe_store.latest(db, config.workload)

    def predictor(target: Target) -> Prediction:
        source = measured_on(measured, target) or probe
        result: Prediction = predict(source, target, precision=request.precision)
        return result

    f = request.filters
    rentables = query.rentables(
        db,
        provider=f.provider.lower() if f.provider else None,  # the database spells them lowercase
        region=f.region.lower() if f.region else None,
        accelerator=f.accelerator,
        pricing=None if f.spot is None else ("spot" if f.spot else "on_demand"),
        cpu_only=f.cpu_only,
        max_count=f.max_accelerators,
    )
    return engine.recommend(
        rentables,
        predictor,
        query.billing_rules(db),
        workload=config.workload,
        filters=f,
        constraints=request.constraints,
        assumptions=assumptions_for(probe, config),
        context=describe_probe(probe, stored),
    )
