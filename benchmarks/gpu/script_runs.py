"""User scripts trained for real on this machine's GPU: the measured half of issue "Your own
training"'s cross-device target (three scripts within the single-device targets against
published or measured GPU times).

Each run of ``RUNS`` is one of ``benchmarks/scripts/``'s scripts as ``benchmarks/script_cross_device.py``
probes it on the development VM, at its published size, in fp32 and in mixed precision: cifar10-fast's
``dawn.py`` (``resnet9_cifar.py``, 24 epochs) and transformers' ``run_glue.py`` on MRPC
(``hf_run_glue.py``, 5 epochs). Each is timed from its start to its exit and by its own report of its
training loop (the scripts' last line, ``{"train_seconds": ..., "steps": ...}``), with today's PyTorch
and transformers: where the published 2018 and 2020 times ran older software, these run the
software a probe of today sees. One JSON line a run, the machine's first:

    python3 benchmarks/gpu/script_runs.py --out $OUT/script-runs.jsonl          # a few minutes on an H100
    python3 benchmarks/gpu/script_runs.py --rehearse --out /tmp/script-runs.jsonl   # tiny sizes, on a CPU

then, on the development VM, ``benchmarks/script_cross_device.py --measured FILE`` holds its probes'
predictions for that GPU against them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "benchmarks" / "scripts"
RUNS = (
    ("dawn.py", "mixed", ["resnet9_cifar.py", "--epochs", "24", "--half"]),
    ("dawn.py", "fp32", ["resnet9_cifar.py", "--epochs", "24"]),
    ("run_glue.py", "fp32", ["hf_run_glue.py", "--samples", "3668", "--epochs", "5"]),
    ("run_glue.py", "mixed", ["hf_run_glue.py", "--samples", "3668", "--epochs", "5", "--fp16"]),
)
"""(the published script it stands for, its precision, its command under ``SCRIPTS``)."""
REHEARSAL = {
    "resnet9_cifar.py": ["--epochs", "1", "--samples", "1024", "--test-samples", "512"],
    "hf_run_glue.py": ["--samples", "64", "--epochs", "1"],
}
"""Sizes a CPU trains in seconds, in place of each script's own."""


def machine() -> dict[str, object]:
    import torch
    import transformers

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return {"gpu": gpu, "torch": torch.__version__, "transformers": transformers.__version__,
            "date": time.strftime("%Y-%m-%d", time.gmtime())}  # fmt: skip


def run(script: str, precision: str, command: list[str], rehearse: bool, limit: float) -> dict:
    """One real run: its wall clock, and the training loop's time and steps as it reports them."""
    arguments = command
    if rehearse:  # the script's precision flags kept, its sizes a CPU's
        flags = [word for word in command if word in ("--fp16", "--half")]
        arguments = [command[0], *REHEARSAL[command[0]], *flags]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPTS / arguments[0]), *arguments[1:]],
            capture_output=True, text=True, timeout=limit, cwd=ROOT,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"script": script, "precision": precision, "command": arguments, "error": "timeout"}
    wall = time.perf_counter() - started
    found = {"script": script, "precision": precision, "command": arguments, "wall_seconds": wall}
    report = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    try:
        found.update(json.loads(report[0]))
    except (IndexError, json.JSONDecodeError):
        found["error"] = (done.stderr or done.stdout).strip()[-600:] or f"exit {done.returncode}"
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rehearse", action="store_true", help="tiny sizes, no GPU needed")
    parser.add_argument("--only", help="comma-separated indices into RUNS")
    parser.add_argument("--limit", type=float, default=240.0, help="seconds a run may take")
    args = parser.parse_args(argv)
    indices = args.only.split(",") if args.only else [str(i) for i in range(len(RUNS))]
    if not all(i.isdigit() and int(i) < len(RUNS) for i in indices):
        parser.error(f"--only takes indices 0-{len(RUNS) - 1}, comma-separated")
    chosen = [RUNS[int(i)] for i in indices]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w") as handle:
        handle.write(json.dumps({"machine": machine()}) + "\n")
        for script, precision, command in chosen:
            line = run(script, precision, command, args.rehearse, args.limit)
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            shown = (
                line.get("error")
                or f"{line['train_seconds']:.1f} s training, {line['steps']} steps"
            )
            print(f"{script} {precision}: {shown}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
