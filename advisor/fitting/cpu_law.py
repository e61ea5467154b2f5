"""How today's frameworks scale a training step over a CPU's cores: the contention of their law.

The thread-scaling law of ``advisor.estimate.machine`` (the universal scalability law) was fitted
on TensorFlow 1.2's 2017 runs, whose steps slowed past 32-64 vCPUs. Today's TensorFlow, built on
oneDNN, keeps scaling: tf_cnn_benchmarks training on Zen 5 runs VGG-16 at 25.8, 85 and 207
images/s on 16, 64 and 192 cores (``data/cpu-scaling-published.csv``, OpenBenchmarking.org).
Their contention is fitted here on the ratios of one family's runs of one workload and batch
at several core counts, so no probe and no single machine's level enters it; the coherency
term is 0 (no such run slows with more cores). The runs of other families (Zen 4, Sapphire
Rapids), one core count each, carry no ratio: they are the held-out check of the absolute
figures, through ``benchmarks/scale_out.py``.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

from advisor.locations import shipped

RUNS_FILE = "cpu-scaling-published.csv"
MODERN_FRAMEWORKS = ("tensorflow-2", "pytorch", "jax")
"""Framework ids of today's software in the file (the 2017-2018 builds keep TensorFlow 1's law)."""
ALPHAS = [i / 10_000 for i in range(0, 1001)]
"""Contention searched: 0 to 0.1 in steps of 0.0001."""

Series = dict[tuple[str, str, str], list[tuple[float, float]]]


def series(path: Path | None = None) -> Series:
    """Today's fp32 single-node runs by (family, workload, batch): (threads, samples/s) at two
    core counts or more. Threads are vCPUs, or whole cores where a row gives only cores."""
    found: Series = defaultdict(list)
    with open(path or shipped(RUNS_FILE), newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if not row["framework"].startswith(MODERN_FRAMEWORKS) or row["precision"] != "fp32":
                continue
            if row["metric"] != "samples_per_second" or row["nodes"] not in ("", "1"):
                continue
            threads = float(row["vcpus"] or row["cores"])
            key = (row["cpu_family"], row["workload"], row["batch_size"])
            found[key].append((threads, float(row["value"])))
    return {key: runs for key, runs in found.items() if len({n for n, _ in runs}) > 1}


def speedup(threads: float, alpha: float) -> float:
    """The law without coherency: ``n / (1 + alpha (n - 1))``."""
    return threads / (1 + alpha * (threads - 1))


def loss(alpha: float, runs: Series) -> float:
    """Squared log errors of each run's rate against its series' geometric mean, as the law
    would have it: each series' own level drops out."""
    total = 0.0
    for points in runs.values():
        errors = [math.log(rate / speedup(n, alpha)) for n, rate in points]
        mean = sum(errors) / len(errors)
        total += sum((e - mean) ** 2 for e in errors)
    return total


def alpha() -> float:
    """The contention that best explains today's runs' ratios (``machine.MODERN_USL_ALPHA``)."""
    runs = series()
    return min(ALPHAS, key=lambda a: loss(a, runs))
