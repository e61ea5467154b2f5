"""Hostile inputs that ``benchmarks/robustness.py`` and ``benchmarks/robustness_figures.py``
share: a sane probe export to poison, a damaged stored value, a model file whose layers claim
more weights than any machine holds, and the wrapper that measures a command's peak memory."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

STORED_AT = "2026-06-01T00:00:00+00:00"
CLAIMS_2_31 = b"[" + (2**31 - 1).to_bytes(4, "little")
"""A marshalled list header that claims 2**31 - 1 items, and nothing after it: five bytes."""

MEASURED = """
import atexit, runpy, sys
def peak(path=sys.argv[1]):
    with open('/proc/self/status') as status:
        kib = next(line.split()[1] for line in status if line.startswith('VmHWM:'))
    with open(path, 'w') as out:
        out.write(kib)
atexit.register(peak)
sys.argv = ['advisor', *sys.argv[2:]]
runpy.run_module('advisor', run_name='__main__')
"""
"""``python -m advisor`` that writes its peak resident memory (``VmHWM``, KiB) on exit: the
process's own peak, not its parent's, which ``wait4``'s maxrss would carry across ``exec``."""


def result_csv(created: str = STORED_AT, **facts: str) -> str:
    """An export (exchange CSV) of a sane probe of ``mlp`` on this machine, with ``facts`` of its
    notes (or of its row: ``value``, ``workload``) replaced by hostile values."""
    from probes import exchange
    from probes.device import fingerprint
    from probes.result import ProbeResult
    from probes.spec import spec_for

    config = spec_for("mlp").config
    step = 0.01
    steps = config.steps_per_epoch * config.epochs
    result = ProbeResult(
        config=config, device=fingerprint(), step_seconds=step, step_interval=(0.009, 0.011),
        validation_step_seconds=0.003, epoch_overhead_seconds=0.05, startup_seconds=2.0,
        predicted_seconds=steps * step, predicted_interval=(steps * 0.009, steps * 0.011),
        samples_per_second=config.batch_size / step, probe_seconds=10.0,
        flops_per_sample=1e6, parameters=100_000, peak_host_bytes=10**8,
        batch_scaling={config.batch_size: step}, created_at=created,
    )  # fmt: skip
    rows = exchange.to_rows(result)
    parts = rows[0]["notes"].split("; ")
    for key, value in facts.items():
        if key in ("value", "workload"):
            rows[0][key] = value
            continue
        parts = [f"{key}={value}" if p.startswith(f"{key}=") else p for p in parts]
    rows[0]["notes"] = "; ".join(parts)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=exchange.COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def run_keras(code: str) -> None:
    """Run ``code``, which imports Keras, in a fresh process with TensorFlow's logging off."""
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})  # fmt: skip


def string_input_model(work: Path) -> None:
    """A .keras model whose input is a string tensor, in ``work`` (imports Keras: a slow case)."""
    run_keras(
        "import keras; i = keras.Input(shape=(1,), dtype='string'); "
        "o = keras.layers.StringLookup(vocabulary=['a','b'])(i); "
        "o = keras.layers.Dense(1)(keras.ops.cast(o, 'float32')); "
        f"keras.Model(i, o).save({str(work / 'text.keras')!r})"
    )


def _layer(class_name: str, config: dict, input_shape: list | None) -> dict:
    """One layer as Keras 3 writes it into a .keras file's ``config.json``."""
    layer = {"module": "keras.layers", "class_name": class_name, "config": config,
             "registered_name": None}  # fmt: skip
    if input_shape is not None:
        layer["build_config"] = {"input_shape": input_shape}
    return layer


def dense_config(inputs: int, units: int) -> dict:
    """The ``config.json`` of a Sequential model: ``inputs`` features into one Dense of
    ``units``, compiled with Adam."""
    dense = {"name": "dense", "trainable": True, "units": units, "activation": "linear",
             "use_bias": True}  # fmt: skip
    model: dict = {
        "module": "keras",
        "class_name": "Sequential",
        "config": {
            "name": "sequential",
            "trainable": True,
            "layers": [
                _layer("InputLayer", {"batch_shape": [None, inputs], "name": "input"}, None),
                _layer("Dense", dense, [None, inputs]),
            ],
        },
        "build_config": {"input_shape": [None, inputs]},
        "compile_config": {
            "optimizer": {"module": "keras.optimizers", "class_name": "Adam", "config": {}},
            "loss": "mean_squared_error",
        },
    }
    return model


def dense_model_file(path: Path, inputs: int, units: int, *, depth: int = 0) -> Path:
    """A .keras archive (``metadata.json``, ``config.json``, a token ``model.weights.h5``)
    whose one Dense layer claims ``inputs x units`` weights: a few kilobytes that would make
    Keras allocate the whole kernel before finding the weights missing. ``depth`` > 0 puts a
    value nested in that many lists into the Dense layer's config (deeper than any reader
    should follow)."""
    metadata = {"keras_version": "3.12.0", "date_saved": "2026-11-25@00:00:00"}
    config = dense_config(inputs, units)
    config["config"]["layers"][1]["config"]["nested"] = "NESTED"
    text = json.dumps(config).replace('"NESTED"', "[" * depth + "0" + "]" * depth)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", json.dumps(metadata))
        archive.writestr("config.json", text)
        archive.writestr("model.weights.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 16_000)
    return path
