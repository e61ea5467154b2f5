"""The anatomy of real ``model.fit`` runs: the measurements the iterator-teardown rates are fitted on.

Each run trains a zoo workload for real (fresh process, NumPy arrays, validation, shuffling: what
a user does) and stamps wall time and process CPU time at every callback. Where a fit drops a
tf.data iterator (``probes.teardown``) the idle time there (wall minus CPU: nothing computes
while it waits) is one observation of a teardown wait at a known iterator age. The rates are
the ratio estimator sum(observed waits) / sum(expected wait if every drop stalled), one per place
(``advisor.fitting.teardown``; ``python -m advisor.fitting teardown`` writes
``data/fit-teardown.json`` from ``benchmarks/results/fit_anatomy.json``).

The cases are the zoo's; the accuracy benchmark's user models (``benchmarks/local_accuracy.py``)
are never run here, so they stay out of this fit.

    .venv/bin/python benchmarks/research/fit_anatomy.py [--runs N] [--out FILE] [--dispatch async]
                                                                           # time real fits
    .venv/bin/python benchmarks/research/fit_anatomy.py --fit [FILE]                # print the rates
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from advisor.fitting.teardown import fit_rates, observations

ROOT = Path(__file__).resolve().parents[2]
CASES: dict[str, tuple[str, dict[str, int]]] = {
    # epochs of about 1 s to 15 s on two cores, so the ages cross several wake-ups
    "mnist_mlp": ("mnist_mlp", {"samples": 60_000, "validation_samples": 10_000, "epochs": 4}),
    "mnist_cnn": ("mnist_cnn", {"samples": 12_800, "validation_samples": 2_560, "epochs": 4}),
    "imdb_bilstm": ("imdb_bilstm", {"samples": 6_400, "validation_samples": 1_600, "epochs": 3}),
    "cifar10_cnn": ("cifar10_cnn", {"samples": 6_400, "validation_samples": 1_000, "epochs": 3}),
}


def worker(model: str, sizes: dict[str, int], dispatch: str = "sync") -> dict:
    """One real fit, stamped at every callback with (wall, process CPU). A callback with a
    batch-end hook turns off Keras's asynchronous dispatch of batch callbacks, which a user's
    fit keeps; ``dispatch="async"`` declares the stamps safe to run on Keras's callback thread,
    so the fit dispatches as the user's does."""
    from probes import quiet

    quiet.prepare_tensorflow()
    import keras

    from probes.loading import prepare
    from probes.real import user_fit_arguments
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
