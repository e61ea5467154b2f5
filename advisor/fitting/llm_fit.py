"""Fit the LLM fine-tuning parameters: ``python -m advisor.fitting.llm_fit``.

Only ``parameters.LLM_PARAMETERS`` move (fused attention's share of peak, FP8 products', the
node's collectives over NVLink and over PCIe, how much of the gathers the device hides, the
dequantisation traffic); every other parameter stays at the shipped fit (``calibration.json``,
``python -m advisor.fitting.calibrate``), whose rows these parameters do not touch. The fitted
rows are the published runs marked ``use_throughput=fit`` in
``data/llm-finetune-published.csv``: each predicted in absolute terms (its model, method,
layout, GPU and precision), the loss the robust mean of the log errors of tokens per second
per GPU, each source weighted by the square root of its rows, with a weak pull to the written
priors. Rows marked ``holdout`` are predicted with the fit and reported, never fitted.

The spread of an LLM prediction (``log_sigma["llm"]``) is the 80th percentile of the
leave-one-source-out errors over 1.28, so that the 80% interval covers 80% of a new source's
runs. The fit and its figures go to ``data/calibration-llm.json``, which
``parameters.llm_calibration()`` lays over the shipped fit.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any

from advisor.estimate.finetune import machine_for, step_of
from advisor.estimate.machine import Machine
from advisor.estimate.parameters import (
    LLM_CALIBRATION_FILE,
    LLM_PARAMETERS,
    PRIOR,
    Calibration,
    shipped_calibration,
)
from advisor.fitting.llm_published import NODE_NETWORK_GBPS, PublishedRun, throughput_runs
from advisor.fitting.search import coordinate_search
from advisor.fitting.validate import percentile
from advisor.locations import shipped_data_dir
from advisor.workloads import stacks

PRIOR_WEIGHT = 0.005
"""Loss of moving one parameter a factor 3 from its prior (as ``calibrate``)."""
HUBER_DELTA = 0.3
CEILINGS = {"dequant_traffic_scale": 20.0}
MIN_STACK_ROWS = 2
"""Fitted runs a stack needs for a speed of its own in the per-stack trial (``fit_all``)."""
ROUNDS = 3
"""Alternations of the shared parameters' search and the stacks' speeds (converged by 3)."""

"""Largest value a parameter may take: 1 (a share of a peak) unless named here."""
_Z80 = NormalDist().inv_cdf(0.9)


@dataclass(frozen=True)
class RunError:
    """One published run's tokens per second per GPU, predicted."""

    run: PublishedRun
    predicted: float
    log_error: float
    """log(predicted / published): positive when predicted too fast."""
    above_peak: bool
    """The prediction's FLOP rate beats the datasheet peak of the products' unit."""


def machine_of(run: PublishedRun, calibration: Calibration) -> Machine | None:
    """The machine ``run`` ran on: its GPUs over its DGX nodes (None: a GPU not catalogued)."""
    return machine_for(
        run.device, run.plan.gpus // run.nodes, calibration, run.precision,
        nodes=run.nodes, network_bytes_s=NODE_NETWORK_GBPS * 1e9 / 8,
    )  # fmt: skip


def errors(calibration: Calibration, runs: Sequence[PublishedRun]) -> list[RunError]:
    found = []
    for run in runs:
        machine = machine_of(run, calibration)
        if machine is None:
            continue
        step = step_of(run.tune, run.plan, machine, calibration)
        rate = step.tokens_per_second_per_gpu
        above = step.flops_per_gpu > machine.peaks.matmul_flops
        found.append(RunError(run, rate, math.log(rate / run.tokens_per_second), above))
    return found


def _huber(x: float) -> float:
    a = abs(x)
    return 0.5 * a * a if a <= HUBER_DELTA else HUBER_DELTA * (a - 0.5 * HUBER_DELTA)


def loss(calibration: Calibration, runs: Sequence[PublishedRun]) -> float:
    by_source: dict[str, list[float]] = defaultdict(list)
    for found in errors(calibration, runs):
        by_source[found.run.source].append(_huber(found.log_error))
    weights = {source: math.sqrt(len(e)) for source, e in by_source.items()}
    total = sum(weights[s] * sum(e) / len(e) for s, e in by_source.items())
    fit = total / sum(weights.values()) if weights else 0.0
    pull = sum(
        (math.log(getattr(calibration, name) / getattr(PRIOR, name)) / math.log(3)) ** 2
        for name in LLM_PARAMETERS
    )
    return fit + PRIOR_WEIGHT * pull


def fit(runs: Sequence[PublishedRun], start: Calibration) -> Calibration:
    """Coordinate search in log space over ``LLM_PARAMETERS`` from ``start``."""
    return coordinate_search(
        start,
        LLM_PARAMETERS,
        lambda calibration: loss(calibration, runs),
        lambda name: CEILINGS.get(name, 1.0),
    )


def stack_speeds(
    calibration: Calibration, runs: Sequence[PublishedRun]
) -> tuple[dict[str, float], dict[str, int]]:
    """Each stack's speed moved by the median error of its runs under ``calibration`` (so that
    its median run is predicted right), and how many runs that was; a stack with fewer than
    ``MIN_STACK_ROWS`` takes its nearest's speed (1, the shared fit's, when that has none)."""
    own: dict[str, list[float]] = defaultdict(list)
    for found in errors(calibration, runs):
        own[found.run.tune.stack].append(found.log_error)
    speeds: dict[str, float] = {}
    rows: dict[str, int] = {}
    for stack in stacks.stacks().values():
        logs = own.get(stack.id, [])
        if len(logs) >= MIN_STACK_ROWS:
            now = calibration.stack_speed.get(stack.id, 1.0)
            speeds[stack.id] = round(now * math.exp(-percentile(logs, 50)), 4)
            rows[stack.id] = len(logs)
    for stack in stacks.stacks().values():
        if stack.id not in speeds:
            speeds[stack.id] = speeds.get(stack.nearest, 1.0)
            rows[stack.id] = 0
    return speeds, rows


def fit_all(
    runs: Sequence[PublishedRun], start: Calibration, *, per_stack: bool = False
) -> Calibration:
    """The shared parameters (``fit``); with ``per_stack``, also each stack's speed
    (``stack_speeds``), in turn. The shipped fit has none: tried on every stack's held-out runs,
    a speed of its own made four stacks of five worse (``benchmarks/llm_validation.py``)."""
    calibration = replace(start, stack_speed={})
    if not per_stack:
        return fit(runs, calibration)
    for _ in range(ROUNDS):
        calibration = fit(runs, calibration)
        speeds, _ = stack_speeds(calibration, runs)
        calibration = replace(calibration, stack_speed=speeds)
    return calibration


def leave_one_source_out(
    runs: Sequence[PublishedRun], start: Calibration, *, per_stack: bool = False
) -> list[RunError]:
    """Each source's runs predicted by a fit on the other sources'."""
    found = []
    for source in sorted({run.source for run in runs}):
        others = fit_all([run for run in runs if run.source != source], start, per_stack=per_stack)
        found += errors(others, [run for run in runs if run.source == source])
    return found


def summary(found: Sequence[RunError]) -> dict[str, Any]:
    """Median and worst error as factors, the median signed error (positive: too fast), how
    many beat the datasheet peak."""
    if not found:
        return {"n_runs": 0}
    factors = [math.exp(abs(f.log_error)) for f in found]
    signed = percentile([f.log_error for f in found], 50)
    return {
        "n_runs": len(found),
        "median_factor": round(percentile(factors, 50), 3),
        "worst_factor": round(max(factors), 3),
        "median_signed_pct": round(100 * (math.exp(signed) - 1), 1),
        "above_peak": sum(f.above_peak for f in found),
    }


def by_source(found: Sequence[RunError]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[RunError]] = defaultdict(list)
    for f in found:
        groups[f.run.source].append(f)
    return {name: summary(group) for name, group in sorted(groups.items())}


def by_stack(found: Sequence[RunError]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[RunError]] = defaultdict(list)
    for f in found:
        groups[f.run.tune.stack].append(f)
    return {name: summary(group) for name, group in sorted(groups.items())}


def spread(found: Sequence[RunError]) -> float:
    """Log sigma whose 80% interval covers 80% of ``found``'s errors."""
    return round(percentile([abs(f.log_error) for f in found], 80) / _Z80, 4)


def calibrate() -> tuple[Calibration, dict[str, Any]]:
    start = shipped_calibration()
    runs, held = throughput_runs("fit"), throughput_runs("holdout")
    fitted = fit_all(runs, start)
    loso = leave_one_source_out(runs, start)
    sigma = {"llm": spread(loso)}
    figures = {
        "in_sample": summary(errors(fitted, runs)),
        "in_sample_by_source": by_source(errors(fitted, runs)),
        "in_sample_by_stack": by_stack(errors(fitted, runs)),
        "leave_one_source_out": summary(loso),
        "leave_one_source_out_by_source": by_source(loso),
        "held_out": summary(errors(fitted, held)),
        "held_out_by_source": by_source(errors(fitted, held)),
        "held_out_by_stack": by_stack(errors(fitted, held)),
        "leave_one_source_out_by_stack": by_stack(loso),
        "log_sigma": sigma,
        "stack_runs": stack_runs(runs),
    }
    return replace(fitted, log_sigma={**fitted.log_sigma, **sigma}), figures


def stack_runs(runs: Sequence[PublishedRun]) -> dict[str, int]:
    """How many published runs of each stack the fit read (0: none; its recipe is unchecked)."""
    counted = {name: 0 for name in stacks.stacks()}
    for run in runs:
        counted[run.tune.stack] = counted.get(run.tune.stack, 0) + 1
    return counted


def to_json(calibration: Calibration, figures: dict[str, Any]) -> str:
    blob = {name: round(getattr(calibration, name), 5) for name in LLM_PARAMETERS}
    blob["priors"] = {name: getattr(PRIOR, name) for name in LLM_PARAMETERS}
    return json.dumps({**blob, **figures}, indent=2, sort_keys=True) + "\n"


def derive() -> str:
    """``data/calibration-llm.json`` as text."""
    return to_json(*calibrate())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m advisor.fitting.llm_fit", description=__doc__)
    parser.add_argument("--output", type=Path, default=shipped_data_dir() / LLM_CALIBRATION_FILE)
    args = parser.parse_args(argv)
    calibration, figures = calibrate()
    args.output.write_text(to_json(calibration, figures))
    moved = [f"{n}: {getattr(PRIOR, n):g} -> {getattr(calibration, n):.4g}" for n in LLM_PARAMETERS]
    scores = [f"{k}: {figures[k]}" for k in ("in_sample", "leave_one_source_out", "held_out")]
    print("\n".join([f"wrote {args.output}", *moved, *scores]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
