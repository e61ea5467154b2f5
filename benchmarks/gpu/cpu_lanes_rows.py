"""The GPU host's CPU lanes as CPU-VM rows: a modern framework on 2 and 8 logical CPUs.

``benchmarks/gpu/accelerator_check.py`` probed every zoo workload on 2 and 8 logical CPUs of the
device tool's H200 host (an Intel Xeon, family 6 model 207: Emerald Rapids), the GPU hidden,
under Keras on JAX and on PyTorch. Where the probe stepped the workload's own batch
(``extrapolated=0`` in its notes: the small models), its steady rate is a measurement of those
CPUs at that batch. This script writes those rates as reference rows
(``benchmarks/results/cpu-lanes-20261126.csv``) and predicts them from this machine's stored
probes, as the end-to-end benchmark predicts the published CPU-VM rows: under the row's own
backend (``end_to_end_jax_h200.json``, ``end_to_end_torch_h200.json``) and from TensorFlow
(``end_to_end.json``):

    .venv/bin/python benchmarks/gpu/cpu_lanes_rows.py [--write] [--score [--whole-cores]]

They are not a CPU-VM row of ``data/`` yet: that check did not record what its lanes' logical
CPUs were in cores (a cloud VM's vCPUs are hyperthreads, two to a core; Linux numbers a host's
cores before their second threads, so a lane of CPUs 0-1 may have held two whole cores), and
its lanes ran side by side. The check now records each lane's SMT siblings and reference
product rate (``accelerator_check._lane_cores``). The probes of the heavy workloads extrapolate
their batch and are left out.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"
RUNS = (
    (
        "accelerator-check-20261126-jax/run1",
        "keras-3.15-jax-0.11-pip",
        "Keras 3.15.1 on JAX 0.11.2",
        "H200",
    ),
    (
        "accelerator-check-20261126/run1",
        "keras-3.15-torch-2.11-pip",
        "Keras 3.15.1 on PyTorch 2.11.0",
        "H200",
    ),
    (
        "accelerator-check-20261126/run2",
        "keras-3.15-torch-2.11-pip",
        "Keras 3.15.1 on PyTorch 2.11.0",
        "H200",
    ),
    (
        "accelerator-check-20261126-h100-jax",
        "keras-3.15-jax-0.11-pip",
        "Keras 3.15.1 on JAX 0.11.2",
        "H100",
    ),
)
"""The check's runs with CPU lanes: folder, the software as the reference files spell it, the
stack in words, and the GPU of the host."""
FAMILY = "emeraldrapids"
"""Family 6, model 207 (docs/SOURCES.md, "This machine's CPU")."""
SOURCE = "advisor-cpu-lanes-20261126"
OUT = RESULTS / "cpu-lanes-20261126.csv"
PROBES = (
    ("end_to_end_jax_h200.json", "jax"),
    ("end_to_end_torch_h200.json", "torch"),
    ("end_to_end.json", ""),
)
"""Stored probes of this machine: the file, and the backend of the rows each predicts ("": all)."""
COLUMNS = (
    "source", "workload", "device", "vcpus", "cpu_family", "software", "precision",
    "batch_size", "epochs", "metric", "value", "notes",
)  # fmt: skip


def _notes(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split("; ") if "=" in part)


def rows() -> list[dict[str, str]]:
    """Every CPU lane's probe that stepped its workload's own batch, as a reference row."""
    found = []
    for folder, software, stack, gpu in RUNS:
        path = RESULTS / folder / "probes.csv"
        with path.open(newline="") as handle:
            probes = list(csv.DictReader(handle))
        cores = lane_cores(RESULTS / folder / "summary.json")
        for probe in probes:
            if probe["device"] != "CPU" or probe["metric"] != "samples_per_second":
                continue
            total = next(
                p for p in probes
                if p["metric"] == "seconds_total" and p["source"] == probe["source"]
                and p["workload"] == probe["workload"]
            )  # fmt: skip
            notes = _notes(total["notes"])
            if notes.get("extrapolated") != "0":
                continue
            found.append({
                "source": SOURCE, "workload": probe["workload"], "device": "CPU",
                "vcpus": probe["vcpus"], "cpu_family": FAMILY, "software": software,
                "precision": "fp32", "batch_size": probe["batch_size"], "epochs": "",
                "metric": "samples_per_second", "value": f"{float(probe['value']):.1f}",
                "notes": (
                    f"our own measurement: the steady step of advisor's probe at the workload's "
                    f"batch on {probe['vcpus']} logical CPUs of the device tool's {gpu} host "
                    f"({probe['cpu_family']}), the GPU hidden, {stack}, lanes side by side "
                    f"(benchmarks/results/{folder}/probes.csv, {probe['source']}; "
                    f"step {float(notes['step_s']) * 1e3:.3g} ms, "
                    f"{float(notes['step_low']) * 1e3:.3g}-{float(notes['step_high']) * 1e3:.3g})"
                    + cores.get(probe["vcpus"], "")
                ),
            })  # fmt: skip
    return found


def lane_cores(summary: Path) -> dict[str, str]:
    """Per lane's logical CPUs, what its notes say of its cores (the check records each lane's
    SMT sibling sets: ``lane cpu-2: CPUs [0, 1], SMT sibling sets 0 1``); nothing for the runs
    from before it did."""
    found = {}
    for line in json.loads(summary.read_text()).get("not_run", []):
        match = re.search(r"CPUs \[([\d, ]+)\], SMT sibling sets ([\d,\- ]+)", line)
        if match:
            cpus = len(match.group(1).split(","))
            sets = len(match.group(2).split())
            found[str(cpus)] = f"; {cpus // sets} thread(s) per core: {sets} SMT sibling sets"
    return found


def threads_per_core(notes: str) -> int:
    """What a row's notes say of its lane's threads per core (0: not recorded)."""
    match = re.search(r"(\d+) thread\(s\) per core", notes)
    return int(match.group(1)) if match else 0


def score(whole_cores: bool = False) -> None:
    """The rows predicted from each file of stored probes (``advisor.fitting.end_to_end.score``). ``whole_cores``
    reads both sides as whole cores: the probes' VM, whose kernel reports one thread per core
    (the stored probes predate the fingerprint's topology), and the lanes the check did not
    record, CPUs 0 to n-1 of a host whose first CPU numbers are its cores; a lane whose cores
    were recorded (the H100 host's) is read as recorded either way."""
    from advisor.fitting import calibrate
    from advisor.fitting.end_to_end import report, stored_probes, target_of
    from advisor.fitting.end_to_end import score as score_rows
    from benchmarks.end_to_end import print_report

    def lane(row: Any) -> Any:
        recorded = threads_per_core(row.notes)
        return replace(target_of(row), threads_per_core=recorded or (1 if whole_cores else 0))

    rows_ = calibrate.read_rows([OUT])
    for name, backend in PROBES:
        blob = json.loads((RESULTS / name).read_text())
        probes = stored_probes(blob)
        if whole_cores:
            probes = {
                workload: [replace(p, device=replace(p.device, threads_per_core=1)) for p in runs]
                for workload, runs in probes.items()
            }
        wanted = [r for r in rows_ if not backend or r.framework.name == backend]
        print(f"== from {name} ({blob.get('backend') or 'tensorflow'} probes of this machine)")
        print_report(report(score_rows(probes, [], wanted, lane)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUT.name}")
    parser.add_argument("--score", action="store_true", help="predict them from stored probes")
    parser.add_argument(
        "--whole-cores", action="store_true", help="--score reading both sides as whole cores"
    )
    args = parser.parse_args(argv)
    if args.write or not args.score:
        found = rows()
        target = OUT.open("w", newline="") if args.write else sys.stdout
        writer = csv.DictWriter(target, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(found)
        if args.write:
            target.close()
            print(f"wrote {OUT} ({len(found)} rows)")
    if args.score:
        score(args.whole_cores)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
