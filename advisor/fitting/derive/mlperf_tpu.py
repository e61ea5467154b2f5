"""Rows of ``data/calibration-holdout-tpu-mlperf.csv`` from Google's MLPerf Training v0.6 ResNet-50 logs.

    python -m advisor.fitting.derive.mlperf_tpu MIRROR_GIT_DIR > data/calibration-holdout-tpu-mlperf.csv

Reads MLPerf's ``:::MLL`` lines of Google's Cloud TPU v3 runs (``Google/results/<slice>/resnet/
result_<n>.txt``) in a git mirror of mlcommons/training_results_v0.6. A row is a slice's steady
rate: per run the median over its four-epoch blocks but the first (compilation and warm-up), then
the median over the five runs, evaluation included (docs/SOURCES.md, "Hold-out measurements")."""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
import subprocess
import sys

SLICES = ("tpu-v3-32", "tpu-v3-128", "tpu-v3-256", "tpu-v3-512", "tpu-v3-1024", "tpu-v3-2048")
RUNS = 5
FIELDS = ("source", "workload", "device", "vcpus", "cpu_family", "software", "precision",
          "batch_size", "epochs", "metric", "value", "notes")  # fmt: skip
_LINE = re.compile(r":::MLL ([\d.]+) (\w+): (.*)")


def steady_rate(log: str) -> tuple[float, int, int]:
    """Images a second of one run's blocks but the first (median), its global batch and the
    number of blocks it was measured over."""
    starts: dict[int, tuple[float, int]] = {}
    rates: list[float] = []
    batch = train_images = 0
    for number, line in enumerate(log.splitlines(), 1):
        match = _LINE.match(line)
        if not match:
            continue
        try:
            stamp, key, value = float(match[1]), match[2], json.loads(match[3])
            meta = value.get("metadata", {})
            if key == "global_batch_size":
                batch = int(value["value"])
            elif key == "num_train_examples":
                train_images = int(value["value"])
            elif key == "block_start":
                starts[int(meta["first_epoch_num"])] = (stamp, int(meta["epoch_count"]))
            elif key == "block_stop":
                begun, epochs = starts[int(meta["first_epoch_num"])]
                rate = epochs * train_images / (stamp - begun)
                if not (math.isfinite(rate) and rate > 0):
                    raise ValueError("a block of no positive rate")
                rates.append(rate)
        except (ValueError, TypeError, KeyError, AttributeError, ZeroDivisionError) as error:
            raise ValueError(
                f"line {number}: not an MLPerf log line we can read ({error})"
            ) from error
    if len(rates) < 2 or batch <= 0:
        raise ValueError("a run with fewer than two blocks or no global batch size")
    return statistics.median(rates[1:]), batch, len(rates) - 1


def rows(git_dir: str) -> list[dict[str, str]]:
    commit = _git(git_dir, "rev-parse", "HEAD").strip()
    out = []
    for name in SLICES:
        runs = [
            steady_rate(_git(git_dir, "show", f"HEAD:Google/results/{name}/resnet/result_{i}.txt"))
            for i in range(RUNS)
        ]
        batches = {batch for _, batch, _ in runs}
        if len(batches) != 1:
            raise ValueError(f"{name}: runs with different batch sizes {sorted(batches)}")
        rate = statistics.median(r for r, _, _ in runs)
        spread = max(r for r, _, _ in runs) / min(r for r, _, _ in runs)
        out.append(
            {
                "source": "mlperf-v0.6-google",
                "workload": "resnet50",
                "device": name,
                "vcpus": "",
                "cpu_family": "",
                "software": "tensorflow-1.14-tpu",
                "precision": "bf16",
                "batch_size": str(batches.pop()),
                "epochs": "",
                "metric": "samples_per_second",
                "value": f"{rate:.0f}",
                "notes": (
                    f"mlcommons/training_results_v0.6@{commit[:12]}:Google/results/{name}/resnet/"
                    f"result_0-{RUNS - 1}.txt: ResNet-50 v1.5, bfloat16, TensorFlow 1.14 on Cloud "
                    f"TPU v3 (MLPerf Training v0.6, closed division, 2019); the median over {RUNS} "
                    "runs of each run's median four-epoch block after the first, its evaluation "
                    f"of 50,000 images included; runs' max/min {spread:.3f} "
                    "(advisor/fitting/derive/mlperf_tpu.py)"
                ),
            }
        )
    return out


def _git(git_dir: str, *args: str) -> str:
    done = subprocess.run(["git", "-C", git_dir, *args], capture_output=True, text=True)
    if done.returncode:
        raise ValueError(done.stderr.strip() or f"git {' '.join(args)} failed")
    return done.stdout


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m advisor.fitting.derive.mlperf_tpu MIRROR_GIT_DIR", file=sys.stderr)
        return 2
    try:
        found = rows(argv[0])
    except (ValueError, KeyError) as error:
        print(f"mlperf_tpu_extract: {error}", file=sys.stderr)
        return 1
    writer = csv.DictWriter(sys.stdout, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(found)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
