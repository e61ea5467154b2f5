"""Fit the model's free parameters on reference measurements: ``python -m advisor.estimate.calibrate``.

The loss is the robust (Huber) mean of log errors over every ordered pair within each source,
plus a weak pull towards the written priors, so a parameter the data cannot see stays at its
prior instead of drifting. The minimiser is a plain coordinate search in log space (no SciPy):
17 parameters and a few hundred pairs take seconds.

The spread of predictions (``log_sigma``) is measured leave-one-source-out: fit without a source,
predict its pairs, and take the 68th percentile of |log error| by ``source->target`` kind.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from advisor.estimate.parameters import CALIBRATION_FILE, FREE_PARAMETERS, PRIOR, Calibration
from advisor.estimate.parameters import to_json as calibration_json
from advisor.estimate.reference import ReferenceRow, read_reference
from advisor.estimate.validate import (
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
    honest: list[PairResult] = []
    for source in sources:
        sigma = spread_by_kind([p for p in held_out_pairs if p.source != source])
        fits[source] = replace(fits[source], log_sigma=sigma)
        honest.extend(
            replace(p, log_sigma=sigma_of_kind(sigma, p.kinds))
            for p in held_out_pairs
            if p.source == source
        )
    return honest, fits


def spread_by_kind(pairs: Sequence[PairResult]) -> dict[str, float]:
    """68th percentile of |log error| by ``source->target`` kind, and ``all``."""
    groups: dict[str, list[float]] = defaultdict(list)
    for pair in pairs:
        groups[pair.kinds].append(abs(pair.log_error))
        groups["all"].append(abs(pair.log_error))
    return {kind: round(percentile(errors, 68.27), 4) for kind, errors in sorted(groups.items())}


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
    calibration = replace(fit(rows), log_sigma=spread_by_kind(loso_pairs))
    in_sample, _ = evaluate(rows, calibration)
    args.output.write_text(
        calibration_json(
            calibration,
            reference=args.reference.name,
            in_sample=summarise(in_sample),
            leave_one_source_out=summarise(loso_pairs),
        )
    )
    print(f"wrote {args.output}: fitted {', '.join(calibration.fitted) or 'nothing'}")
    print(f"in-sample: {summarise(in_sample)}")
    print(f"leave-one-source-out: {summarise(loso_pairs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
