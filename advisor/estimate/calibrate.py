"""Fit the model's free parameters on reference measurements: ``python -m advisor.estimate.calibrate``.

The loss is the robust (Huber) mean of log errors over every ordered pair within each source,
plus a weak pull towards the written priors, so a parameter the data cannot see stays at its
prior instead of drifting. The minimiser is a plain coordinate search in log space (no SciPy):
17 parameters and a few hundred pairs take seconds.

The spread of predictions (``log_sigma``) is measured leave-one-source-out: fit without a source,
predict its pairs, and size sigma by ``source->target`` kind so that the central 80% interval
covers 80% of those held-out errors (``spread_by_kind``), widened by the factor under which
each source's errors, sized by the other sources' spread, are covered 80% (``source_factor``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist

from advisor.estimate.parameters import CALIBRATION_FILE, FREE_PARAMETERS, PRIOR, Calibration
from advisor.estimate.parameters import to_json as calibration_json
from advisor.estimate.published import ReferenceRow, read_reference
from advisor.estimate.validate import (
    INTERVAL,
    PairResult,
    evaluate,
    percentile,
    sigma_of_kind,
    summarise,
)
from advisor.locations import shipped_data_dir

PRIOR_WEIGHT = 0.02
"""Loss of moving one parameter a factor 3 from its prior, relative to a mean log error of 1."""
_HUBER_DELTA = 0.3
_STEPS = (2.0, 1.4, 1.15, 1.05)


def loss(calibration: Calibration, rows: Sequence[ReferenceRow]) -> float:
    pairs, _ = evaluate(rows, calibration)
    if not pairs:
        return _prior_penalty(calibration)
    fit = sum(_huber(p.log_error) for p in pairs) / len(pairs)
    return fit + _prior_penalty(calibration)


def _huber(x: float) -> float:
    a = abs(x)
    return 0.5 * a * a if a <= _HUBER_DELTA else _HUBER_DELTA * (a - 0.5 * _HUBER_DELTA)


def _prior_penalty(calibration: Calibration) -> float:
    total = 0.0
    for name in FREE_PARAMETERS:
        ratio = getattr(calibration, name) / getattr(PRIOR, name)
        total += (math.log(ratio) / math.log(3)) ** 2
    return PRIOR_WEIGHT * total


def fit(rows: Sequence[ReferenceRow], start: Calibration = PRIOR) -> Calibration:
    """Coordinate search in log space from ``start``; returns the best calibration found."""
    best, best_loss = start, loss(start, rows)
    for step in _STEPS:
        improved = True
        while improved:
            improved = False
            for name in FREE_PARAMETERS:
                for factor in (step, 1 / step):
                    value = getattr(best, name) * factor
                    if name in _FRACTIONS and value > 1.0:
                        continue
                    trial = replace(best, **{name: value})
                    trial_loss = loss(trial, rows)
                    if trial_loss < best_loss - 1e-9:
                        best, best_loss, improved = trial, trial_loss, True
    moved = tuple(
        name
        for name in FREE_PARAMETERS
        if abs(math.log(getattr(best, name) / getattr(PRIOR, name))) > math.log(1.05)
    )
    return replace(best, fitted=moved)


_FRACTIONS = frozenset(
    {
        "cpu_efficiency",
        "gpu_efficiency",
        "tensor_efficiency",
        "tpu_efficiency",
        "memory_efficiency",
        "generic_build_speed",
    }
)


def leave_one_source_out(
    rows: Sequence[ReferenceRow],
) -> tuple[list[PairResult], dict[str, Calibration]]:
    """Each source's pairs predicted by a fit on the other sources only.

    The spread each source's pairs carry is measured on the other sources' held-out errors, so
    the interval coverage of these pairs is honest too."""
    sources = sorted({row.source for row in rows})
    held_out_pairs: list[PairResult] = []
    fits = {}
    for source in sources:
        training = [row for row in rows if row.source != source]
        held_out = [row for row in rows if row.source == source]
        fits[source] = fit(training)
        pairs, _ = evaluate(held_out, fits[source])
        held_out_pairs.extend(pairs)
    factor = source_factor(held_out_pairs)
    honest: list[PairResult] = []
    for source in sources:
        sigma = spread_by_kind([p for p in held_out_pairs if p.source != source], factor)
        fits[source] = replace(fits[source], log_sigma=sigma)
        honest.extend(
            replace(p, log_sigma=sigma_of_kind(sigma, p.kinds))
            for p in held_out_pairs
            if p.source == source
        )
    return honest, fits


def _nested_coverage(pairs: Sequence[PairResult], factor: float) -> float:
    """Interval coverage of each source's pairs under the spread of the other sources' errors."""
    inside = 0
    for source in {p.source for p in pairs}:
        sigma = spread_by_kind([p for p in pairs if p.source != source], factor)
        inside += sum(
            replace(p, log_sigma=sigma_of_kind(sigma, p.kinds)).inside_interval
            for p in pairs
            if p.source == source
        )
    return inside / len(pairs) if pairs else 1.0


def source_factor(pairs: Sequence[PairResult]) -> float:
    """How much wider than the spread of known sources' errors a new source's errors run.

    The smallest factor (steps of 0.05, at least 1) under which each source's held-out pairs,
    given the spread measured on the other sources, fall inside the 80% interval 80% of the
    time: sources differ (software, measuring habits) more than pairs within one source do."""
    target = INTERVAL[1] - INTERVAL[0]
    factor = 1.0
    while factor < 3.0 and _nested_coverage(pairs, factor) < target:
        factor = round(factor + 0.05, 2)
    return factor


_Z = NormalDist().inv_cdf(INTERVAL[1])
"""Half-width of the central interval validation checks, in sigmas (1.28 for 80%)."""


def spread_by_kind(pairs: Sequence[PairResult], factor: float = 1.0) -> dict[str, float]:
    """Log sigma by ``source->target`` kind, and ``all``: the 80th percentile of |log error|
    over 1.28, so the predicted 80% interval covers 80% of these errors whatever the shape of
    their tails (the 68th percentile, one sigma of a normal, undercovers heavy tails), times
    ``factor`` (``source_factor``: the extra spread of a source not seen in the fit)."""
    groups: dict[str, list[float]] = defaultdict(list)
    for pair in pairs:
        groups[pair.kinds].append(abs(pair.log_error))
        groups["all"].append(abs(pair.log_error))
    share = 100 * (INTERVAL[1] - INTERVAL[0])
    return {
        kind: round(factor * percentile(errors, share) / _Z, 4)
        for kind, errors in sorted(groups.items())
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m advisor.estimate.calibrate", description=__doc__
    )
    data = shipped_data_dir()
    parser.add_argument("--reference", type=Path, default=data / "benchmarks.csv")
    parser.add_argument("--output", type=Path, default=data / CALIBRATION_FILE)
    args = parser.parse_args(argv)
    rows = read_reference(args.reference)
    loso_pairs, _ = leave_one_source_out(rows)
    factor = source_factor(loso_pairs)
    calibration = replace(fit(rows), log_sigma=spread_by_kind(loso_pairs, factor))
    in_sample, _ = evaluate(rows, calibration)
    args.output.write_text(
        calibration_json(
            calibration,
            reference=args.reference.name,
            in_sample=summarise(in_sample),
            leave_one_source_out=summarise(loso_pairs),
            log_sigma_source_factor=factor,
        )
    )
    print(f"wrote {args.output}: fitted {', '.join(calibration.fitted) or 'nothing'}")
    print(f"in-sample: {summarise(in_sample)}")
    print(f"leave-one-source-out: {summarise(loso_pairs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
