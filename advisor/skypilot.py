"""advisor's predicted times for SkyPilot's optimizer.

SkyPilot's optimizer assumes every task runs for one hour unless the task has a time estimator.
``time_estimator`` gives it advisor's: the stored probe of the workload (``advisor probe``),
scaled to each machine the optimizer considers, measured where a bench measured it::

    import sky
    from advisor.skypilot import time_estimator

    task = sky.Task(run="python train.py")
    task.set_resources({sky.Resources(accelerators="T4"), sky.Resources(accelerators="L4")})
    task.set_time_estimator(time_estimator("mnist_cnn", epochs=10))
    sky.optimize(sky.Dag().add(task))   # or sky.launch(task): cost = price x advisor's time

SkyPilot is imported here only for type hints; nothing else in advisor needs it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pricing.database as database
from advisor import service
from advisor.errors import AdvisorError
from advisor.estimate.prediction import Prediction, Target
from advisor.estimate.residual import predictor_for
from probes import history as probe_store

if TYPE_CHECKING:
    import sky

UNUSABLE_SECONDS = 10**9
"""What a machine the workload cannot run on (too little memory, unknown device) is said to
take: about 30 years, which no optimizer picks."""


def time_estimator(
    model: str,
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    samples: int | None = None,
    validation_samples: int | None = None,
    precision: str = "fp32",
    quantile: float = 0.5,
    db_path: Path | str | None = None,
) -> Callable[[sky.Resources], int]:
    """A ``sky.Task.set_time_estimator`` callable: seconds to train ``model`` (start-up
    included) on the machine a ``sky.Resources`` describes, at ``quantile`` of the prediction:
    the task's run, not what SkyPilot does before it (the machine's start, the task's setup: its
    image and data), nor the checkpoint saves ``advisor recommend`` bills beside the training.

    Reads the probe stored by ``advisor probe`` (or ``recommend``) for this workload and sizes on
    this machine; raises ``AdvisorError`` when there is none: probing takes TensorFlow and
    seconds, which an optimizer's callback should not.
    """
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be between 0 and 1, not {quantile}")
    request = service.Request(
        model=model,
        epochs=epochs,
        batch_size=batch_size,
        samples=samples,
        validation_samples=validation_samples,
        precision=precision,
    )
    db = database.connect(db_path)
    probe = service.stored_probe(request, db)
    if probe is None:
        raise AdvisorError(
            f"no stored probe of {model} with these sizes on this machine: run "
            f"'advisor probe --model {model}' (with the same sizes) first"
        )
    predictor = predictor_for(
        probe, probe_store.latest(db, probe.config.workload), precision=precision
    )
    machines: dict[tuple[str | None, str | None], tuple[float | None, str | None]] = {}

    def estimate(resources: sky.Resources) -> int:
        target = target_of(resources, db, machines)
        prediction: Prediction = predictor(target)
        if not prediction.fits or prediction.reason or not math.isfinite(prediction.seconds):
            return UNUSABLE_SECONDS
        return max(1, round(prediction.quantile(quantile) + probe.startup_seconds))

    return estimate


def target_of(
    resources: sky.Resources,
    db: Any,
    machines: dict[tuple[str | None, str | None], tuple[float | None, str | None]] | None = None,
) -> Target:
    """The ``Target`` a ``sky.Resources`` rents: its accelerator and count, else the vCPUs and
    CPU family of its instance type (from the price database) or its ``cpus``."""
    cloud = str(resources.cloud).lower() if resources.cloud is not None else None
    instance = resources.instance_type
    vcpus, family = _machine(db, cloud, instance, machines if machines is not None else {})
    accelerators = resources.accelerators or {}
    if accelerators:
        name, count = next(iter(accelerators.items()))
        return Target(str(name), max(1, math.ceil(float(count))), vcpus=vcpus, cpu_family=family)
    if vcpus is None and resources.cpus:
        vcpus = float(str(resources.cpus).rstrip("+"))
    if vcpus is None:
        raise ValueError(
            f"cannot tell the machine of {resources}: give it an accelerator, an instance type "
            "the price database knows, or cpus"
        )
    return Target(None, 0, vcpus=vcpus, cpu_family=family)


def _machine(
    db: Any,
    cloud: str | None,
    instance: str | None,
    machines: dict[tuple[str | None, str | None], tuple[float | None, str | None]],
) -> tuple[float | None, str | None]:
    """vCPUs and CPU family of an instance type, as the price database lists it."""
    if instance is None:
        return None, None
    key = (cloud, instance)
    if key not in machines:
        sql = "SELECT vcpus, cpu_family FROM rentables WHERE instance_type = ?"
        params = [instance]
        if cloud is not None:
            sql += " AND provider = ?"
            params.append(cloud)
        row = db.conn.execute(sql + " LIMIT 1", params).fetchone()
        machines[key] = (row[0], row[1]) if row else (None, None)
    return machines[key]
