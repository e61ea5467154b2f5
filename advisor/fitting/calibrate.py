"""Fit the device model on published absolute measurements: ``python -m advisor.fitting.calibrate``.

Every fitted row is predicted in absolute terms (its device, batch, precision and software; no
ratio to another row) and the loss is the robust (Huber) mean of the log errors, each source
weighted by the square root of its rows (a campaign of 50 rows must not drown one of 5), plus a
weak pull towards the written priors so that a parameter the data cannot see stays at its prior.
The minimiser is a plain coordinate search in log space (no SciPy); fractions of a peak stay at
or below 1, so no fitted kernel runs faster than its datasheet allows.

Figures are reported three ways: in-sample, leave-one-source-out (each source predicted by a fit
on the others) and held out (``data/calibration-holdout-*.csv``, never fitted). The spread of
predictions (``log_sigma``) is sized on the leave-one-source-out errors so that the central 80%
interval covers 80% of them: absolute errors for predictions across kinds (``cpu->gpu``: a CPU
probe, a GPU target), pair errors for predictions within a kind (``cpu->cpu``), each widened by
the factor under which each source's errors, sized by the other sources' spread, are covered
80% (``source_factor``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

from advisor.estimate.parameters import (
    CALIBRATION_FILE,
    FREE_PARAMETERS,
    PRIOR,
    Calibration,
    across_kinds,
    sigma_of,
)
from advisor.estimate.parameters import to_json as calibration_json
from advisor.fitting.absolute import RowResult, absolute_results, by, summarise_rows
from advisor.fitting.published import ReferenceRow, read_reference
from advisor.fitting.search import coordinate_search
from advisor.fitting.validate import (
    INTERVAL,
    PairResult,
    pair_results,
    percentile,
    runs_of,
    summarise,
)
from advisor.locations import shipped_data_dir

FIT_FILES = ("benchmarks.csv", "calibration-lambda-pytorch.csv", "calibration-nvidia-dle.csv")
"""The published measurements the model is fitted on (``data/``)."""
HOLDOUT_PATTERN = "calibration-holdout-*.csv"
"""Published measurements never fitted: reported as held-out figures."""
PRIOR_WEIGHT = 0.005
"""Loss of moving one parameter a factor 3 from its prior, relative to a mean log error of 1."""
MIN_FAMILY_ROWS = 8
"""Rows of one workload family below which it takes its kind's spread, not its own."""
_HUBER_DELTA = 0.3
_FRACTIONS = frozenset(
    {
        "cpu_efficiency",
        "gpu_efficiency",
        "tensor_efficiency",
        "gemm_efficiency",
        "tpu_efficiency",
        "memory_efficiency",
        "cpu_memory_efficiency",
        "generic_build_speed",
        "kernel_overlap",
    }
)


def read_rows(files: Sequence[Path]) -> list[ReferenceRow]:
    return [row for path in files for row in read_reference(path)]


def row_errors(calibration: Calibration, rows: Sequence[ReferenceRow]) -> list[RowResult]:
    """Every row predicted in absolute terms under ``calibration``."""
    runs, _ = runs_of(rows, calibration)
    return absolute_results(runs, calibration)


def loss(calibration: Calibration, rows: Sequence[ReferenceRow]) -> float:
    by_source: dict[str, list[float]] = defaultdict(list)
    for result in row_errors(calibration, rows):
        by_source[result.source].append(_huber(result.log_error))
    if not by_source:
        return _prior_penalty(calibration)
    weights = {source: math.sqrt(len(errors)) for source, errors in by_source.items()}
    fit = sum(weights[s] * sum(e) / len(e) for s, e in by_source.items()) / sum(weights.values())
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
    best = coordinate_search(
        start,
        FREE_PARAMETERS,
        lambda calibration: loss(calibration, rows),
        lambda name: 1.0 if name in _FRACTIONS else math.inf,
    )
    moved = tuple(
        name
        for name in FREE_PARAMETERS
        if abs(math.log(getattr(best, name) / getattr(PRIOR, name))) > math.log(1.05)
    )
    return replace(best, fitted=moved, measured_devices=measured_devices(rows))


def measured_devices(rows: Sequence[ReferenceRow]) -> tuple[str, ...]:
    """The accelerators and CPU families the rows ran on."""
    names = {row.cpu_family if row.is_cpu else row.device for row in rows}
    return tuple(sorted(name for name in names if name))


def lab(source: str) -> str:
    """The publisher of a source, its first two words (``lambda-dlbench`` for every campaign of
    Lambda's PyTorch benchmark): what leave-one-source-out leaves out together, so that a
    campaign is never predicted by its own publisher's other campaigns."""
    return "-".join(source.split("-")[:2])


def leave_one_source_out(
    rows: Sequence[ReferenceRow], start: Calibration = PRIOR
) -> tuple[list[RowResult], list[PairResult], dict[str, Calibration]]:
    """Each publisher's rows (absolute) and same-kind pairs predicted by a fit on the others'."""
    results: list[RowResult] = []
    pairs: list[PairResult] = []
    fits = {}
    for source in sorted({lab(row.source) for row in rows}):
        fits[source] = fit([row for row in rows if lab(row.source) != source], start)
        held_out = [row for row in rows if lab(row.source) == source]
        results.extend(row_errors(fits[source], held_out))
        runs, _ = runs_of(held_out, fits[source])
        pairs.extend(p for p in pair_results(runs, fits[source]) if _same_kind(p.kinds))
    return results, pairs, fits


def _same_kind(kinds: str) -> bool:
    source, target = kinds.replace("tpu", "gpu").split("->")
    return source == target


_Z = NormalDist().inv_cdf(INTERVAL[1])
"""Half-width of the central interval validation checks, in sigmas (1.28 for 80%)."""


def spread(
    results: Sequence[RowResult], pairs: Sequence[PairResult], factor: float
) -> dict[str, float]:
    """Log sigma by kind of prediction (and by kind and family where a family has
    ``MIN_FAMILY_ROWS``): the 80th percentile of |log error| over 1.28, so that the 80%
    interval covers 80% of these errors whatever the shape of their tails, times ``factor``."""
    groups: dict[str, list[float]] = defaultdict(list)
    for result in results:
        kinds = across_kinds(result.kind)
        for key in (kinds, f"{kinds} {result.family}"):
            groups[key].append(abs(result.log_error))
        groups["all"].append(abs(result.log_error))
    for pair in pairs:
        kinds = pair.kinds.replace("tpu", "gpu")
        groups[kinds].append(abs(pair.log_error))
        groups[f"{kinds} {pair.family}"].append(abs(pair.log_error))
    share = 100 * (INTERVAL[1] - INTERVAL[0])
    return {
        key: round(factor * percentile(errors, share) / _Z, 4)
        for key, errors in sorted(groups.items())
        if " " not in key or len(errors) >= MIN_FAMILY_ROWS
    }


def source_factor(results: Sequence[RowResult], pairs: Sequence[PairResult]) -> float:
    """How much wider than the spread of known sources' errors a new source's errors run: the
    smallest factor (steps of 0.05, at least 1) under which each source's held-out rows, given
    the spread measured on the other sources, fall inside the 80% interval 80% of the time."""
    target = INTERVAL[1] - INTERVAL[0]
    factor = 1.0
    while factor < 3.0 and _nested_coverage(results, pairs, factor) < target:
        factor = round(factor + 0.05, 2)
    return factor


def _nested_coverage(
    results: Sequence[RowResult], pairs: Sequence[PairResult], factor: float
) -> float:
    inside = total = 0
    for source in {lab(r.source) for r in results}:
        sigma = spread(
            [r for r in results if lab(r.source) != source],
            [p for p in pairs if lab(p.source) != source],
            factor,
        )
        held = Calibration(log_sigma=sigma)
        for result in results:
            if lab(result.source) == source:
                inside += _with_sigma(result, held).inside_interval
                total += 1
    return inside / total if total else 1.0


def _with_sigma(result: RowResult, calibration: Calibration) -> RowResult:
    sigma = sigma_of(calibration.log_sigma, across_kinds(result.kind), result.family)
    return replace(result, log_sigma=sigma)


def report(
    calibration: Calibration,
    rows: Sequence[ReferenceRow],
    held_out: Sequence[ReferenceRow],
    loso: Sequence[RowResult],
) -> dict[str, Any]:
    """The figures ``calibration.json`` keeps beside the parameters."""
    in_sample = row_errors(calibration, rows)
    held = row_errors(calibration, held_out)
    return {
        "in_sample": summarise_rows(in_sample),
        "leave_one_source_out": summarise_rows(loso),
        "leave_one_source_out_by_source": by(loso, "source"),
        "held_out": summarise_rows(held),
        "held_out_by_source": by(held, "source"),
        "pairs_in_sample": summarise(
            [p for p in pair_results(runs_of(rows, calibration)[0], calibration)]
        ),
    }


def calibrate(
    files: Sequence[Path], holdouts: Sequence[Path], progress: Callable[[str], None] = print
) -> tuple[Calibration, dict[str, Any]]:
    """The fit on ``files``, its spread from leave-one-source-out, and its figures."""
    rows, held_out = read_rows(files), read_rows(holdouts)
    full = fit(rows)
    progress(f"fitted {', '.join(full.fitted) or 'nothing'}; leave-one-source-out next")
    loso, pairs, _ = leave_one_source_out(rows, full)
    factor = source_factor(loso, pairs)
    calibration = replace(full, log_sigma=spread(loso, pairs, factor))
    loso = [_with_sigma(r, _loso_sigma(r.source, loso, pairs, factor)) for r in loso]
    figures = report(calibration, rows, held_out, loso)
    figures["log_sigma_source_factor"] = factor
    figures["reference"] = [path.name for path in files]
    figures["holdout"] = [path.name for path in holdouts]
    return calibration, figures


def _loso_sigma(
    source: str, results: Sequence[RowResult], pairs: Sequence[PairResult], factor: float
) -> Calibration:
    """The spread a held-out source's rows get: measured on the other sources only."""
    return Calibration(
        log_sigma=spread(
            [r for r in results if lab(r.source) != lab(source)],
            [p for p in pairs if lab(p.source) != lab(source)],
            factor,
        )
    )


def derive(progress: Callable[[str], None] = print) -> str:
    """``data/calibration.json`` as text: the fit on the shipped ``FIT_FILES``, the shipped
    hold-out files held out."""
    data = shipped_data_dir()
    files = [data / name for name in FIT_FILES]
    calibration, figures = calibrate(files, sorted(data.glob(HOLDOUT_PATTERN)), progress)
    return calibration_json(calibration, **figures)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m advisor.fitting.calibrate", description=__doc__
    )
    data = shipped_data_dir()
    parser.add_argument(
        "--reference", type=Path, action="append", help="fitted files (default: FIT_FILES)"
    )
    parser.add_argument("--output", type=Path, default=data / CALIBRATION_FILE)
    args = parser.parse_args(argv)
    files = args.reference or [data / name for name in FIT_FILES]
    holdouts = sorted(data.glob(HOLDOUT_PATTERN))
    calibration, figures = calibrate(files, holdouts)
    args.output.write_text(calibration_json(calibration, **figures))
    print(f"wrote {args.output}")
    for name in ("in_sample", "leave_one_source_out", "held_out"):
        print(f"{name}: {figures[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
