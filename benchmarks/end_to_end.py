"""End to end, in absolute terms: this machine's probe to every published single-device figure.

    .venv/bin/python benchmarks/end_to_end.py [--passes 3] [--budget 20]
        [--out benchmarks/results/end_to_end.json]
    .venv/bin/python benchmarks/end_to_end.py --rescore benchmarks/results/end_to_end.json
    .venv/bin/python benchmarks/end_to_end.py load [--probes 3] [--model mnist_mlp]
    .venv/bin/python benchmarks/end_to_end.py --backend torch --sources accelerator-check-20261126

The path a user takes: ``advisor probe --model W --fresh`` here (a real probe, in its own
process, as the command line runs it), then the prediction of each published measurement of W
(``data/benchmarks.csv``, ``data/calibration-*.csv``) at its device, batch, precision and
software (what its framework ran float32 as, its tensor layout), compared with the published
figure itself, samples per second or seconds of the whole run. A fitted source is predicted by
the device model fitted without its publisher (``calibrate.leave_one_source_out``), a held-out
file (``calibration-holdout-*.csv``) by the shipped fit. Passes go through the workloads in
alternating order, each probe beside the fixed reference kernel it times itself; the figures
are the medians over passes, and the passes' spread per row is reported apart (how much a fresh
probe moves a prediction). ``--rescore`` re-predicts from the stored probes without probing.

``load``: probes of one workload while another process keeps one core busy (a spinning Python
loop), each predicting a T4 and an A100: do the GPU predictions stay within 1.3x of each other,
and does each probe say the machine was busy?

``--backend`` probes under another Keras backend (``advisor probe --backend``) and scores only
the rows that ran under that framework, ``--sources`` only the rows of those sources: the H200
runs of ``benchmarks/gpu/accelerator_check.py`` ran Keras on PyTorch and on JAX, and a user of a
backend probes under it. ``--rescore`` scores the rows its run scored unless told otherwise.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.estimate import Target, predict
from advisor.fitting.end_to_end import (
    published_rows,
    report,
    rescore,
    score,
    stability,
)
from benchmarks import factor_table
from probes import history, reference
from probes.result import ProbeResult

ROOT = Path(__file__).resolve().parent.parent
ADVISOR = ROOT / ".venv" / "bin" / "advisor"


def probe_here(workload: str, budget: float, home: Path, backend: str = "") -> ProbeResult:
    """A fresh probe through the command line, in a process of its own, read back from the
    store it was saved to."""
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    command = [str(ADVISOR), "probe", "--model", workload, "--fresh", "--json"]
    command += ["--budget", str(budget)] + (["--backend", backend] if backend else [])
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=600)
    from advisor.store import connect

    os.environ["ADVISOR_HOME"] = str(home)
    db = connect()
    stored = history.latest(db, workload)
    db.close()
    return max(stored, key=lambda p: p.created_at)


def print_report(figures: dict[str, Any]) -> None:
    def line(label: str, s: dict[str, Any]) -> None:
        if s.get("rows"):
            print(
                factor_table.row(label, 42, s["rows"], s, s["coverage_80"], s["worst_pass_spread"])
            )

    print(factor_table.header(42, ("spread",)))
    for name in ("all", "gpu", "cpu", "tpu"):
        line(name, figures.get(name, {}))
    for key in ("set", "precision", "workload", "device", "source"):
        print(f"-- by {key}")
        for name, s in figures.get(key, {}).items():
            line(f"  {name}", s)


def run(args: argparse.Namespace) -> dict[str, Any]:
    fitted, held = published_rows(args.sources, args.backend)
    workloads = sorted({r.workload for r in [*fitted, *held]})
    if args.workloads:
        workloads = [w for w in workloads if w in args.workloads.split(",")]
    probes: dict[str, list[ProbeResult]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="end-to-end-") as tmp:
        for index in range(args.passes):
            order = workloads if index % 2 == 0 else workloads[::-1]
            for workload in order:
                started = time.perf_counter()
                result = probe_here(workload, args.budget, Path(tmp), args.backend)
                probes[workload].append(result)
                print(
                    f"pass {index} {workload:22s} {result.samples_per_second:10.3f} samples/s "
                    f"probe {result.probe_seconds:5.1f} s wall {time.perf_counter() - started:5.1f} s "
                    f"drift {result.machine_drift:+.2f} contention {result.contention:.2f}",
                    flush=True,
                )
    rows = score(probes, fitted, held)
    return {
        "machine": reference_machine(),
        "backend": args.backend,
        "sources": args.sources,
        "probes": {w: [history.to_json(p) for p in ps] for w, ps in probes.items()},
        "rows": rows,
        "figures": report(rows),
        "stability": stability(probes),
    }


def reference_machine() -> dict[str, Any]:
    from probes.device import cpu_model

    return {"cpu_model": cpu_model(), "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}


def _spin(stop: Any) -> None:
    while not stop.is_set():
        pass


def load(args: argparse.Namespace) -> dict[str, Any]:
    """Probes under a second process's load: their GPU predictions' spread and the warning."""
    stop = multiprocessing.Event()
    spinner = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="end-to-end-load-") as tmp:
        spinner.start()
        try:
            for _ in range(args.probes):
                probe = probe_here(args.model, args.budget, Path(tmp))
                t4 = predict(probe, Target("T4", 1)).seconds
                a100 = predict(probe, Target("A100", 1)).seconds
                note = reference.busy_note(probe.contention, probe.machine_drift)
                results.append(
                    {
                        "contention": probe.contention,
                        "drift": probe.machine_drift,
                        "t4_seconds": t4,
                        "a100_seconds": a100,
                        "warning": note,
                    }
                )
                print(json.dumps(results[-1]), flush=True)
        finally:
            stop.set()
            spinner.join(timeout=5)
    spread = {
        gpu: max(r[f"{gpu}_seconds"] for r in results) / min(r[f"{gpu}_seconds"] for r in results)
        for gpu in ("t4", "a100")
    }
    warned = sum(r["warning"] is not None for r in results)
    print(
        f"spread t4 {spread['t4']:.2f}x a100 {spread['a100']:.2f}x; warned {warned}/{len(results)}"
    )
    return {"machine": reference_machine(), "model": args.model, "probes": results,
            "spread": spread, "warned": warned}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=("probe", "load"), default="probe")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--probes", type=int, default=3, help="load: probes under load")
    parser.add_argument("--model", default="mnist_mlp", help="load: the workload probed")
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--rescore", type=Path, default=None)
    parser.add_argument("--workloads", default="", help="only these (comma-separated)")
    parser.add_argument("--backend", default="", choices=("", "tensorflow", "jax", "torch"),
                        help="probe under this Keras backend")  # fmt: skip
    parser.add_argument("--sources", default="", help="score only these sources' rows")
    args = parser.parse_args(argv)
    if args.passes < 1 or args.probes < 1 or args.budget <= 0:
        parser.error("--passes, --probes and --budget must be positive")
    if args.rescore is not None and not args.rescore.is_file():
        parser.error(f"--rescore: no such file {args.rescore}")
    if args.sources and not any(published_rows(args.sources, args.backend)):
        parser.error(
            f"--sources: no published row of the zoo has source {args.sources!r}"
            + (f" and ran under {args.backend}" if args.backend else "")
        )
    if args.mode == "load":
        blob = load(args)
    else:
        try:
            blob = rescore(args.rescore, args.sources) if args.rescore else run(args)
        except (ValueError, KeyError, TypeError, AttributeError) as error:  # JSON errors too
            if args.rescore is None:
                raise
            parser.exit(
                2, f"--rescore: {args.rescore} is not a run of this benchmark ({error!r})\n"
            )
        print_report(blob["figures"])
        print(
            "-- passes' spread (max/min) per workload: here, and predicted on the user's software"
        )
        for workload, figures in blob["stability"].items():
            print(f"  {workload:22s} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(blob, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
