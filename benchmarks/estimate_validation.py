"""Accuracy of cross-device prediction on the shipped reference set.

    .venv/bin/python benchmarks/estimate_validation.py [--reference FILE]

Prints, for the shipped calibration (in-sample) and for leave-one-source-out (each source
predicted by a fit on the other sources only): median and p90 absolute percentage error, the
share of ordered pairs whose faster/slower order is right, by source and by kind of pair
(cpu->cpu, cpu->gpu, ...), the interval coverage: the share of pairs whose measured figure lies
inside the predicted 80% interval (in-sample and hold-out with the shipped spread;
leave-one-source-out with a spread measured on the other sources' held-out errors), plus the order
accuracy over pairs whose measured figures differ by
more than 5% and 10% (smaller differences are within the run-to-run noise of single published
runs). Targets: median <= 20%, p90 <= 50%, order >= 90%. Then the same for every hold-out file the
fit never sees (``data/calibration-holdout-*.csv``): NVIDIA's published ResNet-50 training
throughput on V100, V100 32GB and A100, Lambda's tf_cnn_benchmarks runs under TensorFlow 2
on V100-32GB and RTX A6000, and Woolf's 2017-11 Keras examples (K80/P100 with CuDNNLSTM, 16/32
Skylake vCPUs). Last, one table of the three evaluations side by side.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.estimate.calibrate import leave_one_source_out
from advisor.estimate.parameters import shipped_calibration
from advisor.estimate.published import read_reference
from advisor.estimate.validate import PairResult, evaluate, summarise
from advisor.locations import shipped, shipped_data_dir

TARGETS = {"median_abs_pct_error": 20.0, "p90_abs_pct_error": 50.0, "pairwise_order_accuracy": 0.9}


def order_beyond_noise(pairs: Sequence[PairResult], threshold: float) -> tuple[int, float]:
    """Order accuracy over pairs whose measured per-sample times differ by more than threshold."""
    kept = [pair.order_right for pair in pairs if pair.measured_gap > threshold]
    return len(kept), (sum(kept) / len(kept) if kept else float("nan"))


def show(title: str, pairs: Sequence[PairResult]) -> dict[str, object]:
    print(f"\n## {title}")
    overall = summarise(pairs)
    verdicts = []
    for key, target in TARGETS.items():
        value = overall[key]
        ok = value >= target if key == "pairwise_order_accuracy" else value <= target
        verdicts.append(f"{key} {value} ({'meets' if ok else 'MISSES'} {target})")
    print("all:", "; ".join(verdicts), f"; n_pairs {overall['n_pairs']}")
    print(
        "interval coverage (measured figure inside the predicted 80% interval, q 0.1-0.9): "
        f"{overall['interval_coverage']} (target 0.70-0.90)"
    )
    for threshold in (0.05, 0.10):
        n, accuracy = order_beyond_noise(pairs, threshold)
        print(
            f"extra figure, order accuracy where measured figures differ by >{threshold:.0%}: "
            f"{accuracy:.4f} ({n} pairs)"
        )
    groups: dict[str, list[PairResult]] = defaultdict(list)
    for pair in pairs:
        groups[f"source {pair.source}"].append(pair)
        groups[f"kind {pair.kinds}"].append(pair)
        groups[f"workload {pair.workload}"].append(pair)
    for name, group in sorted(groups.items()):
        print(f"  {name:40s} {summarise(group)}")
    return overall


def side_by_side(evaluations: dict[str, dict[str, object]]) -> None:
    """One line per evaluation: pairs, median and p90 absolute % error, order right."""
    print("\n## side by side (targets: median <= 20%, p90 <= 50%, order right >= 0.90)")
    print(
        f"{'evaluation':58s} {'pairs':>6s} {'median %':>9s} {'p90 %':>7s} {'order':>6s} "
        f"{'in 80%':>6s}"
    )
    for name, overall in evaluations.items():
        print(
            f"{name:58s} {overall['n_pairs']:>6} {overall['median_abs_pct_error']:>9} "
            f"{overall['p90_abs_pct_error']:>7} {overall['pairwise_order_accuracy']:>6} "
            f"{overall['interval_coverage']:>6}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference", type=Path, default=shipped("benchmarks.csv"))
    args = parser.parse_args()
    rows = read_reference(args.reference)
    started = time.perf_counter()
    in_sample, skipped = evaluate(rows, shipped_calibration())
    evaluations = {
        "in-sample": show("in-sample (the shipped calibration, fitted on all sources)", in_sample)
    }
    loso, _ = leave_one_source_out(rows)
    evaluations["leave-one-source-out"] = show(
        "leave-one-source-out (each source predicted by a fit without it)", loso
    )
    all_held: list[PairResult] = []
    for path in sorted(shipped_data_dir().glob("calibration-holdout-*.csv")):
        held, _ = evaluate(read_reference(path), shipped_calibration())
        all_held.extend(held)
        evaluations[f"hold-out {path.name}"] = show(f"hold-out {path.name} (never fitted)", held)
    evaluations["hold-out, all files"] = summarise(all_held)
    side_by_side(evaluations)
    print(f"\nskipped rows: {skipped}; took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
