"""Check cross-device predictions against measurements: every ordered pair within one source.

Within each ``source`` and workload, each row S is taken as the measurement and every other row T
is predicted from it; the error is that of T's own figure. Rows of workloads outside the zoo (and
of accelerators outside the catalog) are skipped and counted.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.errors import UsageError
from advisor.estimate import catalog
from advisor.estimate.machine import Machine, Stack, accelerator_machine, cpu_machine
from advisor.estimate.parameters import DEFAULT_LOG_SIGMA, Calibration
from advisor.estimate.prediction import Prediction
from advisor.estimate.reference import ReferenceRow
from advisor.estimate.steps import facts_of, step_parts
from probes import zoo
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
    """The spread of one prediction: a transformer's own between GPUs where it was measured
    (``advisor.estimate.transformer_fit``), else that of its ``source->target`` kind."""
    between_gpus = kinds.replace("->tpu", "->gpu") == "gpu->gpu"
    if family == "transformer" and between_gpus and calibration.transformer_log_sigma > 0:
        return calibration.transformer_log_sigma
    return sigma_of_kind(calibration.log_sigma, kinds)


def sigma_of_kind(log_sigma: dict[str, float], kinds: str) -> float:
    """The spread of a ``source->target`` kind (a TPU target counts as a GPU one)."""
    kinds = kinds.replace("->tpu", "->gpu")
    return log_sigma.get(kinds) or log_sigma.get("all", DEFAULT_LOG_SIGMA)


def machine_of_row(row: ReferenceRow, calibration: Calibration) -> Machine | None:
    """The machine a reference row measured (None when its accelerator is not in the catalog)."""
    stack = Stack(
        tensorflow_major=row.tensorflow_major,
        vectorised=row.vectorised,
        tf32=True if row.precision == "tf32" else None,  # NVIDIA's TF 1.15 builds had it too
    )
    precision = row.precision if row.precision in ("mixed", "fp16", "bf16") else "fp32"
    if row.is_cpu:
        family = catalog.resolve_family(row.cpu_family)
        return cpu_machine(family, row.vcpus or 1, calibration, stack=stack, precision=precision)
    return accelerator_machine(row.device, 1, calibration, stack=stack, precision=precision)


def evaluate(
    rows: Iterable[ReferenceRow], calibration: Calibration
) -> tuple[list[PairResult], dict[str, int]]:
    """Every ordered pair's result, and the skipped rows counted by reason."""
    skipped: dict[str, int] = defaultdict(int)
    groups: dict[tuple[str, str], list[tuple[ReferenceRow, Machine]]] = defaultdict(list)
    seen: set[tuple[str, str, str, int]] = set()
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
        run = (row.source, workload.id, row.label, row.batch_size)
        if run in seen:  # another metric of the same run (a probe export writes four)
            skipped["another metric of a run already counted"] += 1
            continue
        seen.add(run)
        groups[(row.source, workload.id)].append((row, machine))
    pairs = []
    for (source, workload_id), members in groups.items():
        workload = zoo.get(workload_id)
        facts = facts_of(workload)
        per_sample = {
            id(row): step_parts(facts, machine, row.batch_size, calibration).total / row.batch_size
            for row, machine in members
        }
        for s_row, s_machine in members:
            for t_row, t_machine in members:
                if s_row is t_row:
                    continue
                measured_s = s_row.seconds_per_sample(workload.samples)
                measured_t = t_row.seconds_per_sample(workload.samples)
                predicted_t = measured_s * per_sample[id(t_row)] / per_sample[id(s_row)]
                pairs.append(
                    PairResult(
                        source=source,
                        workload=workload_id,
                        source_label=s_row.label,
                        target_label=t_row.label,
                        kinds=f"{s_machine.kind}->{t_machine.kind}",
                        predicted=t_row.figure_from_seconds_per_sample(
                            predicted_t, workload.samples
                        ),
                        actual=t_row.value,
                        order_right=_same_order(measured_s, predicted_t, measured_t),
                        log_error=math.log(predicted_t / measured_t),
                        measured_gap=max(measured_s, measured_t) / min(measured_s, measured_t) - 1,
                        log_sigma=pair_sigma(
                            calibration, f"{s_machine.kind}->{t_machine.kind}", workload.family
                        ),
                    )
                )
    return pairs, dict(skipped)


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
