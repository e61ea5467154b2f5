"""CPU<->GPU prediction on published same-source results, before and after the kernel fit.

    .venv/bin/python benchmarks/cpu_gpu_validation.py [--quick]

Every pair of one published source where one side is a CPU and the other a GPU (same model, same
author, same software generation): the CPU time predicts the GPU time and back. Sources:
``data/benchmarks.csv`` (Woolf 2017-07, FloydHub 2017-12: in the calibration fit),
``data/calibration-holdout-woolf-2017-11.csv`` (Woolf 2017-11, K80/P100 with ``CuDNNLSTM``
against 16/32 Skylake vCPUs: never fitted) and ``data/cpu-gpu-validation.csv`` (TensorFlow's own
Keras-examples benchmarks, 2020: five small models on a GCP VM's 8 vCPUs and on its two V100s,
mirrored; never fitted; their architectures counted in ``data/cpu-gpu-workloads.csv``). Reported per evaluation: the median and worst
ratio error (predicted/measured CPU:GPU ratio as a factor, 1.5 = 50% off either way), the share
of pairs whose faster side is right, the median absolute % error; in-sample, leave-one-source-out
(each ``benchmarks.csv`` source predicted by a calibration fitted without it; skipped with
``--quick``) and held out. Targets: median ratio error <= 1.5x, worst <= 3x, faster side right in
every pair; leave-one-source-out median <= 30%.

Last, the same TF2 models from real CPU probes: ``data/cpu-gpu-probes/*.json`` holds probes of
the five models (rebuilt as .keras files by ``benchmarks/research/tf2_examples_models.py``) taken on this
project's 2-vCPU development VM; each probe predicts both the source's 8-vCPU VM and its 2x V100,
and the predicted CPU:GPU ratio is compared with the published one (the way a user meets the
claim: probe here, predict a GPU). The probes are replayed, never re-run.

"Before" is the recurrent GPU path as it was: a 60 us per-time-step prior for cuDNN, no per-call
cost, the per-step arithmetic at the model-level GPU efficiency (``PRIOR_RECURRENT``); "after" is
the fit on DeepBench's measured kernels (``data/gpu-kernel-fit.json``). The swap patches the one
function that hands the fit to the machine model, for this process only.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.estimate import Target, kernels, machine, predict
from advisor.estimate.frameworks import from_software
from advisor.estimate.machine import Stack
from advisor.estimate.parameters import shipped_calibration
from advisor.fitting.calibrate import lab as publisher
from advisor.fitting.calibrate import leave_one_source_out
from advisor.fitting.published import ReferenceRow, read_reference
from advisor.fitting.validate import (
    PairResult,
    evaluate,
    pair_results,
    percentile,
    read_facts_suite,
)
from advisor.locations import shipped, shipped_data_dir
from probes.history import from_json

HELD_OUT_FILE = "calibration-holdout-woolf-2017-11.csv"
SUITE_FILES = ("cpu-gpu-validation.csv", "cpu-gpu-workloads.csv")
TARGETS = {"median_factor": 1.5, "worst_factor": 3.0, "faster_side_right": 1.0, "median_pct": 30.0}
PRIOR_RECURRENT = kernels.RecurrentFit(
    call_s=0.0, step_s=6e-5, efficiency=shipped_calibration().gpu_efficiency
)


def cpu_gpu(pairs: Sequence[PairResult]) -> list[PairResult]:
    return [p for p in pairs if p.kinds in ("cpu->gpu", "gpu->cpu")]


def summary(pairs: Sequence[PairResult]) -> dict[str, float]:
    factors = [math.exp(abs(p.log_error)) for p in pairs]
    return {
        "pairs": len(pairs),
        "median_factor": round(percentile(factors, 50), 2),
        "worst_factor": round(max(factors), 2) if factors else math.nan,
        "faster_side_right": round(sum(p.order_right for p in pairs) / len(pairs), 3)
        if pairs
        else math.nan,
        "median_pct": round(percentile([p.abs_pct_error for p in pairs], 50), 1),
    }


@contextmanager
def recurrent_path(fit: kernels.RecurrentFit) -> Iterator[None]:
    """The machine model with ``fit`` as its cuDNN recurrent path."""
    shipped_fit = kernels.shipped_fit()
    swapped = kernels.KernelFit(fit, shipped_fit.gemm, shipped_fit.hold_out, shipped_fit.errors)
    with mock.patch.object(machine, "shipped_fit", lambda: swapped):
        yield


def evaluations(
    fitted: Sequence[ReferenceRow], held: Sequence[ReferenceRow], quick: bool
) -> dict[str, list[PairResult]]:
    calibration = shipped_calibration()
    suite = read_facts_suite(*(shipped(name) for name in SUITE_FILES), calibration)
    out = {
        "in-sample (benchmarks.csv)": cpu_gpu(evaluate(fitted, calibration)[0]),
        f"held out ({HELD_OUT_FILE})": cpu_gpu(evaluate(held, calibration)[0]),
        f"held out ({SUITE_FILES[0]}, TF2 2020)": cpu_gpu(pair_results(suite, calibration)),
    }
    if not quick:
        _, _, fits = leave_one_source_out(fitted, calibration)
        out["leave-one-publisher-out (benchmarks.csv)"] = [
            pair
            for lab, fit in fits.items()
            for pair in cpu_gpu(evaluate([r for r in fitted if publisher(r.source) == lab], fit)[0])
        ]
    out["held out, both files"] = [
        *out[f"held out ({HELD_OUT_FILE})"],
        *out[f"held out ({SUITE_FILES[0]}, TF2 2020)"],
    ]
    out["all CPU<->GPU pairs, in-sample + held out"] = [
        *out["in-sample (benchmarks.csv)"],
        *out["held out, both files"],
    ]
    return out


def show(title: str, results: dict[str, list[PairResult]]) -> None:
    print(f"\n## {title}")
    print(
        f"{'evaluation':52s} {'pairs':>5s} {'median x':>8s} {'worst x':>7s} {'faster':>6s} {'med %':>6s}"
    )
    for name, pairs in results.items():
        s = summary(pairs)
        print(
            f"{name:52s} {s['pairs']:>5} {s['median_factor']:>8} {s['worst_factor']:>7} "
            f"{s['faster_side_right']:>6} {s['median_pct']:>6}"
        )
    by_workload: dict[str, list[PairResult]] = defaultdict(list)
    for pair in results["all CPU<->GPU pairs, in-sample + held out"]:
        by_workload[f"{pair.source} {pair.workload}"].append(pair)
    for name, pairs in sorted(by_workload.items()):
        worst = max(pairs, key=lambda p: abs(p.log_error))
        direction = "slow" if worst.log_error > 0 else "fast"
        print(
            f"  {name:40s} {summary(pairs)}  worst: {worst.source_label} -> "
            f"{worst.target_label} predicted {math.exp(abs(worst.log_error)):.2f}x too {direction}"
        )


PROBES_DIR = "cpu-gpu-probes"


REPLAYS = {
    "stored": "without the architecture (no FLOPs, time steps inferred from the op split)",
    "hand": "FLOPs counted by hand, no architecture",
    "architecture": "with the architecture the probe reads (probes.architecture)",
}


def probe_replay(mode: str) -> list[tuple[str, float, float, float, float]]:
    """Per stored probe: workload, published CPU:GPU time ratio, predicted ratio, and the
    predicted 8-vCPU and GPU times against the published ones (factors, >1: predicted slower).

    ``mode`` (``REPLAYS``): ``stored`` drops the probe's ``architecture`` (what a probe of a
    user's .keras file recorded before it read the model: no FLOPs, no recurrent layers);
    ``hand`` gives it instead the hand-counted FLOPs of ``data/cpu-gpu-workloads.csv``;
    ``architecture`` replays it as stored, with what ``probes.architecture`` read."""
    published: dict[str, dict[str, dict[str, str]]] = {}
    with shipped(SUITE_FILES[0]).open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            published.setdefault(row["workload"], {})[row["device"].upper()] = row
    with shipped(SUITE_FILES[1]).open(encoding="utf-8", newline="") as handle:
        flops = {row["workload"]: float(row["flops_per_sample"]) for row in csv.DictReader(handle)}
    out = []
    for path in sorted((shipped_data_dir() / PROBES_DIR).glob("*.json")):
        probe = from_json(path.read_text(encoding="utf-8"))
        if mode != "architecture":
            probe = replace(probe, architecture=None)
        if mode == "hand":
            probe = replace(probe, flops_per_sample=flops[path.stem])
        rows = published[path.stem]
        cpu, gpu = rows["CPU"], next(v for k, v in rows.items() if k != "CPU")
        # the published runs' software (TensorFlow 2 of 2020: Eigen's CPU kernels, not the
        # oneDNN of the probe's TensorFlow), as the end-to-end benchmark predicts every row
        stack = Stack(framework=from_software(cpu["software"]))
        on_cpu = predict(probe, Target(None, 0, vcpus=float(cpu["vcpus"])), stack=stack)
        on_gpu = predict(  # the published global batch, split over the GPUs (MirroredStrategy)
            probe,
            Target(gpu["device"], int(gpu["count"] or 1)),
            stack=stack,
            global_batch=int(gpu["batch_size"]),
        )
        samples = probe.config.samples * probe.config.epochs
        measured_ratio = float(gpu["samples_per_second"]) / float(cpu["samples_per_second"])
        cpu_factor = on_cpu.seconds / samples * float(cpu["samples_per_second"])
        gpu_factor = on_gpu.seconds / samples * float(gpu["samples_per_second"])
        ratio = on_cpu.seconds / on_gpu.seconds
        out.append((path.stem, measured_ratio, ratio, cpu_factor, gpu_factor))
    return out


def show_replay(title: str) -> None:
    for mode, label in REPLAYS.items():
        print(f"\n## {title}; {label}")
        print(
            f"{'workload':18s} {'published CPU:GPU':>17s} {'predicted':>9s} {'ratio error':>11s} "
            f"{'8-vCPU time':>11s} {'GPU time':>9s}"
        )
        factors, gpu_factors, faster_right = [], [], 0
        for workload, measured, predicted, cpu_factor, gpu_factor in probe_replay(mode):
            error = predicted / measured
            factors.append(max(error, 1 / error))
            gpu_factors.append(max(gpu_factor, 1 / gpu_factor))
            faster_right += (predicted > 1) == (measured > 1)
            print(
                f"{workload:18s} {measured:>17.2f} {predicted:>9.2f} {error:>10.2f}x "
                f"{cpu_factor:>10.2f}x {gpu_factor:>8.2f}x"
            )
        if factors:
            print(
                f"ratio error: median {percentile(factors, 50):.2f}x, worst {max(factors):.2f}x; "
                f"faster side right {faster_right}/{len(factors)}; "
                f"GPU time error: median {percentile(gpu_factors, 50):.2f}x, "
                f"worst {max(gpu_factors):.2f}x"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="skip leave-one-source-out")
    args = parser.parse_args()
    started = time.perf_counter()
    fitted = read_reference(shipped("benchmarks.csv"))
    held = read_reference(shipped(HELD_OUT_FILE))
    with recurrent_path(PRIOR_RECURRENT):
        show("before: cuDNN recurrent path from priors", evaluations(fitted, held, args.quick))
        show_replay("before: TF2 models from probes taken here, cuDNN path from priors")
    after = evaluations(fitted, held, args.quick)
    show("after: cuDNN recurrent path fitted on DeepBench kernels", after)
    show_replay("after: TF2 models from probes taken here, cuDNN path fitted")
    print(f"\ntargets: {TARGETS}")
    for name, pairs in after.items():
        s = summary(pairs)
        misses = [
            key
            for key, target in TARGETS.items()
            if (s[key] < target if key == "faster_side_right" else s[key] > target)
        ]
        print(f"  {name:52s} {'meets all' if not misses else 'MISSES ' + ', '.join(misses)}")
    print(f"took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
