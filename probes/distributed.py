"""A data-parallel probe: one zoo workload trained over every device of this machine, and over
several machines, one process each (``advisor probe --data-parallel``; ``advisor bench --gpus
A100:8 --nodes 2`` runs it on every node of the cluster it rents).

Keras 3's distribution API (``keras.distribution.DataParallel``, implemented for JAX only) keeps
a replica of the model on every device, splits each global batch between them and all-reduces
the gradients of every step. Each process feeds its own shard of the data (the way SkyPilot's
nodes, torchrun's or ``jax.distributed``'s processes each read theirs): a ``fit`` step here
takes the per-device batch times this machine's devices, so the global batch is the per-device
batch times every device, and an epoch of the job's samples takes that many times fewer steps,
as ``advisor recommend`` predicts a data-parallel job (weak scaling).

A collective waits for every process, so every process must take the same steps: the probe
cannot stop itself, as a one-device probe does, when its own clock says the step is known. It
trains in rounds of 1, 2, 4, ... epochs of a pool of ``POOL_STEPS`` batches, each epoch shuffled
and closed by a validation pass of ``VALIDATION_STEPS`` batches as a real run's; from the
second round on, process 0 decides after each whether another fits the budget, and its
decision reaches every process (``broadcast_one_to_all``). The last round gives the steady step (its
steps after the warm-up, each epoch's first step, which carries the boundary, left out) and, as
a one-device probe's short epochs do (``probes.epochs.figures``), the validation step and the
per-epoch overheads; the first round, beyond an epoch at that pace, is the start-up (tracing
and compiling both steps).

What it leaves out beside a one-device probe (``probes.run``): the host's dispatch, the op split
and thread scaling. Its result stands for its own offering
(``advisor.estimate.measured.is_same_device``), never corrects another
(``advisor.estimate.residual``).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from advisor.errors import UsageError
from advisor.workloads.llm_job import is_probe_name
from probes import backend, data, device, epochs, quiet, stats
from probes.fitting import arrays
from probes.loading import Prepared, parameter_count, prepare_whole
from probes.result import Fingerprint, ProbeResult
from probes.spec import ProbeSpec
from probes.timing import make_timer

POOL_STEPS = 4
"""Batches of synthetic data each process holds; an epoch of a round steps through them all."""
MAX_ROUNDS = 8
"""Rounds at most: 1, 2, ..., 128 epochs of the pool, 255 epochs in all."""
VALIDATION_STEPS = 4
_ADDRESS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}:[0-9]{1,5}$")
"""``--coordinator``: a host name or IPv4 address and a port, nothing a shell or URL could add."""


@dataclass(frozen=True)
class Layout:
    """The processes of a data-parallel probe: one per node, each over its node's devices."""

    nodes: int = 1
    rank: int = 0
    """This process's place among them (0: the one that decides and reports)."""
    coordinator: str = ""
    """``host:port`` of process 0, where the others join it; needed when ``nodes`` > 1."""

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= 1024:
            raise UsageError(f"--nodes must be 1-1024, got {self.nodes}")
        if not 0 <= self.rank < self.nodes:
            raise UsageError(f"--node-rank must be 0-{self.nodes - 1}, got {self.rank}")
        if self.nodes > 1 and not _ADDRESS.match(self.coordinator):
            raise UsageError(
                "--coordinator must be HOST:PORT of the rank-0 node when --nodes is above 1, "
                f"got {self.coordinator[:60]!r}"
            )


def check_backend() -> None:
    """Refuse, before anything is imported, a backend Keras cannot distribute."""
    if backend.requested() != "jax":
        raise UsageError(
            "a data-parallel probe trains through Keras's distribution API, which runs on JAX "
            "only: add --backend jax"
        )


def probe(spec: ProbeSpec, layout: Layout, *, budget_seconds: float = 20.0) -> ProbeResult:
    """Train ``spec``'s zoo workload data parallel over every device of every process of
    ``layout`` for about ``budget_seconds`` (its first two rounds whatever the budget), and predict
    the full training over them."""
    started = time.perf_counter()
    check_backend()
    if spec.workload is None or is_probe_name(spec.config.workload):
        raise UsageError("a data-parallel probe measures zoo workloads (see 'advisor models')")
    quiet.prepare()
    with _stdout_to_stderr():
        local, everywhere = join(layout)
        if everywhere == 1:
            raise UsageError(
                "one device here: a data-parallel probe trains over several (drop --data-parallel)"
            )
        prepared = prepare_whole(spec)
        batch = spec.config.batch_size * local
        x, y = arrays(prepared, POOL_STEPS * batch, batch, seed=layout.rank)
        validation = None
        if spec.config.validation_samples:
            validation = arrays(prepared, VALIDATION_STEPS * batch, batch, seed=10 + layout.rank)
        rounds = _rounds(prepared, x, y, validation, batch, started + budget_seconds)
    machine = replace(
        device.fingerprint(threads=backend.active().threads()),
        devices=everywhere,
        nodes=layout.nodes,
    )
    return _result(spec, prepared, machine, rounds, started)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 sent to 2 for the block: gloo's C++ says its connections on standard
    output, where ``advisor probe --json`` writes its one JSON document."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def join(layout: Layout) -> tuple[int, int]:
    """Join the other processes (when there are any) and train data parallel over every
    device from now on; this process's devices and every process's. A benchmark's real run
    joins the same way (``benchmarks/data_parallel.py``)."""
    import jax

    if layout.nodes > 1:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU nodes: gloo
    import keras

    if layout.nodes > 1:
        with backend.stderr_silenced():  # it loads TensorFlow, whose C++ start-up logs
            keras.distribution.initialize(layout.coordinator, layout.nodes, layout.rank)
    distribution = keras.distribution.DataParallel(devices=jax.devices())
    distribution.auto_shard_dataset = False  # each process's arrays are its own shard
    keras.distribution.set_distribution(distribution)
    return jax.local_device_count(), jax.device_count()


@dataclass(frozen=True)
class _Rounds:
    """What the rounds measured."""

    steady: list[float]
    """The last round's steady steps (seconds)."""
    phase: epochs.EpochPhase
    """The last round's epochs in figures: the validation step, the per-epoch overheads."""
    first_seconds: float
    """The first round's ``fit`` (one epoch, its tracing and compiling)."""

    @property
    def step(self) -> float:
        return statistics.fmean(self.steady)

    def epoch_seconds(self, steps: int, validation_steps: int) -> float:
        """One epoch of ``steps`` training and ``validation_steps`` validation steps."""
        e = self.phase
        overhead = e.train_overhead + (e.validation_overhead if validation_steps else 0.0)
        return steps * self.step + validation_steps * e.validation_step + overhead

    @property
    def startup(self) -> float:
        """What the first round took beyond an epoch of the pool: tracing, compiling."""
        pool = self.epoch_seconds(POOL_STEPS, VALIDATION_STEPS if self.phase.validation_step else 0)
        return max(0.0, self.first_seconds - pool)


def _rounds(
    prepared: Prepared, x: Any, y: Any, validation: Any, batch: int, deadline: float
) -> _Rounds:
    """Rounds of 1, 2, 4, ... epochs of the pool, as a real run's epochs (shuffled, with its
    validation pass): at least two, more while process 0 sees time for the next."""
    first = 0.0
    for round_index in range(MAX_ROUNDS):
        timer = make_timer(None)
        began = time.perf_counter()
        prepared.model.fit(x, y, batch_size=batch, epochs=2**round_index, shuffle=True,
                           validation_data=validation, verbose=0, callbacks=[timer])  # fmt: skip
        took = time.perf_counter() - began
        first = first or took
        go_on = round_index == 0 or time.perf_counter() + 2 * took < deadline
        if not _agreed(go_on):
            break
    durations = timer.stamps.durations()
    start = stats.warmup_end(durations) or 1
    steady = timer.stamps.steady_durations(start) or durations[-1:]
    phase = epochs.figures(timer.stamps, statistics.fmean(steady), POOL_STEPS)
    return _Rounds(steady, phase, first)


def _agreed(go_on: bool) -> bool:
    """Process 0's ``go_on``, the same in every process."""
    import numpy as np
    from jax.experimental import multihost_utils

    return bool(multihost_utils.broadcast_one_to_all(np.int32(go_on)))


def _result(
    spec: ProbeSpec,
    prepared: Prepared,
    machine: Fingerprint,
    rounds: _Rounds,
    started: float,
) -> ProbeResult:
    """The probe's result: the full training at the global batch, every device's; the step's
    95% interval, or the range of its steps where they were too few for one."""
    c = spec.config
    steady = stats.steady_stats(rounds.steady)
    global_batch = c.batch_size * machine.devices
    steps = -(-c.samples // global_batch)
    validation_steps = -(-c.validation_samples // global_batch)
    epoch = rounds.epoch_seconds(steps, validation_steps)
    low, high = steady.interval
    if not math.isfinite(high) or low <= 0:
        low, high = min(rounds.steady), max(rounds.steady)
    ratio = (low / steady.mean, high / steady.mean)
    predicted = c.epochs * epoch
    return ProbeResult(
        config=c,
        device=machine,
        step_seconds=steady.mean,
        step_interval=(steady.mean * ratio[0], steady.mean * ratio[1]),
        validation_step_seconds=rounds.phase.validation_step,
        epoch_overhead_seconds=rounds.phase.train_overhead + rounds.phase.validation_overhead,
        startup_seconds=rounds.startup,
        predicted_seconds=predicted,
        predicted_interval=(predicted * ratio[0], predicted * ratio[1]),
        samples_per_second=global_batch / steady.mean,
        probe_seconds=time.perf_counter() - started,
        flops_per_sample=prepared.flops_per_sample,
        parameters=parameter_count(prepared.model),
        peak_host_bytes=data.peak_rss_bytes(),
        peak_device_bytes=backend.active().peak_device_bytes(),
        batch_scaling={c.batch_size: steady.mean},
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
