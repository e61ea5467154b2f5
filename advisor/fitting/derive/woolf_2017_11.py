"""Rows of ``data/calibration-holdout-woolf-2017-11.csv`` from Max Woolf's November 2017 CPU/GPU benchmark logs.

    python -m advisor.fitting.derive.woolf_2017_11 MIRROR_GIT_DIR > rows.csv

Reads the per-epoch logs of minimaxir/keras-cntk-benchmark (``v2/logs/<config>/<model>_tensorflow.csv``)
in a git mirror; each row is the sum of one model's per-epoch elapsed seconds on one machine,
validation pass included, with its provenance in ``notes`` (the runs and their software:
docs/SOURCES.md, "CPU<->GPU validation suite")."""

from __future__ import annotations

import csv
import subprocess
import sys

_MODELS = {  # log name -> zoo id, batch size (from v2/test_files)
    "mnist_mlp": ("mnist_mlp", 128),
    "mnist_cnn": ("mnist_cnn", 128),
    "cifar10_cnn": ("cifar10_cnn", 32),
    "imdb_fasttext": ("imdb_fasttext", 32),
    "imdb_bidirectional_lstm": ("imdb_bilstm", 32),
    "lstm_text_generation": ("lstm_text_generation", 128),
}
_CONFIGS = {  # log folder -> device, vcpus, cpu family, software
    "k80": ("K80", "", "", "tensorflow-1.4-pip-gpu-cudnnlstm"),
    "p100": ("P100", "", "", "tensorflow-1.4-pip-gpu-cudnnlstm"),
    "cpu16": ("CPU", "16", "skylake", "tensorflow-1.4-pip"),
    "cpu32": ("CPU", "32", "skylake", "tensorflow-1.4-pip"),
}
FIELDS = ("source", "workload", "device", "vcpus", "cpu_family", "software", "precision",
          "batch_size", "epochs", "metric", "value", "notes")  # fmt: skip


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(
            "usage: python -m advisor.fitting.derive.woolf_2017_11 MIRROR_GIT_DIR", file=sys.stderr
        )
        return 2
    git = ["git", f"--git-dir={argv[0]}"]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    commit_id = commit.stdout.strip()
    writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    for folder, (device, vcpus, family, software) in _CONFIGS.items():
        for log, (workload, batch) in _MODELS.items():
            path = f"v2/logs/{folder}/{log}_tensorflow.csv"
            shown = subprocess.run([*git, "show", f"{commit_id}:{path}"], capture_output=True,
                                   text=True, check=True)  # fmt: skip
            epochs = list(csv.DictReader(shown.stdout.splitlines()))
            writer.writerow({
                "source": "woolf-2017-11", "workload": workload, "device": device,
                "vcpus": vcpus, "cpu_family": family, "software": software, "precision": "fp32",
                "batch_size": batch, "epochs": len(epochs), "metric": "seconds_total",
                "value": round(sum(float(e["elapsed"]) for e in epochs), 1),
                "notes": f"minimaxir/keras-cntk-benchmark@{commit_id[:12]}:{path}; sum of "
                "per-epoch elapsed incl. validation pass",
            })  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
