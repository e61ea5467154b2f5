"""Fit and validate the transformer path on published GPU measurements:
``python -m advisor.estimate.transformer_fit``.

Kept apart from ``advisor.estimate.calibrate`` (the seed benchmarks' fit): it moves one parameter
only, ``transformer_traffic_scale`` (how much of a transformer's step is memory traffic rather
than matmuls), with every other parameter at the shipped calibration, and writes it to
``data/calibration-transformers.json``. The fit reads ``data/calibration-transformers.csv``
(lambdal/deeplearning-benchmark, BERT-base and BERT-large SQuAD fine-tuning on 16 GPUs, two
campaigns); ``data/calibration-holdout-transformers.csv`` (NVIDIA DeepLearningExamples' BERT-large
tables, PyTorch and TensorFlow 2) is never fitted and is reported as the held-out figure.

Reported, GPU-to-GPU within each source: in-sample (fit on all fitted sources), leave-one-source-
out (each fitted source predicted by a fit on the others) and held-out (the hold-out sources
predicted by the full fit).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

from advisor.estimate.parameters import (
    TRANSFORMER_CALIBRATION_FILE,
    Calibration,
    read,
)
from advisor.estimate.published import ReferenceRow, read_reference
from advisor.estimate.validate import INTERVAL, evaluate, percentile, summarise
from advisor.locations import shipped_data_dir

FIT_FILE = "calibration-transformers.csv"
HOLDOUT_FILE = "calibration-holdout-transformers.csv"
GRID = tuple(round(0.25 * 1.1**i, 4) for i in range(45))
"""Candidate scales, 0.25 to ~16 in steps of 10%: one parameter, so a grid is exact enough."""
_HUBER_DELTA = 0.3
DEFAULT_SOURCE_FACTOR = 1.3
"""Used when ``calibration.json`` does not give its ``log_sigma_source_factor``."""
_Z = NormalDist().inv_cdf(INTERVAL[1])


def loss(calibration: Calibration, rows: Sequence[ReferenceRow]) -> float:
    """Robust (Huber) mean of the log errors of every ordered pair within each source."""
    pairs, _ = evaluate(rows, calibration)
    if not pairs:
        return math.inf
    return sum(_huber(p.log_error) for p in pairs) / len(pairs)


def _huber(x: float) -> float:
    a = abs(x)
    return 0.5 * a * a if a <= _HUBER_DELTA else _HUBER_DELTA * (a - 0.5 * _HUBER_DELTA)


def fit(rows: Sequence[ReferenceRow], base: Calibration) -> Calibration:
    """``base`` with the transformer traffic scale that fits ``rows`` best."""
    best = min(GRID, key=lambda scale: loss(replace(base, transformer_traffic_scale=scale), rows))
    return replace(base, transformer_traffic_scale=best)


def with_spread(
    calibration: Calibration, rows: Sequence[ReferenceRow], factor: float
) -> Calibration:
    """``calibration`` with the transformer spread its own pairs measure: the 80th percentile of
    |log error| over 1.28 (the 80% interval covers 80% of them), times ``factor``, the extra
    spread of a source the fit has not seen (``log_sigma_source_factor`` of the main calibration,
    measured across the seed sources; two Lambda campaigns are too few to measure it)."""
    pairs, _ = evaluate(rows, calibration)
    errors = [abs(p.log_error) for p in pairs]
    sigma = factor * percentile(errors, 100 * (INTERVAL[1] - INTERVAL[0])) / _Z
    return replace(calibration, transformer_log_sigma=round(sigma, 4))


def validation(
    fitted: Sequence[ReferenceRow],
    held_out: Sequence[ReferenceRow],
    base: Calibration,
    factor: float = DEFAULT_SOURCE_FACTOR,
) -> dict[str, Any]:
    """The fit and its in-sample, leave-one-source-out and held-out GPU-to-GPU figures."""
    full = with_spread(fit(fitted, base), fitted, factor)
    in_sample, _ = evaluate(fitted, full)
    loso = []
    per_source = {}
    for source in sorted({row.source for row in fitted}):
        others = [row for row in fitted if row.source != source]
        own = [row for row in fitted if row.source == source]
        partial = with_spread(fit(others, base), others, factor)
        pairs, _ = evaluate(own, partial)
        loso.extend(pairs)
        per_source[source] = partial.transformer_traffic_scale
    held, skipped = evaluate(held_out, full)
    by_source = {
        source: summarise([p for p in held if p.source == source])
        for source in sorted({p.source for p in held})
    }
    return {
        "transformer_traffic_scale": full.transformer_traffic_scale,
        "transformer_log_sigma": full.transformer_log_sigma,
        "log_sigma_source_factor": factor,
        "prior_scale_figures": summarise(evaluate(held_out, base)[0]),
        "in_sample": summarise(in_sample),
        "leave_one_source_out": summarise(loso),
        "leave_one_source_out_scales": per_source,
        "held_out": summarise(held),
        "held_out_by_source": by_source,
        "held_out_skipped": skipped,
    }


def base_calibration() -> tuple[Calibration, float]:
    """The shipped main calibration without any transformer fit, and its source factor."""
    path = shipped_data_dir() / "calibration.json"
    base = replace(read(path), transformer_traffic_scale=1.0, transformer_log_sigma=0.0)
    factor = json.loads(path.read_text()).get("log_sigma_source_factor", DEFAULT_SOURCE_FACTOR)
    return base, float(factor)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m advisor.estimate.transformer_fit", description=__doc__
    )
    data = shipped_data_dir()
    parser.add_argument("--reference", type=Path, default=data / FIT_FILE)
    parser.add_argument("--holdout", type=Path, default=data / HOLDOUT_FILE)
    parser.add_argument("--output", type=Path, default=data / TRANSFORMER_CALIBRATION_FILE)
    parser.add_argument("--check", action="store_true", help="Report only; write nothing.")
    args = parser.parse_args(argv)
    base, factor = base_calibration()
    report = validation(read_reference(args.reference), read_reference(args.holdout), base, factor)
    report.update(reference=args.reference.name, holdout=args.holdout.name)
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if not args.check:
        args.output.write_text(text)
        print(f"wrote {args.output}")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
