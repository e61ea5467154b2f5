"""The anatomy of real ``model.fit`` runs, and the fit of the iterator-teardown rates.

Each run trains a zoo workload for real (fresh process, NumPy arrays, validation, shuffling: what
a user does) and stamps wall time and process CPU time at every callback. Where a fit drops a
tf.data iterator (``probes.teardown``) the idle time there (wall minus CPU: nothing computes
while it waits) is one observation of a teardown wait at a known iterator age. The rates are
the ratio estimator sum(observed waits) / sum(expected wait if every drop stalled), one per place,
written to ``data/fit-teardown.json`` with ``--write``.

The cases are the zoo's; the accuracy benchmark's user models (``benchmarks/local_accuracy.py``)
are never run here, so they stay out of this fit.

    .venv/bin/python benchmarks/fit_anatomy.py [--runs N] [--out FILE]     # time real fits
    .venv/bin/python benchmarks/fit_anatomy.py --fit [FILE] [--write]      # fit the rates
"""

from __future__ import annotations

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


def worker(model: str, sizes: dict[str, int]) -> dict:
    """One real fit, stamped at every callback with (wall, process CPU)."""
    from probes import quiet

    quiet.prepare_tensorflow()
    import keras

    from probes.fitting import arrays
    from probes.loading import prepare
    from probes.spec import spec_for

    spec = spec_for(model, **sizes)
    config = spec.config
    prepared = prepare(spec)
    x, y = arrays(prepared, config.samples, config.batch_size, seed=0)
    validation = None
    if config.validation_samples:
        validation = arrays(prepared, config.validation_samples, config.batch_size, seed=2)
    events: list[tuple[str, float, float]] = []

    def stamp(name: str) -> None:
        events.append((name, time.perf_counter(), time.process_time()))

    class Stamper(keras.callbacks.Callback):
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
    prepared.model.fit(x, y, batch_size=config.batch_size, epochs=config.epochs, shuffle=True,
                       validation_data=validation, verbose=0, callbacks=[Stamper()])  # fmt: skip
    stamp("return")
    return {"events": events}


def observations(events: list[list]) -> list[dict]:
    """Every place a fit dropped an iterator: its age and the idle time there."""
    rows = []
    last: dict[str, tuple[float, float]] = {}
    epoch_begin = None
    for (name, wall, cpu), (_, prev_wall, prev_cpu) in zip(events[1:], events, strict=False):
        idle = max(0.0, (wall - prev_wall) - (cpu - prev_cpu))
        if name == "first_batch_begin" and epoch_begin is not None and "epoch_begin" in last:
            rows.append({"place": "epoch_start", "age": last["epoch_begin"][0] - epoch_begin,
                         "idle": idle})  # fmt: skip
        if name == "epoch_end" and "test_begin" in last and "test_end" in last:
            age = last["test_end"][0] - last["test_begin"][0]
            rows.append({"place": "validation_end", "age": age, "idle": idle})
        if name == "return":
            rows.append({"place": "fit_end", "age": last["train_end"][0] - last["epoch_begin"][0],
                         "idle": idle})  # fmt: skip
        if name == "epoch_begin":
            epoch_begin = last.get("epoch_begin", (None,))[0]
        last[name] = (wall, cpu)
    return rows


def fit_rates(runs: list[dict]) -> dict:
    """Per place: the chance a drop waits, as sum(idle) / sum(wait if it always stalled)."""
    from probes.teardown import mean_wait

    by_place: dict[str, list[dict]] = {}
    for run in runs:
        for row in observations(run["events"]):
            by_place.setdefault(row["place"], []).append(row)
    rates, detail = {}, {}
    for place, rows in sorted(by_place.items()):
        expected = sum(mean_wait(r["age"]) for r in rows)
        observed = sum(r["idle"] for r in rows)
        rates[place] = round(min(1.0, observed / expected), 3) if expected > 0 else 0.0
        detail[place] = {
            "drops": len(rows),
            "stalled": sum(r["idle"] > IDLE_FLOOR for r in rows),
            "observed_seconds": round(observed, 2),
            "expected_if_always_seconds": round(expected, 2),
            "median_age_seconds": round(statistics.median(r["age"] for r in rows), 2),
        }
    return {"rates": rates, "detail": detail}


def run_worker(model: str, sizes: dict[str, int]) -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", model, json.dumps(sizes)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{model} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> None:
    out_file = ROOT / "benchmarks" / "fit_anatomy.json"
    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(argv[1], json.loads(argv[2]))))
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
    rows = json.loads(out_file.read_text()) if out_file.exists() else {}
    for _ in range(runs):
        for name, (model, sizes) in CASES.items():  # interleaved: one of each, then again
            run = run_worker(model, sizes)
            rows.setdefault(name, []).append(run)
            waits = [(r["place"], round(r["age"], 1), round(r["idle"], 2))
                     for r in observations(run["events"])]  # fmt: skip
            print(name, waits, flush=True)
            out_file.write_text(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
