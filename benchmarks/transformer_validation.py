"""GPU-to-GPU accuracy of the transformer path on published BERT fine-tuning measurements.

    .venv/bin/python benchmarks/transformer_validation.py

Fits ``transformer_traffic_scale`` (the one transformer-only parameter) on lambdal/
deeplearning-benchmark's BERT-base and BERT-large SQuAD rows (two campaigns, 16 GPUs from V100
to B200, fp32 and fp16), then reports, for every ordered pair of rows within one source:
in-sample, leave-one-source-out, and held out (NVIDIA DeepLearningExamples' BERT-large tables,
PyTorch 21.11 and TensorFlow 21.02 containers, never fitted). Targets on the held-out source:
median <= 15%, p90 <= 35%, order right >= 90%, the 80% interval covering 70-90%. Writes nothing
(``python -m advisor.estimate.transformer_fit`` writes the shipped fit). Takes seconds.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.estimate import transformer_fit
from advisor.estimate.published import read_reference
from advisor.locations import shipped

COLUMNS = (
    ("n_pairs", "pairs"),
    ("median_abs_pct_error", "median %"),
    ("p90_abs_pct_error", "p90 %"),
    ("pairwise_order_accuracy", "order right"),
    ("interval_coverage", "80% covers"),
)


def main() -> int:
    base, factor = transformer_fit.base_calibration()
    fitted = read_reference(shipped(transformer_fit.FIT_FILE))
    held = read_reference(shipped(transformer_fit.HOLDOUT_FILE))
    report = transformer_fit.validation(fitted, held, base, factor)
    print(
        f"transformer_traffic_scale fitted: {report['transformer_traffic_scale']}; "
        f"transformer_log_sigma {report['transformer_log_sigma']} (source factor {factor})"
    )
    print(f"{'evaluation':<40}" + "".join(f"{title:>12}" for _, title in COLUMNS))
    lines = [
        ("in-sample (Lambda v1 + v2)", report["in_sample"]),
        ("leave-one-source-out (Lambda)", report["leave_one_source_out"]),
        ("held out: both NVIDIA sources", report["held_out"]),
        *((f"held out: {name}", figures) for name, figures in report["held_out_by_source"].items()),
        ("held out, scale 1 (before the fit)", report["prior_scale_figures"]),
    ]
    for label, figures in lines:
        print(f"{label:<40}" + "".join(f"{figures[key]:>12}" for key, _ in COLUMNS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
