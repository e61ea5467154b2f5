"""Fit the default spread of a local prediction from recorded probe/real pairs.

``advisor.estimate.predict.DEFAULT_RUN_LOG_SIGMA`` is used when a device has no probe history:
how far a probe's prediction of ``model.fit`` lands from the real run on a shared machine. The
recorded pairs (``benchmarks/results/local_accuracy.json``: interleaved probe-then-real pairs on
a 2-vCPU cloud VM) give it directly, as the root mean square of log(predicted / real). Only the
zoo's cases are fitted: the user models stay out, so the interval's coverage on them is a
held-out figure. For comparison it also prints the two pooled within-case spreads (real runs among
themselves, probes among themselves) and their quadrature sum, the older estimate.

    .venv/bin/python benchmarks/research/run_spread.py [FILE ...]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
    paths = [Path(a) for a in argv] or [ROOT / "benchmarks" / "results" / "local_accuracy.json"]
    cases: dict[str, list[dict]] = {}
    for path in paths:  # several passes: each case's pairs pooled
        for name, runs in json.loads(path.read_text()).items():
            if not name.startswith("user_"):
                cases.setdefault(name, []).extend(runs)
    errors = [math.log(r["probe"]["fit"] / r["real"]["fit"]) for runs in cases.values()
              for r in runs]  # fmt: skip
    rms = math.sqrt(sum(e * e for e in errors) / len(errors))
    print(f"zoo pairs: {len(errors)}, root mean square log error: {rms:.3f} (log sigma)")
    real = pooled([[r["real"]["fit"] for r in runs] for runs in cases.values()])
    probe = pooled([[r["probe"]["fit"] for r in runs] for runs in cases.values()])
    print(f"real runs: {real:.3f}, probes: {probe:.3f}, "
          f"prediction vs real: {math.hypot(real, probe):.3f} (log sigma)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
