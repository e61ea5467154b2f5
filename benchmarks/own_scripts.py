"""Users' own training scripts: the whole run predicted from ``advisor probe -- COMMAND`` against
the same command run to its end, interleaved (probe, then real run, script after script).

    .venv/bin/python benchmarks/own_scripts.py [--passes 2] [--budget 10] [--out FILE]
    .venv/bin/python benchmarks/own_scripts.py --table benchmarks/results/own_scripts.json

The scripts (``benchmarks/scripts/``, ``examples/keras_mnist.py`` and ``examples/torch_mnist.py``)
are shaped like keras-io's, pytorch/examples', transformers/examples' and Lightning's examples:
Keras ``fit`` on arrays (an MLP, a convnet, a bidirectional LSTM, the MLP under JAX), on a
``tf.data`` pipeline that augments on the host, two loops Keras does not run that mark their
steps with ``advisor.probe`` (a GradientTape loop, one with gradient accumulation and a
schedule), and PyTorch read through its own hooks with no edit: MNIST with accumulation, a
CIFAR convnet whose DataLoader workers augment, a Hugging Face ``Trainer`` fine-tune, a
Lightning module; a JAX loop whose jitted step applies optax updates, and a Flax NNX loop
whose optimizer applies them. Each is
probed as a user does (``advisor probe --json``, a process of its own) and then run whole under a
stopwatch from start to exit: the error is the probe's ``fit_seconds`` over that wall time.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ADVISOR = ROOT / ".venv" / "bin" / "advisor"
SCRIPTS = ROOT / "benchmarks" / "scripts"
SCRIPT_OF = {
    "keras_convnet": ROOT / "examples" / "keras_mnist.py",
    "torch_mnist": ROOT / "examples" / "torch_mnist.py",
}
"""Cases whose script is the README's example, not one of ``SCRIPTS``."""
CASES: dict[str, list[str]] = {
    "keras_mlp": ["--epochs", "20"],
    "keras_convnet": ["--epochs", "10", "--samples", "8000"],
    "keras_lstm": ["--epochs", "3"],
    "keras_tfdata_augment": ["--epochs", "8"],
    "tf_custom_loop": ["--epochs", "20", "--samples", "60000"],
    "tf_accumulation": ["--epochs", "10"],
    "keras_jax_mlp": ["--epochs", "25"],
    "torch_mnist": ["--epochs", "3", "--samples", "12800", "--accumulate", "4"],
    "torch_cifar_workers": ["--epochs", "3"],
    "hf_trainer": ["--epochs", "3"],
    "lightning_module": ["--epochs", "4"],
    "jax_optax_mlp": ["--epochs", "20", "--samples", "60000"],
    "flax_nnx_mlp": ["--epochs", "20", "--samples", "60000"],
}
TOLD = {
    "torch_mnist": ["--epochs", "3"],
    "torch_cifar_workers": ["--epochs", "3"],
    "jax_optax_mlp": ["--epochs", "20", "--samples", "60000"],
    "flax_nnx_mlp": ["--epochs", "20", "--samples", "60000"],
}
"""What the probe is told, as a user would tell it: a plain PyTorch loop does not say its
epochs, a JAX loop neither its epochs nor its samples (a Keras ``fit``, Hugging Face's and
Lightning's ``Trainer`` do)."""
TARGETS = {"median": 0.10, "worst": 0.25, "probe_over_budget_s": 5.0}


def command(case: str) -> list[str]:
    script = SCRIPT_OF.get(case, SCRIPTS / f"{case}.py")
    return [sys.executable, str(script), *CASES[case]]


def probe(case: str, budget: float, home: Path) -> dict[str, Any]:
    began = time.perf_counter()
    done = subprocess.run(
        [str(ADVISOR), "probe", "--json", "--budget", str(budget), "--name", f"bench_{case}",
         *TOLD.get(case, []), "--", *command(case)],
        capture_output=True, text=True, check=False, env={**_env(), "ADVISOR_HOME": str(home)},
    )  # fmt: skip
    wall = time.perf_counter() - began
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-500:], "wall": wall}
    said = json.loads(done.stdout)
    return {"fit_seconds": said["fit_seconds"], "interval_80": said["interval_80"],
            "step_seconds": said["step_seconds"], "sizes": said["sizes"], "wall": wall}  # fmt: skip


def real(case: str) -> float:
    began = time.perf_counter()
    subprocess.run(command(case), capture_output=True, check=True, env=_env())
    return time.perf_counter() - began


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}


def run(passes: int, budget: float, home: Path, cases: list[str]) -> dict[str, Any]:
    rows = []
    for number in range(passes):
        for case in cases:  # interleaved: each script's probe, then its real run
            probed = probe(case, budget, home)
            seconds = real(case)
            row = {"pass": number, "case": case, "real_seconds": round(seconds, 2), **probed}
            if "fit_seconds" in probed:
                row["error"] = round(probed["fit_seconds"] / seconds - 1, 4)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"budget": budget, "rows": rows, "figures": figures(rows, budget)}


def figures(rows: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    scored = [r for r in rows if isinstance(r.get("error"), float)]
    by_case: dict[str, list[float]] = {}
    for r in scored:
        by_case.setdefault(r["case"], []).append(r["error"])
    medians = {case: statistics.median(errors) for case, errors in by_case.items()}
    absolute = [abs(e) for e in medians.values()]
    inside = [r for r in scored if r["interval_80"][0] <= r["real_seconds"] <= r["interval_80"][1]]
    return {
        "runs": len(rows), "scored": len(scored), "cases": len(medians),
        "median_case_error": round(statistics.median(absolute), 4) if absolute else math.nan,
        "worst_case_error": round(max(absolute), 4) if absolute else math.nan,
        "median_signed": round(statistics.median(medians.values()), 4) if medians else math.nan,
        "by_case": {case: round(error, 4) for case, error in medians.items()},
        "inside_80": f"{len(inside)} of {len(scored)}",
        "probe_wall_max": round(max(r["wall"] for r in rows), 2),
        "probe_over_budget_max": round(max(r["wall"] for r in rows) - budget, 2),
        "targets": TARGETS,
    }  # fmt: skip


def table(blob: dict[str, Any]) -> None:
    print("| case | real s (median) | predicted s (median) | error (median of passes) |")
    print("|---|---:|---:|---:|")
    for case in CASES:
        mine = [r for r in blob["rows"] if r["case"] == case and "fit_seconds" in r]
        if mine:
            real_s = statistics.median(r["real_seconds"] for r in mine)
            predicted = statistics.median(r["fit_seconds"] for r in mine)
            error = blob["figures"]["by_case"][case]
            print(f"| {case} | {real_s:.1f} | {predicted:.1f} | {error:+.1%} |")
    print(json.dumps({k: v for k, v in blob["figures"].items() if k != "by_case"}, indent=1))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "own_scripts.json"
    )
    parser.add_argument("--table", type=Path, help="print the table of a finished run")
    parser.add_argument("--cases", help="comma-separated scripts to run (default: all)")
    args = parser.parse_args(argv)
    cases = args.cases.split(",") if args.cases else list(CASES)
    if unknown := [case for case in cases if case not in CASES]:
        parser.error(f"unknown cases {unknown}; the cases are {', '.join(CASES)}")
    if args.table:
        table(json.loads(args.table.read_text()))
        return 0
    import tempfile

    with tempfile.TemporaryDirectory(prefix="advisor-own-scripts-") as home:
        blob = run(args.passes, args.budget, Path(home), cases)
    blob["machine"] = (
        "shared 2-vCPU development VM (AMD EPYC, family 26), TensorFlow 2.21, Keras 3.15, "
        "PyTorch 2.13 (CPU), transformers 5.24, Lightning 2.6, JAX 0.10, optax 0.2, Flax 0.12"
    )
    blob["date"] = time.strftime("%Y-%m-%d")
    args.out.write_text(json.dumps(blob, indent=1) + "\n")
    table(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
