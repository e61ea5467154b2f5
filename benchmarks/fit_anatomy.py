"""The anatomy of real ``model.fit`` runs, and the fit of the iterator-teardown rates.

Each run trains a zoo workload for real (fresh process, NumPy arrays, validation, shuffling: what
a user does) and stamps wall time and process CPU time at every callback. Where a fit drops a
tf.data iterator (``probes.teardown``) the idle time there (wall minus CPU: nothing computes
while it waits) is one observation of a teardown wait at a known iterator age. The rates are
the ratio estimator sum(observed waits) / sum(expected wait if every drop stalled), one per place,
written to ``data/fit-teardown.json`` with ``--write``.

The cases are the zoo's; the accuracy benchmark's user models (``benchmarks/local_accuracy.py``)
are never run here, so they stay out of this fit.

    .venv/bin/python benchmarks/fit_anatomy.py [--runs N] [--out FILE] [--dispatch async]
                                                                           # time real fits
    .venv/bin/python benchmarks/fit_anatomy.py --fit [FILE] [--write]      # fit the rates
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES: dict[str, tuple[str, dict[str, int]]] = {
    # epochs of about 1 s to 15 s on two cores, so the ages cross several wake-ups
    "mnist_mlp": ("mnist_mlp", {"samples": 60_000, "validation_samples": 10_000, "epochs": 4}),
    "mnist_cnn": ("mnist_cnn", {"samples": 12_800, "validation_samples": 2_560, "epochs": 4}),
    "imdb_bilstm": ("imdb_bilstm", {"samples": 6_400, "validation_samples": 1_600, "epochs": 3}),
    "cifar10_cnn": ("cifar10_cnn", {"samples": 6_400, "validation_samples": 1_000, "epochs": 3}),
}
IDLE_FLOOR = 0.005
"""Idle seconds below which a place counts as not waiting (scheduling jitter)."""


def worker(model: str, sizes: dict[str, int], dispatch: str = "sync") -> dict:
    """One real fit, stamped at every callback with (wall, process CPU). A callback with a
    batch-end hook turns off Keras's asynchronous dispatch of batch callbacks, which a user's
    fit keeps; ``dispatch="async"`` declares the stamps safe to run on Keras's callback thread,
    so the fit dispatches as the user's does."""
    from probes import quiet

    quiet.prepare_tensorflow()
    import keras

    from benchmarks.user_runs import user_fit_arguments
    from probes.loading import prepare
    from probes.spec import spec_for

    spec = spec_for(model, **sizes)
    prepared = prepare(spec)
    arguments = user_fit_arguments(prepared, spec.config)
    events: list[tuple[str, float, float]] = []

    def stamp(name: str) -> None:
        events.append((name, time.perf_counter(), time.process_time()))

    class Stamper(keras.callbacks.Callback):
        async_safe = dispatch == "async"

        def on_train_begin(self, logs: object = None) -> None:
            stamp("train_begin")

        def on_epoch_begin(self, epoch: int, logs: object = None) -> None:
            stamp("epoch_begin")

        def on_train_batch_begin(self, batch: int, logs: object = None) -> None:
            if batch == 0:
                stamp("first_batch_begin")

        def on_train_batch_end(self, batch: int, logs: object = None) -> None:
            stamp("batch_end")

        def on_test_begin(self, logs: object = None) -> None:
            stamp("test_begin")

        def on_test_end(self, logs: object = None) -> None:
            stamp("test_end")

        def on_epoch_end(self, epoch: int, logs: object = None) -> None:
            stamp("epoch_end")

        def on_train_end(self, logs: object = None) -> None:
            stamp("train_end")

    stamp("fit")
    prepared.model.fit(**arguments, callbacks=[Stamper()])
    stamp("return")
    events.sort(key=lambda event: event[1])  # async batch stamps land from another thread
    return {"events": events, "dispatch": dispatch}


def _idle(before: list, after: list) -> float:
    """Wall time between two stamps in which the process used no CPU."""
    return max(0.0, (after[1] - before[1]) - (after[2] - before[2]))


def _epochs(events: list[list]) -> list[dict[str, int | float]]:
    """Per epoch: where its stamps are, and when its training iterator gave its first batch
    (its autotuning thread's start: the first step's end less a steady step, so the first
    epoch's tracing and a wait at the epoch's start are not counted in the iterator's age)."""
    epochs: list[dict[str, int | float]] = []
    ends: list[float] = []
    for index, (name, wall, _) in enumerate(events):
        if name == "epoch_begin":
            epochs.append({"begin": index})
            ends = []
        elif name == "batch_end" and epochs:
            ends.append(wall)
            steps = [b - a for a, b in itertools.pairwise(ends)]
            step = statistics.median(steps) if steps else 0.0
            epochs[-1]["first_batch"] = ends[0] - step
    return epochs


def observations(events: list[list]) -> list[dict]:
    """Every drop of an iterator that had given batches (``probes.teardown``): its kind, its age
    from its first batch, and the idle time at the drop. A training iterator is dropped at the
    next epoch's first step, or when ``fit`` returns; a validation pass's when the pass ends."""
    rows = []
    epochs = _epochs(events)
    for previous, epoch in itertools.pairwise(epochs):
        at = int(epoch["begin"])  # the drop comes between epoch_begin and the first step
        rows.append({"place": "epoch_start", "iterator": "training",
                     "age": events[at][1] - previous["first_batch"],
                     "idle": _idle(events[at], events[at + 1])})  # fmt: skip
    for index, (name, _, _) in enumerate(events):
        if name == "test_end" and events[index + 1][0] == "epoch_end":
            begin = max(i for i in range(index) if events[i][0] == "test_begin")
            rows.append({"place": "validation_end", "iterator": "validation",
                         "age": events[index][1] - events[begin][1],
                         "idle": _idle(events[index], events[index + 1])})  # fmt: skip
    if epochs and events[-1][0] == "return":
        rows.append({"place": "fit_end", "iterator": "training",
                     "age": events[-2][1] - epochs[-1]["first_batch"],
                     "idle": _idle(events[-2], events[-1])})  # fmt: skip
    return rows


def fit_rates(runs: list[dict]) -> dict:
    """Per kind of iterator: the chance a drop waits, as sum(idle) / sum(the wait if it always
    stalled). A training iterator's age is read from its first batch, to a few ms: its wait is
    the sawtooth's at that age. A validation iterator's is read from the pass's callbacks, not
    its first batch: its wait is averaged over the age's spread (``probes.teardown.mean_wait``)."""
    from probes.teardown import mean_wait, wait_if_stalled

    full_wait = {"training": wait_if_stalled, "validation": mean_wait}
    by_kind: dict[str, list[dict]] = {}
    for run in runs:
        for row in observations(run["events"]):
            by_kind.setdefault(row["iterator"], []).append(row)
    rates, detail = {}, {}
    for kind, rows in sorted(by_kind.items()):
        expected = sum(full_wait[kind](r["age"]) for r in rows)
        observed = sum(r["idle"] for r in rows)
        rates[kind] = round(min(1.0, observed / expected), 3) if expected > 0 else 0.0
        detail[kind] = {
            "drops": len(rows),
            "stalled": sum(
                r["idle"] > max(IDLE_FLOOR, full_wait[kind](r["age"]) / 2) for r in rows
            ),
            "observed_seconds": round(observed, 2),
            "expected_if_always_seconds": round(expected, 2),
            "median_age_seconds": round(statistics.median(r["age"] for r in rows), 2),
            "places": sorted({r["place"] for r in rows}),
        }
    return {"rates": rates, "detail": detail}


def run_worker(model: str, sizes: dict[str, int], dispatch: str = "sync") -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", model, json.dumps(sizes), dispatch],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{model} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    out_file = ROOT / "benchmarks" / "results" / "fit_anatomy.json"
    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(argv[1], json.loads(argv[2]), argv[3])))
        return
    if argv[:1] == ["--fit"]:
        source = Path(argv[1]) if len(argv) > 1 and not argv[1].startswith("--") else out_file
        runs = [run for case in json.loads(source.read_text()).values() for run in case]
        fitted = fit_rates(runs)
        print(json.dumps(fitted, indent=1))
        if "--write" in argv:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True, cwd=ROOT, check=False).stdout.strip()  # fmt: skip
            fitted["source"] = (
                f"benchmarks/fit_anatomy.py --fit: {len(runs)} timed real fits of the zoo "
                f"({', '.join(CASES)}) on a 2-vCPU AMD EPYC VM, TensorFlow 2.21, Keras 3.15, "
                f"commit {commit}"
            )
            (ROOT / "data" / "fit-teardown.json").write_text(json.dumps(fitted, indent=1) + "\n")
        return
    if "--out" in argv:
        out_file = Path(argv[argv.index("--out") + 1])
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 2
    dispatch = argv[argv.index("--dispatch") + 1] if "--dispatch" in argv else "sync"
    if dispatch not in ("sync", "async"):
        print(f"fit_anatomy: --dispatch is sync or async, got {dispatch!r}", file=sys.stderr)
        raise SystemExit(2)
    rows = json.loads(out_file.read_text()) if out_file.exists() else {}
    for _ in range(runs):
        for name, (model, sizes) in CASES.items():  # interleaved: one of each, then again
            run = run_worker(model, sizes, dispatch)
            rows.setdefault(name, []).append(run)
            waits = [(r["place"], round(r["age"], 1), round(r["idle"], 2))
                     for r in observations(run["events"])]  # fmt: skip
            print(name, waits, flush=True)
            out_file.write_text(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
