"""Where a JAX loop's predicted time goes against its real run (issue "Your own training": every
pass of the two JAX loops of ``benchmarks/own_scripts.py`` is predicted long, by 1-17%).

The probe splits a run into the time to its first step (interpreter, imports, data, the first
trace: ``startup_seconds``), its steady steps and each epoch's boundary (the evaluation pass).
A real run's parts are read without touching it, from real runs of two lengths: ``LONG`` and
``SHORT`` epochs differ by ``LONG - SHORT`` epochs of steps and boundaries, so their difference
over that count is one real epoch, and the shorter run less its epochs is what a run pays once
(its start and its exit). Interleaved per pass: the probe (told the long run), the short run,
the long run.

    .venv/bin/python benchmarks/research/jax_loop_parts.py [--passes 3] [--cases A,B]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

ROOT = Path(__file__).resolve().parents[2]
ADVISOR = Path(sys.executable).parent / "advisor"
SCRIPTS = ROOT / "benchmarks" / "scripts"
CASES = ("jax_optax_mlp", "flax_nnx_mlp")
SAMPLES, LONG, SHORT, BATCH = 60_000, 20, 10, 128
STEPS = len(range(0, SAMPLES - 127, BATCH))
"""Steps an epoch of the scripts takes (their loop: ``range(0, samples - 127, 128)``)."""


def script(case: str, epochs: int) -> list[str]:
    sizes = ["--epochs", str(epochs), "--samples", str(SAMPLES)]
    return [sys.executable, str(SCRIPTS / f"{case}.py"), *sizes]


def real(case: str, epochs: int) -> float:
    began = time.perf_counter()
    subprocess.run(script(case, epochs), capture_output=True, check=True)
    return time.perf_counter() - began


def probe(case: str, home: str, budget: float) -> dict[str, float]:
    told = ["--epochs", str(LONG), "--samples", str(SAMPLES)]
    done = subprocess.run(
        [str(ADVISOR), "probe", "--json", "--budget", f"{budget:g}", "--name", case, *told,
         "--", *script(case, LONG)],
        capture_output=True, text=True, check=True, env={**os.environ, "ADVISOR_HOME": home},
    )  # fmt: skip
    said = json.loads(done.stdout)
    return {k: said[k] for k in ("fit_seconds", "startup_seconds", "step_seconds",
                                 "epoch_overhead_seconds", "predicted_seconds")}  # fmt: skip


def parts(rows: list[dict[str, float]]) -> dict[str, float]:
    """Medians over the passes: the real run's epoch and once-paid parts, the probe's."""
    epoch = [(r["long"] - r["short"]) / (LONG - SHORT) for r in rows]
    once = [r["short"] - SHORT * e for r, e in zip(rows, epoch, strict=True)]
    probed_epoch = [STEPS * r["step_seconds"] + r["epoch_overhead_seconds"] for r in rows]
    return {
        "real_epoch_s": round(statistics.median(epoch), 3),
        "probed_epoch_s": round(statistics.median(probed_epoch), 3),
        "real_step_ms": round(1e3 * statistics.median(epoch) / STEPS, 3),
        "probed_step_ms": round(1e3 * statistics.median(r["step_seconds"] for r in rows), 3),
        "real_once_s": round(statistics.median(once), 2),
        "probed_startup_s": round(statistics.median(r["startup_seconds"] for r in rows), 2),
        "real_long_s": round(statistics.median(r["long"] for r in rows), 2),
        "probed_long_s": round(statistics.median(r["fit_seconds"] for r in rows), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    rows: dict[str, list[dict[str, float]]] = {case: [] for case in cases}
    with TemporaryDirectory() as home:
        for number in range(args.passes):
            for case in cases:
                row = probe(case, home, args.budget)
                row["short"], row["long"] = real(case, SHORT), real(case, LONG)
                rows[case].append(row)
                print(json.dumps({"pass": number + 1, "case": case, **row}), flush=True)
    print(json.dumps({case: parts(found) for case, found in rows.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
