"""Rebuild the five TensorFlow 2020 Keras-examples benchmark models as .keras files, to probe.

    python benchmarks/research/tf2_examples_models.py OUT_DIR
    advisor probe --model OUT_DIR/tf_mnist_hrnn.keras --samples 60000 --epochs 2 --batch-size 256
    python benchmarks/research/tf2_examples_models.py --read-architecture data/cpu-gpu-probes

The architectures are those of tensorflow/tensorflow at 003fbbf2b772,
``tensorflow/python/keras/benchmarks/keras_examples_benchmarks/*_benchmark_test.py`` (parameter
counts match ``data/cpu-gpu-workloads.csv``); the published figures they are checked against are
in ``data/cpu-gpu-validation.csv``. The probes taken of them are stored in
``data/cpu-gpu-probes/`` and replayed by ``benchmarks/cpu_gpu_validation.py``. Needs Keras.

``--read-architecture DIR`` fills the ``architecture`` field of the stored probes in ``DIR`` that
predate it: what ``probes.architecture`` reads from the same model (the field a probe records
today; it is counted from the model alone, so it is the same whoever probes it). Their measured
fields are left as they are.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# (samples, batch size) of each model's CPU row in data/cpu-gpu-validation.csv
PROBE_SETTINGS = {
    "tf_mnist_conv": (60_000, 256),
    "tf_mnist_hrnn": (60_000, 256),
    "tf_imdb_bilstm2": (25_000, 512),
    "tf_reuters_mlp": (8_982, 128),
    "tf_mnist_irnn": (60_000, 1024),
}


def build(name: str):  # type: ignore[no-untyped-def]
    import keras
    from keras import Input, layers

    if name == "tf_mnist_conv":
        model = keras.Sequential([
            Input((28, 28, 1)), layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2),
            layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2), layers.Flatten(),
            layers.Dropout(0.5), layers.Dense(10, activation="softmax"),
        ])  # fmt: skip
        model.compile("adam", "categorical_crossentropy")
    elif name == "tf_mnist_hrnn":
        inputs = Input((28, 28, 1))
        rows = layers.TimeDistributed(layers.LSTM(128))(inputs)
        model = keras.Model(inputs, layers.Dense(10, activation="softmax")(layers.LSTM(128)(rows)))
        model.compile("rmsprop", "categorical_crossentropy")
    elif name == "tf_imdb_bilstm2":
        inputs = Input((200,), dtype="int32")
        x = layers.Embedding(20_000, 128)(inputs)
        x = layers.Bidirectional(layers.LSTM(64, return_sequences=True))(x)
        x = layers.Bidirectional(layers.LSTM(64))(x)
        model = keras.Model(inputs, layers.Dense(1, activation="sigmoid")(x))
        model.compile("adam", "binary_crossentropy")
    elif name == "tf_reuters_mlp":
        model = keras.Sequential([
            Input((1000,)), layers.Dense(512), layers.Activation("relu"), layers.Dropout(0.5),
            layers.Dense(46), layers.Activation("softmax"),
        ])  # fmt: skip
        model.compile("adam", "categorical_crossentropy")
    elif name == "tf_mnist_irnn":
        model = keras.Sequential([
            Input((784, 1)), layers.SimpleRNN(100, activation="relu"), layers.Dense(10),
            layers.Activation("softmax"),
        ])  # fmt: skip
        model.compile(keras.optimizers.RMSprop(1e-6), "categorical_crossentropy")
    else:
        raise ValueError(name)
    return model


def read_architecture(probes_dir: Path) -> None:
    """Add the counted architecture to each stored probe of these models that lacks it."""
    import json
    from dataclasses import replace

    from probes import architecture
    from probes.history import from_json, to_json

    for name in PROBE_SETTINGS:
        path = probes_dir / f"{name}.json"
        probe = from_json(path.read_text(encoding="utf-8"))
        if probe.architecture is None:
            probe = replace(probe, architecture=architecture.read(build(name)))
            blob = json.dumps(json.loads(to_json(probe)), indent=1, sort_keys=True)
            path.write_text(blob + "\n", encoding="utf-8")
        print(f"{name}: {probe.architecture}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--read-architecture":
        read_architecture(Path(argv[1]))
        return 0
    if len(argv) != 1:
        print(
            "usage: tf2_examples_models.py OUT_DIR | --read-architecture PROBES_DIR",
            file=sys.stderr,
        )
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, (samples, batch) in PROBE_SETTINGS.items():
        model = build(name)
        model.save(out / f"{name}.keras")
        print(f"{name}: {model.count_params()} parameters; probe with --samples {samples} "
              f"--batch-size {batch}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
