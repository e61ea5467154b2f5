"""Every zoo workload probed under each Keras backend installed here, at small sizes.

Shows that the zoo builds with backend-neutral Keras and that the whole probe (steady fit, short
epochs, dispatch, the op split: TensorFlow's profiler or the model's layers) runs under each
backend. One fresh process per backend (Keras picks its backend at import); each workload with a
short budget, so the figures are a smoke run's, not measurements to quote.

    python benchmarks/research/backend_zoo.py [--backends tensorflow,jax] [--budget 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def worker(budget: float) -> None:
    """Probe every zoo workload under this process's backend; one JSON line each."""
    sys.path.insert(0, str(ROOT))
    from advisor.workloads import zoo
    from probes import backend
    from probes.run import probe
    from probes.spec import spec_for

    framework = backend.select()
    for workload in zoo.WORKLOADS:
        began = time.perf_counter()
        batch = workload.batch_size
        sizes = {"samples": batch * 16, "validation_samples": batch * 2 if batch <= 128 else 0,
                 "epochs": 2}  # fmt: skip
        if workload.synthetic_input:
            sizes = {"samples": batch * 2, "validation_samples": 0, "epochs": 1}
        try:
            result = probe(spec_for(workload.id, **sizes), budget_seconds=budget)
            line = {"workload": workload.id, "backend": result.device.backend,
                    "step_s": result.step_seconds, "extrapolated": result.extrapolated,
                    "op_split": bool(result.op_split)}  # fmt: skip
        except Exception as exc:  # a workload that cannot run is a row of the table
            line = {"workload": workload.id, "backend": framework.name,
                    "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:200]}  # fmt: skip
        line["seconds"] = time.perf_counter() - began
        print(json.dumps(line), flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        worker(float(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="tensorflow,jax")
    parser.add_argument("--budget", type=float, default=2.0)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON lines here")
    args = parser.parse_args(argv)
    rows = []
    for name in args.backends.split(","):
        env = {**os.environ, "KERAS_BACKEND": name, "PYTHONPATH": str(ROOT),
               "CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cpu"}  # fmt: skip
        run = subprocess.run([sys.executable, __file__, "--worker", str(args.budget)],
                             capture_output=True, text=True, env=env, check=False)  # fmt: skip
        found = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
        if run.returncode != 0 and not found:
            found = [{"workload": "*", "backend": name, "error": run.stderr.strip()[-200:]}]
        rows += found
    print("| workload | backend | step ms | extrapolated | op split | probe s | result |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['workload']} | {r['backend']} | - | - | - | - | {r['error']} |")
        else:
            print(f"| {r['workload']} | {r['backend']} | {r['step_s'] * 1e3:.3g} | "
                  f"{'yes' if r['extrapolated'] else 'no'} | {'yes' if r['op_split'] else 'no'} | "
                  f"{r['seconds']:.1f} | probed |")  # fmt: skip
    failed = [r for r in rows if "error" in r]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} probed; {len(failed)} failed")
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
