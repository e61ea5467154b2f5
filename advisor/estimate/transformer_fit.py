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
from typing import Any

from advisor.estimate.parameters import (
    TRANSFORMER_CALIBRATION_FILE,
    Calibration,
    read,
)
from advisor.estimate.reference import ReferenceRow, read_reference
from advisor.estimate.validate import evaluate, summarise
from advisor.locations import shipped_data_dir

FIT_FILE = "calibration-transformers.csv"
HOLDOUT_FILE = "calibration-holdout-transformers.csv"
GRID = tuple(round(0.25 * 1.1**i, 4) for i in range(45))
"""Candidate scales, 0.25 to ~16 in steps of 10%: one parameter, so a grid is exact enough."""
_HUBER_DELTA = 0.3


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


def validation(
    fitted: Sequence[ReferenceRow], held_out: Sequence[ReferenceRow], base: Calibration
) -> dict[str, Any]:
    """The fit and its in-sample, leave-one-source-out and held-out GPU-to-GPU figures."""
    full = fit(fitted, base)
    in_sample, _ = evaluate(fitted, full)
    loso = []
    per_source = {}
    for source in sorted({row.source for row in fitted}):
        others = [row for row in fitted if row.source != source]
        own = [row for row in fitted if row.source == source]
        partial = fit(others, base)
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
        "prior_scale_figures": summarise(evaluate(held_out, base)[0]),
        "in_sample": summarise(in_sample),
        "leave_one_source_out": summarise(loso),
        "leave_one_source_out_scales": per_source,
        "held_out": summarise(held),
        "held_out_by_source": by_source,
        "held_out_skipped": skipped,
    }


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
    base = replace(read(data / "calibration.json"), transformer_traffic_scale=1.0)
    report = validation(read_reference(args.reference), read_reference(args.holdout), base)
    report.update(reference=args.reference.name, holdout=args.holdout.name)
    text = json.dumps(report, indent=2, sort_keys=True) + "\n"
    if not args.check:
        args.output.write_text(text)
        print(f"wrote {args.output}")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
