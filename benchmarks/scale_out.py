"""Many devices against the published runs at N: data-parallel throughput and scaling efficiency.

    .venv/bin/python benchmarks/scale_out.py [--probes benchmarks/results/end_to_end.json]
        [--out benchmarks/results/scale_out.json]

Each published run of ``data/scaling-published.csv`` (NVIDIA's DeepLearningExamples, TensorFlow's
2017 tf_cnn_benchmarks tables, Lambda's logs, MLPerf's TPU v3 slices; 1 to 1,024 devices) is
predicted from this machine's stored probes of its workload (the end-to-end benchmark's, a
user's path: a probe here to a time there), at its devices, its global batch, its precision and
its software, and its throughput compared with the published one: the factor between the two
(max of the ratio and its inverse) and the signed error. Scaling efficiency is a run's rate over
N times its table's smallest run (one GPU, or one node where a table starts there), the
prediction's the same way, told apart in points.

BERT-large's pre-training rows (sequences of 128 and 512 tokens, LAMB, gradient accumulation)
are not the zoo's BERT-large (SQuAD fine-tuning at 384 tokens), and Goyal et al.'s 2017 runs of
ResNet-50 on 8 and 256 P100s ran Caffe2, a framework advisor does not model: they count for
scaling efficiency alone (``EFFICIENCY_ONLY``), their absolute figures are listed but not scored.

Many-core CPUs: the published single-node fp32 runs of ``data/cpu-scaling-published.csv`` whose
workload is the zoo's and whose figure is samples/s (PaddlePaddle with MKL-DNN and MKLML on 1-40
Skylake cores, Keras on MXNet-MKL on 4 and 72 vCPUs: 2017-2018 builds of Intel's libraries;
TensorFlow 2.x's tf_cnn_benchmarks training from OpenBenchmarking.org on 16-192 cores of Sapphire
Rapids, Zen 4 and Zen 5 parts), predicted under today's software at their cores (whole cores where
only cores are given) or vCPUs, and summed up apart by framework era and, for today's
frameworks, by the threads they are predicted at.

No parameter of the scaling (the per-device batch, the ring all-reduce on the node's
interconnect and the nodes' network, each replica's host) is fitted on these rows: every run of
two or more devices is held out. The single-device runs of NVIDIA's and Lambda's tables are in
the calibration's fit. Runs over several nodes go over their system's published network
(``data/node-networks.csv``: a DGX's InfiniBand ports, an AWS instance's network), named by
their source (``SYSTEMS``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from advisor.errors import UsageError
from advisor.estimate import catalog
from advisor.estimate.predict import predict
from advisor.estimate.prediction import Target
from advisor.fitting import cpu_law
from advisor.fitting.published import ScalingRow, read_scaling
from advisor.locations import shipped_data_dir
from advisor.workloads import zoo
from probes import history
from probes.result import ProbeResult

ROOT = Path(__file__).resolve().parents[1]
PROBES = ROOT / "benchmarks" / "results" / "end_to_end.json"
TARGETS = {"median_factor": 1.25, "worst_factor": 2.0, "efficiency_points_8": 15.0}
EFFICIENCY_ONLY = ("pretrain", "caffe2")
"""Sources whose id holds one of these ran another workload than the zoo's of the same name, or
under software advisor does not model."""
MODERN_FRAMEWORKS = ("tensorflow-2", "pytorch", "jax")
"""Framework ids of today's software (oneDNN TensorFlow 2.x, PyTorch, JAX/XLA). The many-core law
was fitted on TensorFlow 1.2 and held to 2017-2018 builds (PaddlePaddle, Keras on MXNet,
TensorFlow 1.x); issue 44 asks it to be judged on today's frameworks apart, since a refit follows
them, not the old libraries."""
THREAD_BANDS = ((1, 16), (17, 64), (65, 10_000))
"""Threads (vCPUs, or whole cores where a row gives only cores) a CPU row is predicted at: the
law's error by core count is what a refit of its scaling needs."""


SYSTEMS = (
    ("dgxa100", ("nvidia", "dgx-a100")),
    ("dgx2h", ("nvidia", "dgx-2h")),
    ("dgx2", ("nvidia", "dgx-2")),
    ("dgx1", ("nvidia", "dgx-1")),
    ("aws-k80", ("aws", "p2.8xlarge")),
    ("big-basin", ("facebook", "big-basin")),
)
"""The machine a published table's source ran on (its id names it), for its network."""


def target_of(run: ScalingRow) -> Target:
    """A TPU slice is named by its chips (``tpu-v3-32``); GPUs are counted, per node, over the
    system's network where the run spans nodes."""
    if run.row.device.lower().startswith("tpu"):
        return Target(run.row.device, 1)
    if run.nodes <= 1:
        return Target(run.row.device, run.devices)
    system = next((s for key, s in SYSTEMS if key in run.row.source), None)
    network = catalog.node_network(*system) if system else None
    return Target(
        run.row.device,
        run.devices // run.nodes,
        nodes=run.nodes,
        network_gbps=network or 0.0,
    )


def predicted_rate(probes: list[ProbeResult], run: ScalingRow) -> float | None:
    """The run's samples/s predicted from each stored probe, their median; None where the
    device is not in the catalog or the run does not fit."""
    rates = []
    for probe in probes:
        result = predict(
            probe,
            target_of(run),
            precision=run.row.precision,
            stack=run.row.stack,
            global_batch=run.row.batch_size,
            augmented=run.row.augmented,
        )
        if not math.isfinite(result.seconds) or result.step_seconds <= 0 or not result.fits:
            return None
        rates.append(run.row.batch_size / result.step_seconds)
    return statistics.median(rates)


def scored(runs: list[ScalingRow], probes: dict[str, list[ProbeResult]]) -> list[dict[str, Any]]:
    out = []
    for run in runs:
        r = run.row
        if r.workload not in probes or catalog.accelerator(r.device) is None:
            continue
        rate = predicted_rate(probes[r.workload], run)
        if rate is None:
            continue
        out.append(
            {
                "source": r.source,
                "workload": r.workload,
                "device": r.device,
                "devices": run.devices,
                "nodes": run.nodes,
                "precision": r.precision,
                "software": r.software,
                "batch_per_device": run.batch_per_device,
                "published": r.value,
                "predicted": round(rate, 2),
                "factor": round(max(rate / r.value, r.value / rate), 4),
                "signed_pct": round(100 * (rate / r.value - 1), 2),
            }
        )
    return with_efficiency(out)


def with_efficiency(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's scaling efficiency, published and predicted, against its table's smallest
    run of the same workload, device, precision, software and per-device batch."""
    tables: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        key = (row["source"], row["workload"], row["device"], row["precision"], row["software"])
        tables[(*key, row["batch_per_device"])].append(row)
    for table in tables.values():
        base = min(table, key=lambda row: row["devices"])
        for row in table:
            if row is base:
                continue
            n = row["devices"] / base["devices"]
            published = row["published"] / base["published"] / n
            predicted = row["predicted"] / base["predicted"] / n
            row["base_devices"] = base["devices"]
            row["efficiency_published"] = round(published, 4)
            row["efficiency_predicted"] = round(predicted, 4)
            row["efficiency_points"] = round(100 * (predicted - published), 2)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    points = [abs(row["efficiency_points"]) for row in rows if "efficiency_points" in row]
    rows = [row for row in rows if not _efficiency_only(row)]
    if not rows:
        return {"rows": 0, "efficiency_rows": len(points)}
    factors = sorted(row["factor"] for row in rows)
    return {
        "rows": len(rows),
        "median_factor": round(statistics.median(factors), 3),
        "p90_factor": round(factors[int(0.9 * (len(factors) - 1))], 3),
        "worst_factor": round(factors[-1], 3),
        "median_signed_pct": round(statistics.median(row["signed_pct"] for row in rows), 1),
        "efficiency_rows": len(points),
        "median_efficiency_points": round(statistics.median(points), 1) if points else None,
        "worst_efficiency_points": round(max(points), 1) if points else None,
    }


def _efficiency_only(row: dict[str, Any]) -> bool:
    return any(marker in row["source"] for marker in EFFICIENCY_ONLY)


def figures(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    one_node = [row for row in rows if row["nodes"] <= 1 or row["device"].startswith("tpu")]
    sets = {
        "one device (mostly fitted)": [row for row in one_node if row["devices"] == 1],
        "2-8 devices, one node (held out)": [
            row for row in one_node if 2 <= row["devices"] <= 8 and not _tpu(row)
        ],
        "9-16 devices, one node (held out)": [
            row for row in one_node if row["devices"] > 8 and not _tpu(row)
        ],
        "TPU slices (held out)": [row for row in one_node if _tpu(row)],
        "several nodes (held out)": [row for row in rows if row not in one_node],
    }
    out = {name: summary(chosen) for name, chosen in sets.items()}
    for source in sorted({row["source"].split("-")[0] for row in rows}):
        held = [
            row for row in one_node if row["devices"] > 1 and row["source"].split("-")[0] == source
        ]
        out[f"publisher {source}, 2+ devices on one node"] = summary(held)
    return out


def _tpu(row: dict[str, Any]) -> bool:
    return bool(row["device"].lower().startswith("tpu"))


def print_report(found: dict[str, dict[str, Any]]) -> None:
    head = f"{'':46s} {'rows':>5s} {'median':>7s} {'p90':>6s} {'worst':>6s} {'signed%':>8s}"
    print(head + f" {'eff rows':>8s} {'eff pts median':>14s} {'worst':>6s}")
    for name, f in found.items():
        if not f["rows"]:
            continue  # efficiency-only sets are in the JSON
        print(
            f"{name:46s} {f['rows']:5d} {f['median_factor']:7.3f} {f['p90_factor']:6.3f} "
            f"{f['worst_factor']:6.2f} {f['median_signed_pct']:+8.1f} {f['efficiency_rows']:8d} "
            f"{_points(f['median_efficiency_points']):>14s} "
            f"{_points(f['worst_efficiency_points']):>6s}"
        )


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def cpu_scored(path: Path, probes: dict[str, list[ProbeResult]]) -> list[dict[str, Any]]:
    """The many-core CPU runs predicted from the stored probes (see the module's docstring)."""
    with path.open(newline="", encoding="utf-8") as handle:
        runs = [
            row
            for row in csv.DictReader(handle)
            if row["workload"] in probes
            and row["metric"] == "samples_per_second"
            and row["precision"] == "fp32"
            and row["nodes"] in ("", "1")
            and row["cpu_family"]
            and (row["vcpus"] or row["cores"])
        ]
    out = []
    for row in runs:
        whole = not row["vcpus"]
        vcpus = float(row["cores"] if whole else row["vcpus"])
        batch = int(row["batch_size"] or zoo.get(row["workload"]).batch_size)
        target = Target(None, 0, vcpus, row["cpu_family"], threads_per_core=1 if whole else 0)
        rates = []
        for probe in probes[row["workload"]]:
            result = predict(probe, target, global_batch=batch)
            rates.append(batch / result.step_seconds)
        rate, published = statistics.median(rates), float(row["value"])
        out.append(
            {
                "source": row["source"],
                "workload": row["workload"],
                "framework": row["framework"],
                "cpu_family": row["cpu_family"],
                "vcpus": vcpus,
                "whole_cores": whole,
                "batch": batch,
                "published": published,
                "predicted": round(rate, 2),
                "factor": round(max(rate / published, published / rate), 4),
                "signed_pct": round(100 * (rate / published - 1), 2),
            }
        )
    return out


def modern(row: dict[str, Any]) -> bool:
    """A row of today's frameworks (``MODERN_FRAMEWORKS``), not of the 2017-2018 builds."""
    return row["framework"].startswith(MODERN_FRAMEWORKS)


def cpu_figures(cpu: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The many-core CPU figures over all rows, then by framework era, then today's rows by the
    threads they are predicted at: the old builds alone hid whether the law suits today's
    software, and its error by core count is where a refit starts."""
    today = [row for row in cpu if modern(row)]
    fitted = {family for family, _, _ in cpu_law.series()}  # their ratios set today's law
    found = {
        "many-core CPUs, one node (held out)": summary(cpu),
        "many-core CPUs, 2017-2018 builds": summary([row for row in cpu if not modern(row)]),
        "many-core CPUs, today's frameworks": summary(today),
        "many-core CPUs today, families cpu_law fitted": summary(
            [row for row in today if row["cpu_family"] in fitted]
        ),
        "many-core CPUs today, other families (held out)": summary(
            [row for row in today if row["cpu_family"] not in fitted]
        ),
    }
    for low, high in THREAD_BANDS:
        band = [row for row in today if low <= row["vcpus"] <= high]
        label = f"{low}-{high}" if high < THREAD_BANDS[-1][1] else f"{low}+"
        found[f"many-core CPUs today, {label} threads"] = summary(band)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--probes", type=Path, default=PROBES, help="stored probes (end_to_end)")
    parser.add_argument("--runs", type=Path, default=shipped_data_dir() / "scaling-published.csv")
    parser.add_argument(
        "--cpu-runs", type=Path, default=shipped_data_dir() / "cpu-scaling-published.csv"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        runs = read_scaling(args.runs)
        blob = json.loads(args.probes.read_text(encoding="utf-8"))
        probes = {
            w: [history.from_json(p) for p in ps]
            for w, ps in blob["probes"].items()
            if w in zoo.names()
        }
    except (OSError, ValueError, KeyError, TypeError) as error:
        parser.exit(2, f"scale_out: cannot read the probes or runs: {error}\n")
    except UsageError as error:
        parser.exit(2, f"scale_out: {error}\n")
    rows = scored(runs, probes)
    found = figures(rows)
    try:
        cpu = cpu_scored(args.cpu_runs, probes)
    except (OSError, ValueError, KeyError) as error:
        parser.exit(2, f"scale_out: cannot read the CPU runs: {error}\n")
    found.update(cpu_figures(cpu))
    print_report(found)
    for row in sorted(cpu, key=lambda r: (r["source"], r["workload"], r["vcpus"])):
        cores = "cores" if row["whole_cores"] else "vCPUs"
        print(
            f"  {row['source']:22s} {row['workload']:12s} {row['framework'][:30]:30s} "
            f"{row['vcpus']:4g} {cores:5s} published {row['published']:8.2f} "
            f"predicted {row['predicted']:8.2f} ({row['signed_pct']:+.0f}%)"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {"machine": blob.get("machine"), "figures": found, "rows": rows, "cpu": cpu}
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
