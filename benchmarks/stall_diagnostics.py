"""Two diagnostics of the iterator stalls (``probes.teardown``) that the model does not use yet.

1. ``short``: can a probe read a model's own stall rate from its short epochs? Forty epochs of
   two or three batches per zoo workload of the teardown fit, timed as ``fit_anatomy.py`` times
   real fits: per place, the share of the full wait that was paid (observed idle over the wait if
   every drop stalled), to set beside the real-size shares of ``fit_anatomy.json``.
2. ``fitend``: which iterator does ``fit``'s end wait on? Real fits of the accuracy benchmark's
   user_attention model (``benchmarks/user_runs.py``; never in a fit), at its benchmark size:
   for a stall after the last callback, how long after the last and the previous epoch's start
   it ended (a wake-up of an iterator comes at 10 ms x (2^n - 1) after its start).

    .venv/bin/python benchmarks/stall_diagnostics.py short|fitend [--runs N]

Run it alone on the machine: the waits are idle time, and a neighbour's load moves the ages.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.fit_anatomy import CASES, observations, run_worker  # noqa: E402
from benchmarks.user_runs import make_user_models  # noqa: E402
from probes.teardown import wait_if_stalled  # noqa: E402

SHORT_EPOCHS = 40
ATTENTION_SIZES = {"samples": 12_800, "validation_samples": 1_600, "epochs": 3}


def short() -> None:
    for name, (model, _) in CASES.items():
        batch = 128 if name == "mnist_mlp" else 32
        short_sizes = {"samples": 3 * batch, "validation_samples": 5 * batch,
                       "epochs": SHORT_EPOCHS}  # fmt: skip
        rows = observations(run_worker(model, short_sizes)["events"])
        for place in ("epoch_start", "validation_end"):
            drops = [r for r in rows if r["place"] == place][2:]  # past the first epochs' tracing
            full = sum(wait_if_stalled(r["age"]) for r in drops)
            paid = sum(r["idle"] for r in drops)
            print(f"{name:12} {place:15} {len(drops)} drops, share of the full wait paid "
                  f"{paid / full:.2f}", flush=True)  # fmt: skip


def fit_end(runs: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="advisor-stalls-"))
    make_user_models(folder)
    for _ in range(runs):
        events = run_worker(str(folder / "attention.keras"), ATTENTION_SIZES)["events"]
        begins = [wall for name, wall, _ in events if name == "epoch_begin"]
        (_, last_wall, last_cpu), (_, end, end_cpu) = events[-2], events[-1]
        idle = max(0.0, (end - last_wall) - (end_cpu - last_cpu))
        print(f"fit end waited {idle:.2f} s; it ended {end - begins[-1]:.2f} s after the last "
              f"epoch began, {end - begins[-2]:.2f} s after the one before", flush=True)  # fmt: skip


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 2
    if argv[:1] == ["short"]:
        short()
    elif argv[:1] == ["fitend"]:
        fit_end(runs)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
