"""Accuracy of the device model on every published measurement it can model, in absolute terms.

    .venv/bin/python benchmarks/estimate_validation.py

Runs the fit as ``python -m advisor.fitting.calibrate`` does (writing nothing) and prints each
row's own figure predicted from its device, batch, precision and software, as factors either
way: in-sample, leave-one-publisher-out (each publisher's rows predicted by a fit on the
others') and held out (``data/calibration-holdout-*.csv``, never fitted), by source, kind
(cpu, gpu), precision and workload family; the median signed error (positive: predicted too
slow), how many rows were predicted too fast and the 80% interval's coverage. Then the pairs
within a kind (a GPU predicted from a GPU, as a GPU probe would be), where the GPU-to-GPU
transformer rows in strict fp32, TF32 and mixed precision have a target of their own (median
<= 15%, p90 <= 35%). A minute or so.
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.fitting import calibrate
from advisor.fitting.absolute import RowResult, by, summarise_rows
from advisor.fitting.validate import PairResult, pair_results, runs_of, summarise
from advisor.locations import shipped_data_dir
from benchmarks import factor_table

TRANSFORMER_PAIRS = {"median_abs_pct_error": 15.0, "p90_abs_pct_error": 35.0}


def line(label: str, s: dict[str, Any]) -> None:
    if s.get("n_rows"):
        print(factor_table.row(label, 44, s["n_rows"], s, s["interval_coverage"]))


def table(title: str, results: list[RowResult]) -> None:
    print(f"\n## {title}")
    print(factor_table.header(44))
    line("all", summarise_rows(results))
    for key in ("kind", "family", "source"):
        for name, figures in by(results, key).items():
            line(f"  {key} {name}", figures)


def precision_of(pair: PairResult) -> str:
    return pair.target_label.rsplit(" ", 1)[-1]


def main() -> int:
    started = time.perf_counter()
    data = shipped_data_dir()
    files = [data / name for name in calibrate.FIT_FILES]
    holdouts = sorted(data.glob(calibrate.HOLDOUT_PATTERN))
    rows, held = calibrate.read_rows(files), calibrate.read_rows(holdouts)
    calibration, figures = calibrate.calibrate(files, holdouts, progress=lambda _: None)
    loso, loso_pairs, fits = calibrate.leave_one_source_out(rows, calibration)
    table("in-sample (the shipped fit on the fitted rows)", calibrate.row_errors(calibration, rows))
    table("leave-one-publisher-out", loso)
    table("held out (never fitted)", calibrate.row_errors(calibration, held))
    print(f"\nlog sigma by kind of prediction: {calibration.log_sigma}")
    print(f"source factor {figures['log_sigma_source_factor']}")
    # GPU-to-GPU pairs of transformer rows, held out: what a GPU probe of a transformer gets
    runs, _ = runs_of(held, calibration)
    pairs = [p for p in pair_results(runs, calibration) if p.kinds == "gpu->gpu"]
    transformer = [p for p in pairs if p.family == "transformer"]
    by_precision: dict[str, list[PairResult]] = defaultdict(list)
    for pair in transformer:
        by_precision[precision_of(pair)].append(pair)
    print("\n## GPU-to-GPU pairs of held-out transformer rows (target: median <= 15%, p90 <= 35%)")
    overall = summarise(transformer)
    verdict = all(overall[k] is not None and overall[k] <= v for k, v in TRANSFORMER_PAIRS.items())
    print(f"all: {overall} -> {'meets' if verdict else 'MISSES'}")
    for precision, group in sorted(by_precision.items()):
        print(f"  target {precision}: {summarise(group)}")
    same_kind = [p for p in loso_pairs if p.kinds.replace("tpu", "gpu") == "gpu->gpu"]
    print(f"leave-one-publisher-out GPU-to-GPU pairs: {summarise(same_kind)}")
    loso_transformer: dict[str, list[PairResult]] = defaultdict(list)
    for pair in same_kind:
        if pair.family == "transformer":
            loso_transformer["all"].append(pair)
            loso_transformer[precision_of(pair)].append(pair)
    print("leave-one-publisher-out GPU-to-GPU pairs of transformer rows, by target precision:")
    for precision, group in sorted(loso_transformer.items()):
        print(f"  {precision}: {summarise(group)}")
    print(f"\n{len(fits)} publishers; took {time.perf_counter() - started:.0f} s")
    return 0 if math.isfinite(overall.get("median_abs_pct_error") or math.nan) else 1


if __name__ == "__main__":
    sys.exit(main())
