"""Check cross-device predictions against measurements: every ordered pair within one source.

Within each ``source`` and workload, each row S is taken as the measurement and every other row T
is predicted from it; the error is that of T's own figure. Rows of workloads outside the zoo (and
of accelerators outside the catalog) are skipped and counted.
"""

from __future__ import annotations

import csv
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from advisor.errors import UsageError
from advisor.estimate import catalog, frameworks
from advisor.estimate.machine import Machine, Stack, accelerator_machine, cpu_machine
from advisor.estimate.parameters import DEFAULT_LOG_SIGMA, Calibration, sigma_of
from advisor.estimate.prediction import Prediction
from advisor.estimate.steps import WorkloadFacts, activation_bytes_of, facts_of, step_parts
from advisor.fitting.published import ReferenceRow
from advisor.workloads import zoo
from probes.exchange import METRICS


@dataclass(frozen=True)
class PairResult:
    """One prediction of row T's figure from row S's."""

    source: str
    workload: str
    source_label: str
    target_label: str
    kinds: str
    """``cpu->gpu`` and so on."""
    predicted: float
    actual: float
    order_right: bool
    """Predicted and measured agree on which of S and T is faster."""
    log_error: float
    """log(predicted time / measured time) for T (positive: predicted too slow)."""
    measured_gap: float = math.inf
    """How much slower the slower of S and T measured than the faster (0.05: 5%)."""
    log_sigma: float = DEFAULT_LOG_SIGMA
    """The spread a prediction of this kind carries (the calibration's, by kind)."""
    family: str = ""
    """The workload's family (``conv``, ``transformer`` ...)."""

    @property
    def abs_pct_error(self) -> float:
        return abs(self.predicted - self.actual) / self.actual * 100

    @property
    def inside_interval(self) -> bool:
        """The measured time lies inside the predicted central 80% interval (q 0.1 to 0.9)."""
        predicted = Prediction(seconds=math.exp(self.log_error), log_sigma=self.log_sigma)
        return predicted.quantile(INTERVAL[0]) <= 1.0 <= predicted.quantile(INTERVAL[1])


INTERVAL = (0.1, 0.9)
"""The quantiles of the interval whose coverage validation reports."""


def pair_sigma(calibration: Calibration, kinds: str, family: str) -> float:
    """The spread of one prediction of a ``source->target`` kind of a workload ``family``."""
    return sigma_of(calibration.log_sigma, kinds, family)


def machine_of_row(row: ReferenceRow, calibration: Calibration) -> Machine | None:
    """The machine a reference row measured (None when its accelerator is not in the catalog)."""
    stack = row.stack
    precision = row.precision
    if row.is_cpu:
        family = catalog.resolve_family(row.cpu_family)
        return cpu_machine(family, row.vcpus or 1, calibration, stack=stack, precision=precision)
    return accelerator_machine(row.device, 1, calibration, stack=stack, precision=precision)


MAX_PAIRS = 50_000
"""Most pairs one validation evaluates. The shipped set has 682; one source of 5,000
distinct runs would make 25 million (12 GB). Past the cap a seeded sample of ``MAX_PAIRS`` is
taken, each group in proportion to its pairs, and the report says so (``pairs_possible``)."""
PAIR_SEED = 0


def pair_indices(members: int, take: int, rng: random.Random) -> Iterable[tuple[int, int]]:
    """``take`` of the ``members * (members - 1)`` ordered pairs (all when ``take`` covers
    them), drawn without replacement, in memory proportional to ``take``."""
    count = members * (members - 1)
    chosen = range(count) if take >= count else sorted(rng.sample(range(count), take))
    for index in chosen:
        s, t = divmod(index, members - 1)
        yield s, t + (t >= s)


@dataclass(frozen=True)
class Run:
    """One measured run as pair validation sees it: its machine, its workload, its figure."""

    source: str
    workload: str
    label: str
    machine: Machine
    facts: WorkloadFacts
    batch_size: int
    seconds_per_sample: float
    row: ReferenceRow | None = None
    """The exchange row it came from, for the row's own metric (None: seconds per sample)."""
    samples: int = 1
    """Training samples per epoch (to turn a per-sample time into the row's metric)."""
    validation_share: float = 0.0
    """Forward passes of validation per training sample that the figure's time includes (a
    whole run's or an epoch's time: validation samples / training samples / 3)."""

    @property
    def kind(self) -> str:
        """``cpu`` or ``gpu`` (a TPU counts as a GPU)."""
        return "cpu" if self.machine.kind == "cpu" else "gpu"

    def modelled(self, calibration: Calibration) -> float:
        """The device model's seconds per training sample of this run, in absolute terms."""
        step = step_parts(self.facts, self.machine, self.batch_size, calibration).total
        return step / self.batch_size * (1 + self.validation_share)

    def figure(self, seconds_per_sample: float) -> float:
        if self.row is None:
            return seconds_per_sample
        return self.row.figure_from_seconds_per_sample(seconds_per_sample, self.samples)

    @property
    def value(self) -> float:
        return self.row.value if self.row is not None else self.seconds_per_sample


def evaluate(
    rows: Iterable[ReferenceRow],
    calibration: Calibration,
    *,
    max_pairs: int = MAX_PAIRS,
    stats: dict[str, int] | None = None,
) -> tuple[list[PairResult], dict[str, int]]:
    """Every ordered pair's result (a seeded sample of ``max_pairs`` when there are more; the
    counts go to ``stats``: ``pairs_possible``, ``pairs_cap``), and the skipped rows counted by
    reason."""
    runs, skipped = runs_of(rows, calibration)
    return pair_results(runs, calibration, max_pairs=max_pairs, stats=stats), skipped


def runs_of(
    rows: Iterable[ReferenceRow], calibration: Calibration
) -> tuple[list[Run], dict[str, int]]:
    """The runs the rows measured (one per run whatever its metrics), and the rows skipped,
    counted by reason."""
    skipped: dict[str, int] = defaultdict(int)
    runs: list[Run] = []
    seen: set[tuple[str, str, str, int, str]] = set()
    for row in sorted(rows, key=lambda r: METRICS.index(r.metric)):
        try:
            workload = zoo.get(row.workload)
        except UsageError:
            skipped["workload outside the zoo"] += 1
            continue
        machine = machine_of_row(row, calibration)
        if machine is None:
            skipped["accelerator not in the device catalog"] += 1
            continue
        run = (row.source, workload.id, row.label, row.batch_size, row.software)
        if run in seen:  # another metric of the same run (a probe export writes four)
            skipped["another metric of a run already counted"] += 1
            continue
        seen.add(run)
        whole = row.metric in ("seconds_total", "seconds_per_epoch")
        runs.append(
            Run(
                source=row.source,
                workload=workload.id,
                label=row.label,
                machine=machine,
                facts=row.facts(facts_of(workload)),
                batch_size=row.batch_size,
                seconds_per_sample=row.seconds_per_sample(workload.samples),
                row=row,
                samples=workload.samples,
                validation_share=(
                    workload.validation_samples / workload.samples / 3 if whole else 0.0
                ),
            )
        )
    return runs, dict(skipped)


def pair_results(
    runs: Sequence[Run],
    calibration: Calibration,
    *,
    max_pairs: int = MAX_PAIRS,
    stats: dict[str, int] | None = None,
) -> list[PairResult]:
    """Within each source and workload, every run predicts every other run's figure (a seeded
    sample of ``max_pairs`` when there are more), as ``predict`` would from a probe on the
    source: scaled by the model's ratio between two devices of one kind, the device model's
    absolute time for a device of another kind (the source's figure plays no part then)."""
    groups: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        groups[(run.source, run.workload)].append(run)
    possible = sum(len(m) * (len(m) - 1) for m in groups.values())
    if stats is not None:
        stats.update(pairs_possible=possible, pairs_cap=max_pairs)
    rng = random.Random(PAIR_SEED)
    pairs = []
    for (source, workload_id), members in groups.items():
        modelled = {id(run): run.modelled(calibration) for run in members}
        share = len(members) * (len(members) - 1)
        take = share if possible <= max_pairs else round(max_pairs * share / possible)
        for s_index, t_index in pair_indices(len(members), take, rng):
            s, t = members[s_index], members[t_index]
            measured_s, measured_t = s.seconds_per_sample, t.seconds_per_sample
            if s.kind == t.kind:
                predicted_t = measured_s * modelled[id(t)] / modelled[id(s)]
            else:
                predicted_t = modelled[id(t)]
            kinds = f"{s.machine.kind}->{t.machine.kind}"
            pairs.append(
                PairResult(
                    source=source,
                    workload=workload_id,
                    source_label=s.label,
                    target_label=t.label,
                    kinds=kinds,
                    predicted=t.figure(predicted_t),
                    actual=t.value,
                    order_right=_same_order(measured_s, predicted_t, measured_t),
                    log_error=math.log(predicted_t / measured_t),
                    measured_gap=max(measured_s, measured_t) / min(measured_s, measured_t) - 1,
                    log_sigma=pair_sigma(calibration, kinds, s.facts.family),
                    family=s.facts.family,
                )
            )
    return pairs


def _same_order(source: float, predicted: float, actual: float) -> bool:
    if math.isclose(source, actual, rel_tol=0.01):
        return True  # a tie: either order is right
    return (predicted < source) == (actual < source)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linearly interpolated; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


NEAR_TIE = 0.05
"""Measured figures closer than this are a near-tie: single published runs vary by about as much."""


def summarise(pairs: Sequence[PairResult]) -> dict[str, Any]:
    """Median and p90 absolute percentage error and order accuracy of some pairs.

    ``order_accuracy_beyond_near_ties`` is an extra figure, never the required one: the order
    accuracy over the pairs whose measured figures differ by more than ``NEAR_TIE``.
    """
    errors = [p.abs_pct_error for p in pairs]
    clear = [p for p in pairs if p.measured_gap > NEAR_TIE]
    return {
        "n_pairs": len(pairs),
        "median_abs_pct_error": _round(percentile(errors, 50)),
        "p90_abs_pct_error": _round(percentile(errors, 90)),
        "pairwise_order_accuracy": _order_accuracy(pairs),
        "order_accuracy_beyond_near_ties": _order_accuracy(clear),
        "n_pairs_beyond_near_ties": len(clear),
        "interval_coverage": _round(
            sum(p.inside_interval for p in pairs) / len(pairs) if pairs else math.nan, 4
        ),
    }


def _order_accuracy(pairs: Sequence[PairResult]) -> float | None:
    return _round(sum(p.order_right for p in pairs) / len(pairs) if pairs else math.nan, 4)


def report(pairs: Sequence[PairResult], skipped: dict[str, int]) -> dict[str, Any]:
    """The ``advisor validate --json`` document."""
    by_source: dict[str, list[PairResult]] = defaultdict(list)
    by_device: dict[str, list[PairResult]] = defaultdict(list)
    for pair in pairs:
        by_source[pair.source].append(pair)
        by_device[pair.target_label].append(pair)
    return {
        **summarise(pairs),
        "unmodelled_rows": sum(skipped.values()),
        "skipped_by_reason": skipped,
        "by_source": {name: summarise(group) for name, group in sorted(by_source.items())},
        "by_device": [
            {"device": name, **summarise(group)} for name, group in sorted(by_device.items())
        ],
    }


def _round(value: float, digits: int = 2) -> float | None:
    return None if math.isnan(value) else round(value, digits)


def read_facts_suite(runs_csv: Path, workloads_csv: Path, calibration: Calibration) -> list[Run]:
    """Runs of workloads outside the zoo, each workload's facts counted by hand in
    ``workloads_csv`` (``data/cpu-gpu-workloads.csv``), each run a published figure in
    ``runs_csv`` (``data/cpu-gpu-validation.csv``: a device, a GPU count, samples per second).
    A bad row raises a ``UsageError`` naming its file and line."""
    facts = {row["workload"]: row for row in _csv_rows(workloads_csv)}
    runs = []
    for line, row in enumerate(_csv_rows(runs_csv), start=2):
        where = f"{runs_csv.name}:{line}"
        spec = facts.get(row["workload"])
        if spec is None:
            raise UsageError(f"{where}: workload {row['workload']!r} not in {workloads_csv.name}")
        try:
            workload_facts = _facts_of_row(spec)
            machine = _machine_of(row, spec, calibration)
            batch, rate = int(row["batch_size"]), float(row["samples_per_second"])
        except (KeyError, ValueError) as error:
            raise UsageError(f"{where}: {error}") from None
        if machine is None or batch <= 0 or not rate > 0:
            raise UsageError(f"{where}: unknown device, or batch/figure not positive")
        label = machine.label if machine.kind != "cpu" else f"CPU {row['vcpus']} vCPU"
        runs.append(
            Run(row["source"], row["workload"], label, machine, workload_facts, batch, 1 / rate)
        )
    return runs


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _facts_of_row(spec: dict[str, str]) -> WorkloadFacts:
    return WorkloadFacts(
        flops_per_sample=float(spec["flops_per_sample"]),
        parameters=int(spec["parameters"]),
        family=spec["family"],
        timesteps=int(spec["timesteps"]),
        directions=int(spec["directions"]),
        optimizer=spec["optimizer"],
        activation_bytes_per_sample=activation_bytes_of(float(spec["activation_elements"])),
        winograd_share=float(spec["winograd_share"]),
        recurrent_layers=int(spec["recurrent_layers"]),
        recurrent_flops_per_step=float(spec["recurrent_flops_per_step"]),
    )


def _machine_of(
    row: dict[str, str], spec: dict[str, str], calibration: Calibration
) -> Machine | None:
    stack = Stack(framework=frameworks.from_software(row["software"]))
    precision = "mixed" if row["precision"] in ("mixed", "fp16", "bf16") else "fp32"
    if row["device"].upper() == "CPU":
        family = catalog.resolve_family(row["cpu_family"] or None)
        return cpu_machine(family, int(row["vcpus"]), calibration, stack=stack, precision=precision)
    return accelerator_machine(
        row["device"],
        int(row["count"] or 1),
        calibration,
        stack=stack,
        precision=precision,
        cudnn_eligible=spec["cudnn_rnn"] != "0",
    )
