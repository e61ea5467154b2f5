"""The default spread of a local prediction, fitted on recorded probe/real pairs.

``advisor.estimate.predict.DEFAULT_RUN_LOG_SIGMA`` is what a device with no probe history gets:
how far a probe's prediction of ``model.fit`` lands from the real run on a shared machine, the
root mean square of log(predicted / real) over the zoo's interleaved pairs of two quiet passes
of ``benchmarks/local_accuracy.py`` (``RUNS``). The user models stay out, so the interval's
coverage on them is a held-out figure. ``python -m advisor.fitting`` holds the constant to it.

    python -m advisor.fitting.run_spread [FILE ...]     # also the within-case spreads
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
RUNS = (RESULTS / "local_accuracy_pass3.json", RESULTS / "local_accuracy_pass1.json")


def zoo_cases(paths: tuple[Path, ...] = RUNS) -> dict[str, list[dict]]:
    """Each zoo case's probe/real pairs, pooled over the passes (user models left out)."""
    cases: dict[str, list[dict]] = {}
    for path in paths:
        for name, runs in json.loads(path.read_text()).items():
            if not name.startswith("user_"):
                cases.setdefault(name, []).extend(runs)
    return cases


def log_sigma(paths: tuple[Path, ...] = RUNS) -> float:
    """Root mean square log error of the zoo's probe/real pairs, to three decimals."""
    errors = [
        math.log(r["probe"]["fit"] / r["real"]["fit"])
        for runs in zoo_cases(paths).values()
        for r in runs
    ]
    return round(math.sqrt(sum(e * e for e in errors) / len(errors)), 3)


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
    paths = tuple(Path(a) for a in argv) or RUNS
    cases = zoo_cases(paths)
    pairs = sum(len(runs) for runs in cases.values())
    print(f"zoo pairs: {pairs}, root mean square log error: {log_sigma(paths):.3f} (log sigma)")
    real = pooled([[r["real"]["fit"] for r in runs] for runs in cases.values()])
    probe = pooled([[r["probe"]["fit"] for r in runs] for runs in cases.values()])
    print(f"real runs: {real:.3f}, probes: {probe:.3f}, "
          f"prediction vs real: {math.hypot(real, probe):.3f} (log sigma)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
