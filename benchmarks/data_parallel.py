"""Data-parallel accuracy: the data-parallel probe's prediction of a whole ``model.fit`` over
several processes against the real one, both on this machine.

Each pair is a data-parallel probe (``advisor probe --data-parallel --nodes 2``: two processes
on 127.0.0.1, one CPU device each, gloo between them, as the nodes of an ``advisor bench``
cluster meet) and then the real training of the same configuration over the same two processes
(each joins as the probe does, ``probes.distributed.join``, and feeds its own shard: half the
samples at the per-device batch; a stopwatch around ``model.fit``, shuffled, with validation).
Pairs are interleaved across cases. What is compared is rank 0's: the probe's ``fit_seconds``
(its prediction plus its start-up) against the real ``fit``.

    .venv/bin/python benchmarks/data_parallel.py [--passes 3] [--budget 10] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "data_parallel.json"
NODES = 2
PORT = 24_731
CASES: dict[str, dict[str, int]] = {
    "mnist_mlp": {"samples": 60_000, "validation_samples": 10_000, "epochs": 4},
    "mnist_cnn": {"samples": 12_800, "validation_samples": 2_560, "epochs": 2},
}
"""Zoo workloads and sizes of a 20-60 s real run over two processes on two cores."""


def sizes(case: str) -> list[str]:
    words = []
    for name, value in CASES[case].items():
        words += [f"--{name.replace('_', '-')}", str(value)]
    return words


def together(commands: list[list[str]]) -> list[str]:
    """Run one command per rank at once; their standard outputs (a failure raises)."""
    env = {**os.environ, "KERAS_BACKEND": "jax", "PYTHONUNBUFFERED": "1"}
    running = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for c in commands
    ]
    outputs = []
    for process in running:
        out, err = process.communicate(timeout=900)
        if process.returncode != 0:
            raise RuntimeError((err.strip().splitlines() or ["(nothing)"])[-1])
        outputs.append(out)
    return outputs


def probe(case: str, budget: float, home: Path) -> dict[str, float]:
    """The data-parallel probe of ``case`` over ``NODES`` processes, each with a store of its
    own; rank 0's figures."""
    advisor = str(Path(sys.executable).parent / "advisor")
    asked = ["probe", "--model", case, *sizes(case), "--budget", f"{budget:g}", "--json",
             "--backend", "jax", "--data-parallel", "--nodes", str(NODES),
             "--coordinator", f"127.0.0.1:{PORT}"]  # fmt: skip
    commands = [
        ["env", f"ADVISOR_HOME={home / str(rank)}", advisor, *asked, "--node-rank", str(rank)]
        for rank in range(NODES)
    ]
    began = time.perf_counter()
    payload = json.loads(together(commands)[0])
    return {
        "fit": payload["fit_seconds"],
        "low": payload["interval_80"][0],
        "high": payload["interval_80"][1],
        "step": payload["step_seconds"],
        "probe": payload["probe_seconds"],
        "wall": time.perf_counter() - began,
    }


def real(case: str) -> dict[str, float]:
    commands = [[sys.executable, __file__, "--worker", str(rank), "--case", case]
                for rank in range(NODES)]  # fmt: skip
    return dict(json.loads(together(commands)[0].strip().splitlines()[-1]))  # after gloo's lines


def worker(rank: int, case: str) -> None:
    """One rank of the real run: join, build, fit its shard, print the stopwatch."""
    sys.path.insert(0, str(ROOT))
    from probes import distributed, quiet
    from probes.fitting import arrays
    from probes.loading import prepare_whole
    from probes.spec import spec_for

    quiet.prepare()
    spec = spec_for(case, **CASES[case])
    local, _ = distributed.join(distributed.Layout(NODES, rank, f"127.0.0.1:{PORT}"))
    c = spec.config
    prepared = prepare_whole(spec)
    batch = c.batch_size * local
    x, y = arrays(prepared, c.samples // NODES, batch, seed=rank)
    validation = arrays(prepared, c.validation_samples // NODES, batch, seed=10 + rank)
    began = time.perf_counter()
    prepared.model.fit(x, y, batch_size=batch, epochs=c.epochs, shuffle=True,
                       validation_data=validation, verbose=0)  # fmt: skip
    print(json.dumps({"fit": time.perf_counter() - began}))


def summary(pairs: list[dict]) -> dict:
    errors = [p["predicted"] / p["real"] - 1 for p in pairs]
    by_case = {}
    for case in CASES:
        own = [p["predicted"] / p["real"] - 1 for p in pairs if p["case"] == case]
        if own:
            by_case[case] = {"median_signed_pct": round(100 * statistics.median(own), 1),
                             "range_pct": [round(100 * min(own), 1), round(100 * max(own), 1)]}  # fmt: skip
    inside = sum(p["low"] <= p["real"] <= p["high"] for p in pairs)
    return {
        "pairs": len(pairs),
        "median_abs_pct": round(100 * statistics.median(abs(e) for e in errors), 1),
        "median_signed_pct": round(100 * statistics.median(errors), 1),
        "worst_pct": round(100 * max(errors, key=abs), 1),
        "interval_80_holds": f"{inside} of {len(pairs)}",
        "cases": by_case,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--budget", type=float, default=10.0)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker, args.case)
        return 0
    import tempfile

    pairs = []
    with tempfile.TemporaryDirectory() as home:
        for number in range(args.passes):
            for case in CASES:
                predicted = probe(case, args.budget, Path(home) / f"{case}-{number}")
                measured = real(case)
                pair = {"case": case, "pass": number + 1, "predicted": predicted["fit"],
                        "real": measured["fit"], **{k: predicted[k] for k in
                        ("low", "high", "step", "probe", "wall")}}  # fmt: skip
                pairs.append(pair)
                print(f"{case} pass {number + 1}: predicted {pair['predicted']:.1f} s, real "
                      f"{pair['real']:.1f} s ({pair['predicted'] / pair['real'] - 1:+.1%}); probe "
                      f"{pair['probe']:.1f} s", flush=True)  # fmt: skip
    result = {"machine": os.uname().nodename, "nodes": NODES, "budget": args.budget,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "summary": summary(pairs), "pairs": pairs}  # fmt: skip
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))
    return 0 if all(math.isfinite(p["predicted"]) for p in pairs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
