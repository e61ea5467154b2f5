"""Two diagnostics of the iterator stalls (``probes.teardown``).

1. ``short``: can a probe read a model's own stall rate from its short epochs? Forty epochs of
   two or three batches per zoo workload of the teardown fit, timed as ``fit_anatomy.py`` times
   real fits: per place, the share of the full wait that was paid (observed idle over the wait if
   every drop stalled), to set beside the real-size shares of
   ``benchmarks/results/fit_anatomy.json``.
2. ``drops``: which iterators does a real fit drop, and which drops wait? Real fits of the
   accuracy benchmark's user_attention model (``benchmarks/user_runs.py``; never in a fit), at
   its benchmark size, with every tf.data iterator traced from its making to its drop (a
   ``weakref.finalize`` on TensorFlow's ``OwnedIterator``): for each drop, the phase the
   iterator was made in, its age, and the idle time right after the drop.

    .venv/bin/python benchmarks/research/stall_diagnostics.py short|drops [--runs N]

Run it alone on the machine: the waits are idle time, and a neighbour's load moves the ages.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.research.fit_anatomy import CASES, observations, run_worker  # noqa: E402
from benchmarks.user_runs import make_user_models  # noqa: E402
from probes.real import user_fit_arguments  # noqa: E402
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


def traced_fit(model: str, sizes: dict[str, int]) -> list[list]:
    """One real fit (in a worker) stamped at its epochs, validation passes and return, and at
    the making and the drop of every tf.data iterator."""
    import time
    import weakref

    from probes import quiet

    quiet.prepare_tensorflow()
    import keras
    from tensorflow.python.data.ops import iterator_ops

    from probes.loading import prepare
    from probes.spec import spec_for

    events: list[list] = []
    phase = ["build"]

    def stamp(name: str, label: str = "") -> None:
        events.append([name, time.perf_counter(), time.process_time(), label])

    made = iterator_ops.OwnedIterator.__init__

    def traced(self: object, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)
        label = f"{phase[0]}#{sum(e[0] == 'made' for e in events)}"
        stamp("made", label)
        weakref.finalize(self, stamp, "dropped", label)

    iterator_ops.OwnedIterator.__init__ = traced

    class Phases(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch: int, logs: object = None) -> None:
            phase[0] = f"epoch {epoch}"
            stamp("epoch_begin")

        def on_train_batch_begin(self, batch: int, logs: object = None) -> None:
            if batch == 0:  # a wait at the epoch's start ends here
                stamp("first_batch")

        def on_test_begin(self, logs: object = None) -> None:
            phase[0] = "validation"
            stamp("validation_begin")

        def on_train_end(self, logs: object = None) -> None:
            stamp("train_end")

    spec = spec_for(model, **sizes)
    prepared = prepare(spec)
    arguments = user_fit_arguments(prepared, spec.config)
    stamp("fit")
    prepared.model.fit(**arguments, callbacks=[Phases()])
    stamp("return")
    return events


def drops(runs: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="advisor-stalls-"))
    make_user_models(folder)
    model, sizes = str(folder / "attention.keras"), json.dumps(ATTENTION_SIZES)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    for _ in range(runs):
        out = subprocess.run([sys.executable, __file__, "--worker", model, sizes],
                             capture_output=True, text=True, env=env, check=True)  # fmt: skip
        events = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"fit {events[-1][1] - events[0][1]:.1f} s", flush=True)
        made = {label: wall for name, wall, _, label in events if name == "made"}
        for (name, wall, cpu, label), after in itertools.pairwise(events):
            if name == "dropped":
                idle = (after[1] - wall) - (after[2] - cpu)
                print(f"  dropped {label:14} {wall - made[label]:5.2f} s after its making, "
                      f"idle {max(0.0, idle):5.2f} s, then {after[0]}", flush=True)  # fmt: skip


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        print(json.dumps(traced_fit(argv[1], json.loads(argv[2]))))
        return 0
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 2
    if argv[:1] == ["short"]:
        short()
    elif argv[:1] == ["drops"]:
        drops(runs)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
