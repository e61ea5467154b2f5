"""Probe accuracy: predicted vs real training time on this machine.

For each case: probe it (fresh process, default 20 s budget), then really train the same
configuration with ``model.fit`` for >= 2 epochs (another fresh process) and compare
``startup + predicted`` with the real build + fit wall time, and the predicted per-epoch time
with the real epochs after the first. Sample counts are scaled down so a real run takes about
10-60 s on 2 cores; the cases say by how much.

This machine's speed drifts by tens of percent from one minute to the next, so ``--pairs N``
repeats probe-then-real N times per case, interleaved, and the table compares the median
prediction with the median real run (a drift then hits both sides alike).

    .venv/bin/python benchmarks/probe_accuracy.py [CASE ...] [--pairs N] [--out FILE]
    .venv/bin/python benchmarks/probe_accuracy.py --table [FILE]    # the docs' table
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES: dict[str, tuple[str, dict[str, int]]] = {
    # name: (model, size overrides for a 20-60 s real run)
    "mnist_mlp": ("mnist_mlp", {"epochs": 3}),
    "mnist_cnn": ("mnist_cnn", {"samples": 12_800, "validation_samples": 2_560, "epochs": 2}),
    "cifar10_cnn": ("cifar10_cnn", {"samples": 8_000, "validation_samples": 2_000, "epochs": 2}),
    "imdb_fasttext": ("imdb_fasttext", {"samples": 3_200, "validation_samples": 3_200, "epochs": 2}),
    "imdb_bilstm": ("imdb_bilstm", {"samples": 8_000, "validation_samples": 4_000, "epochs": 2}),
    "lstm_text_generation": ("lstm_text_generation", {"samples": 40_000, "epochs": 2}),
    "resnet32_cifar10": ("resnet32_cifar10", {"samples": 2_560, "validation_samples": 1_000, "epochs": 2}),
    # ImageNet CNNs: a reduced run (2 steps an epoch, no validation), probed by extrapolation
    "resnet50": ("resnet50", {"samples": 128, "validation_samples": 0, "epochs": 2}),
    "alexnet": ("alexnet", {"samples": 1024, "validation_samples": 0, "epochs": 2}),
    "user_gru": ("gru.keras", {"samples": 6_400, "validation_samples": 1_600, "epochs": 2}),
    "user_attention": ("attention.keras", {"samples": 6_400, "validation_samples": 1_600, "epochs": 2}),
    "user_wide_dense": ("wide_dense.keras", {"samples": 16_000, "validation_samples": 4_000, "epochs": 2}),
    "user_conv1d": ("conv1d.keras", {"samples": 12_800, "validation_samples": 3_200, "epochs": 2}),
}  # fmt: skip


def make_user_models(folder: Path) -> None:
    """User-style models of kinds the zoo lacks, saved as .keras files (run in a worker)."""
    import keras
    from keras import Input, Model, Sequential, layers

    gru = Sequential([Input((80,), dtype="int32"), layers.Embedding(10_000, 64), layers.GRU(96),
                      layers.Dense(1, activation="sigmoid")], name="gru")  # fmt: skip
    gru.compile("adam", "binary_crossentropy")
    gru.save(folder / "gru.keras")

    tokens = Input((64,), dtype="int32")
    x = layers.Embedding(8_000, 128)(tokens)
    attended = layers.MultiHeadAttention(num_heads=4, key_dim=32)(x, x)
    x = layers.LayerNormalization()(layers.add([x, attended]))
    x = layers.LayerNormalization()(
        layers.add([x, layers.Dense(128)(layers.Dense(256, activation="relu")(x))])
    )
    outputs = layers.Dense(5, activation="softmax")(layers.GlobalAveragePooling1D()(x))
    attention = Model(tokens, outputs, name="attention")
    attention.compile("adam", "sparse_categorical_crossentropy")
    attention.save(folder / "attention.keras")

    wide = Sequential([Input((2048,)), layers.Dense(2048, activation="relu"),
                       layers.Dense(2048, activation="relu"), layers.Dense(100, activation="softmax")],
                      name="wide_dense")  # fmt: skip
    wide.compile(keras.optimizers.SGD(0.01, momentum=0.9), "sparse_categorical_crossentropy")
    wide.save(folder / "wide_dense.keras")

    conv = Sequential([Input((256, 8)), layers.Conv1D(64, 7, activation="relu"), layers.MaxPooling1D(2),
                       layers.Conv1D(128, 5, activation="relu"), layers.GlobalMaxPooling1D(),
                       layers.Dense(1)], name="conv1d")  # fmt: skip
    conv.compile("adam", "mse")
    conv.save(folder / "conv1d.keras")


def worker_probe(model: str, sizes: dict[str, int]) -> dict:
    from advisor.estimate.predict import local_log_sigma
    from probes.run import probe, spec_for

    result = probe(spec_for(model, **sizes))
    z80 = 1.2815516 * local_log_sigma(result)  # a fresh machine: no probe history
    return {
        "predicted": result.predicted_seconds, "low": result.predicted_interval[0],
        "high": result.predicted_interval[1], "startup": result.startup_seconds,
        "low80": result.predicted_seconds * math.exp(-z80),
        "high80": result.predicted_seconds * math.exp(z80),
        "reference": list(result.reference_seconds),
        "step": result.step_seconds, "probe_seconds": result.probe_seconds,
        "per_epoch": result.predicted_seconds / result.config.epochs,
        "extrapolated": result.extrapolated,
    }  # fmt: skip


def worker_real(model: str, sizes: dict[str, int]) -> dict:
    """Train the configuration for real, as a user would: build, compile, fit."""
    import keras

    from probes.fitting import arrays as _arrays
    from probes.loading import prepare
    from probes.reference import reference_seconds
    from probes.spec import spec_for

    reference_before = reference_seconds()
    spec = spec_for(model, **sizes)
    config = spec.config
    begin = time.perf_counter()
    prepared = prepare(spec)
    build = time.perf_counter() - begin
    x, y = _arrays(prepared, config.samples, config.batch_size, seed=0)
    validation = None
    if config.validation_samples:
        validation = _arrays(prepared, config.validation_samples, config.batch_size, seed=2)

    class Epochs(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.begins: list[float] = []
            self.ends: list[float] = []

        def on_epoch_begin(self, epoch: int, logs: object = None) -> None:
            self.begins.append(time.perf_counter())

        def on_epoch_end(self, epoch: int, logs: object = None) -> None:
            self.ends.append(time.perf_counter())

        def on_train_end(self, logs: object = None) -> None:
            self.ends.append(time.perf_counter())

    epochs = Epochs()
    start = time.perf_counter()
    prepared.model.fit(x, y, batch_size=config.batch_size, epochs=config.epochs, shuffle=True,
                       validation_data=validation, verbose=0, callbacks=[epochs])  # fmt: skip
    returned = time.perf_counter()
    later = [e - b for b, e in zip(epochs.begins[1:], epochs.ends[1:-1], strict=True)]
    return {
        "reference": [reference_before, reference_seconds()],
        "total": build + returned - start,
        "per_epoch": statistics.fmean(later),
        "tail": returned - epochs.ends[-1],  # fit's own return after its last callback
    }


def run_worker(kind: str, model: str, sizes: dict[str, int]) -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", kind, model, json.dumps(sizes)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{kind} {model} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(rows: dict[str, list[dict]]) -> str:
    """The markdown table of docs/BENCHMARKS.md: per case, the median prediction against the
    median real run (``--pairs`` interleaved them), and how far the real runs spread."""
    lines = [
        "| case | sizes (scaled) | pairs | predicted s (min-max) | real s (min-max) | fit tail s "
        "| error total | error per epoch | probe s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    totals, epochs, probes, corrected, inside = [], [], [], [], []
    for name, runs in rows.items():
        for r in runs:
            if "low80" not in r["probe"]:
                continue
            startup = r["probe"]["startup"]
            low, high = r["probe"]["low80"] + startup, r["probe"]["high80"] + startup
            inside.append(low <= r["real"]["total"] <= high)
            probe_ref, real_ref = r["probe"]["reference"][0], r["real"]["reference"][0]
            if probe_ref > 0 and real_ref > 0:  # the machine's speed change from probe to run
                guess = (r["probe"]["predicted"] + startup) * real_ref / probe_ref
                corrected.append(guess / r["real"]["total"] - 1)
        real = [r["real"]["total"] for r in runs]
        guesses = [r["probe"]["predicted"] + r["probe"]["startup"] for r in runs]
        total = statistics.median(guesses) / statistics.median(real) - 1
        epoch = (
            statistics.median(r["probe"]["per_epoch"] for r in runs)
            / statistics.median(r["real"]["per_epoch"] for r in runs)
            - 1
        )
        probe_s = statistics.median(r["probe"]["probe_seconds"] for r in runs)
        tail = statistics.median(r["real"].get("tail", math.nan) for r in runs)
        totals.append(total)
        epochs.append(epoch)
        probes.append(probe_s)
        sizes = ", ".join(f"{k}={v}" for k, v in runs[0]["sizes"].items())
        mark = " (extrapolated)" if runs[0]["probe"]["extrapolated"] else ""
        lines.append(
            f"| {name}{mark} | {sizes} | {len(runs)} | {_spread(guesses)} | {_spread(real)} | "
            f"{tail:.1f} | {total:+.1%} | {epoch:+.1%} | {probe_s:.1f} |"
        )
    lines.append(
        f"\nMedian absolute error: total {statistics.median(abs(t) for t in totals):.1%}, "
        f"per epoch {statistics.median(abs(e) for e in epochs):.1%}; worst: total "
        f"{max(totals, key=abs):+.1%}, per epoch {max(epochs, key=abs):+.1%}; probe wall time "
        f"median {statistics.median(probes):.1f} s, max {max(probes):.1f} s."
    )
    if inside:
        lines.append(
            f"\nPairs with the reference kernel ({len(inside)}): the real run inside the 80% "
            f"interval in {sum(inside)} ({sum(inside) / len(inside):.0%}); per-pair error "
            f"corrected for the machine's speed change (reference kernel at the probe and at the "
            f"real run): median |error| {statistics.median(abs(c) for c in corrected):.1%}, "
            f"worst {max(corrected, key=abs):+.1%}."
        )
    return "\n".join(lines)


def _spread(seconds: list[float]) -> str:
    return f"{statistics.median(seconds):.1f} ({min(seconds):.1f}-{max(seconds):.1f})"


def main(argv: list[str]) -> None:
    if argv[:1] == ["--table"]:
        source = Path(argv[1]) if len(argv) > 1 else ROOT / "benchmarks" / "probe_accuracy.json"
        print(table(json.loads(source.read_text())))
        return
    if argv[:1] == ["--worker"]:
        kind, model, sizes = argv[1], argv[2], json.loads(argv[3])
        if kind == "models":
            make_user_models(Path(model))
            print("{}")
            return
        work = worker_probe if kind == "probe" else worker_real
        print(json.dumps(work(model, sizes)))
        return
    out_file = ROOT / "benchmarks" / "probe_accuracy.json"
    if "--out" in argv:
        out_file = Path(argv[argv.index("--out") + 1])
        del argv[argv.index("--out") : argv.index("--out") + 2]
    pairs = 1
    if "--pairs" in argv:
        pairs = int(argv[argv.index("--pairs") + 1])
        del argv[argv.index("--pairs") : argv.index("--pairs") + 2]
    names = argv or list(CASES)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT, check=False).stdout.strip()  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    run_worker("models", str(folder), {})
    rows = json.loads(out_file.read_text()) if out_file.exists() else {}
    for name in [name for name in names for _ in range(pairs)]:  # pairs back to back
        model, sizes = CASES[name]
        if model.endswith(".keras"):
            model = str(folder / model)
        load = os.getloadavg()[0]
        probed = run_worker("probe", model, sizes)
        real = run_worker("real", model, sizes)
        predicted_total = probed["predicted"] + probed["startup"]
        row = {
            "sizes": sizes, "probe": probed, "real": real, "load": round(load, 2),
            "commit": commit, "at": time.strftime("%H:%M", time.gmtime()),
            "error_total": predicted_total / real["total"] - 1,
            "error_epoch": probed["per_epoch"] / real["per_epoch"] - 1,
        }  # fmt: skip
        rows.setdefault(name, []).append(row)
        print(f"{name:22s} predicted {predicted_total:7.1f} s  real {real['total']:7.1f} s  "
              f"error {row['error_total']:+6.1%}  per-epoch error {row['error_epoch']:+6.1%}  "
              f"probe {probed['probe_seconds']:5.1f} s  load {load:.2f}", flush=True)  # fmt: skip
        out_file.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
