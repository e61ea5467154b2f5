"""Fit the default run-to-run spread of a local prediction from recorded probe/real pairs.

``advisor.estimate.predict.DEFAULT_RUN_LOG_SIGMA`` is used when a device has no probe history:
how far a probe's prediction lands from the real run on a shared machine. The recorded pairs
(``benchmarks/local_accuracy.json``: interleaved probe-then-real pairs on a 2-vCPU cloud VM) give
two pooled log spreads: real runs of one configuration among themselves, and probes of it among
themselves; the prediction's spread is their quadrature sum. Only the zoo's cases are fitted:
the user models stay out, so the interval's coverage on them is a held-out figure.

    .venv/bin/python benchmarks/run_spread.py [FILE]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pooled(groups: list[list[float]]) -> float:
    """Pooled standard deviation of logs within groups (each group's own mean removed)."""
    squares, freedom = 0.0, 0
    for values in groups:
        logs = [math.log(v) for v in values if v > 0]
        if len(logs) >= 2:
            mean = sum(logs) / len(logs)
            squares += sum((x - mean) ** 2 for x in logs)
            freedom += len(logs) - 1
    return math.sqrt(squares / freedom)


def main(argv: list[str]) -> None:
    path = Path(argv[0]) if argv else ROOT / "benchmarks" / "local_accuracy.json"
    cases = {name: runs for name, runs in json.loads(path.read_text()).items()
             if not name.startswith("user_")}  # fmt: skip
    real = pooled([[r["real"]["fit"] for r in runs] for runs in cases.values()])
    probe = pooled([[r["probe"]["fit"] for r in runs] for runs in cases.values()])
    print(f"real runs: {real:.3f}, probes: {probe:.3f}, "
          f"prediction vs real: {math.hypot(real, probe):.3f} (log sigma)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
