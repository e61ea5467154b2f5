"""Keras 3 builders for the workload zoo (architectures in docs/SOURCES.md, "The workload zoo"), compiled as trained.

Imports Keras inside the functions only. ``build(workload)`` returns a compiled model whose
parameter count matches ``advisor.workloads.zoo`` (tests/probes/test_networks.py checks each one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from advisor.workloads.transformers import Shape
from advisor.workloads.zoo import Workload
from probes import quiet

FASTTEXT_VOCABULARY = 1_000_000
"""Uni+bigram vocabulary of imdb_fasttext (about 1e6 in the original script)."""
BILSTM_VOCABULARY = 20_000
IMAGENET_CLASSES = 1001
ADAMW = {"bert": (3e-5, 0.01), "gpt2": (6e-4, 0.1), "vit": (1e-3, 0.05)}
"""AdamW learning rate and weight decay by model family: google-research/bert run_squad (3e-5,
0.01), nanoGPT train.py (6e-4, 0.1), DeiT (5e-4 x batch/512 = 1e-3, 0.05)."""


def build(
    workload: Workload, shape: Shape | None = None, stages: tuple[int, ...] | None = None
) -> Any:
    """A freshly initialised, compiled ``keras.Model`` for ``workload``; a transformer at
    ``shape``, a ResNet with ``stages`` blocks per stage when given (a probe's smaller proxy of
    the published model)."""
    shape = shape or workload.transformer
    if shape is not None:
        from probes.transformer_layers import add_adapters, build_transformer

        model = build_transformer(shape, name=_keras_name(workload.id))
        if workload.adapters is not None:
            add_adapters(model, *workload.adapters)
        model.compile(
            optimizer=optimizer(workload.optimizer, workload.id), loss=_logits_loss(), metrics=[]
        )
        return model
    if workload.stages:
        model = _resnet_v1(workload, stages or workload.stages)
    else:
        model = _BUILDERS[workload.id](workload)
    loss, metrics = _loss(workload)
    model.compile(optimizer=optimizer(workload.optimizer, workload.id), loss=loss, metrics=metrics)
    return model


def _keras_name(workload_id: str) -> str:
    """A name Keras accepts for a model (an LLM job's id holds ``:`` and ``.``)."""
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in workload_id)


def optimizer(name: str, workload_id: str = "") -> Any:
    quiet.prepare()
    import keras

    if name == "rmsprop":
        rate = {"cifar10_cnn": 1e-4, "lstm_text_generation": 0.01}.get(workload_id, 1e-3)
        return keras.optimizers.RMSprop(learning_rate=rate)
    if name == "adadelta":
        return keras.optimizers.Adadelta(learning_rate=1.0)
    if name == "adam":
        return keras.optimizers.Adam()
    if name == "momentum":
        return keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
    if name == "adamw":
        rate, decay = ADAMW.get(workload_id.split("_")[0], (1e-4, 0.01))
        return keras.optimizers.AdamW(learning_rate=rate, weight_decay=decay)
    raise ValueError(f"unknown optimizer {name!r}")


def classes(workload: Workload) -> int:
    """Output units: 1 for the binary IMDB models, else the class count."""
    return {"imdb_fasttext": 1, "imdb_bilstm": 1, "lstm_text_generation": 57}.get(
        workload.id, IMAGENET_CLASSES if workload.synthetic_input else 10
    )


def _logits_loss() -> Any:
    import keras

    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _loss(workload: Workload) -> tuple[str, list[str]]:
    if classes(workload) == 1:
        return "binary_crossentropy", ["accuracy"]
    if workload.id == "lstm_text_generation":
        return "categorical_crossentropy", []
    return "sparse_categorical_crossentropy", ["accuracy"]


def _mnist_mlp(w: Workload) -> Any:
    from keras import Input, Sequential, layers

    return Sequential([
        Input(w.input_shape),
        layers.Dense(512, activation="relu"), layers.Dropout(0.2),
        layers.Dense(512, activation="relu"), layers.Dropout(0.2),
        layers.Dense(10, activation="softmax"),
    ], name=w.id)  # fmt: skip


def _mnist_cnn(w: Workload) -> Any:
    from keras import Input, Sequential, layers

    return Sequential([
        Input(w.input_shape),
        layers.Conv2D(32, 3, activation="relu"), layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(2), layers.Dropout(0.25), layers.Flatten(),
        layers.Dense(128, activation="relu"), layers.Dropout(0.5),
        layers.Dense(10, activation="softmax"),
    ], name=w.id)  # fmt: skip


def _cifar10_cnn(w: Workload) -> Any:
    from keras import Input, Sequential, layers

    return Sequential([
        Input(w.input_shape),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(2), layers.Dropout(0.25),
        layers.Conv2D(64, 3, padding="same", activation="relu"),
        layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(2), layers.Dropout(0.25),
        layers.Flatten(), layers.Dense(512, activation="relu"), layers.Dropout(0.5),
        layers.Dense(10, activation="softmax"),
    ], name=w.id)  # fmt: skip


def _imdb_fasttext(w: Workload) -> Any:
    from keras import Input, Sequential, layers

    return Sequential([
        Input(w.input_shape, dtype="int32"),
        layers.Embedding(FASTTEXT_VOCABULARY, 50), layers.GlobalAveragePooling1D(),
        layers.Dense(1, activation="sigmoid"),
    ], name=w.id)  # fmt: skip


def _imdb_bilstm(w: Workload) -> Any:
    from keras import Input, Sequential, layers

    return Sequential([
        Input(w.input_shape, dtype="int32"),
        layers.Embedding(BILSTM_VOCABULARY, 128), layers.Bidirectional(layers.LSTM(64)),
        layers.Dropout(0.5), layers.Dense(1, activation="sigmoid"),
    ], name=w.id)  # fmt: skip


def _lstm_text_generation(w: Workload) -> Any:
    from keras import Input, Sequential, layers

    return Sequential(
        [Input(w.input_shape), layers.LSTM(128), layers.Dense(57, activation="softmax")],
        name=w.id,
    )


def _resnet32_cifar10(w: Workload) -> Any:
    """ResNet v2 (pre-activation), 6n+2 layers with n=5, as in the Keras CIFAR-10 example."""
    from keras import Input, Model, layers, regularizers

    def conv(filters: int, kernel: int = 3, strides: int = 1) -> Any:
        return layers.Conv2D(
            filters, kernel, strides=strides, padding="same", use_bias=False,
            kernel_initializer="he_normal", kernel_regularizer=regularizers.l2(2e-4),
        )  # fmt: skip

    inputs = Input(w.input_shape)
    x = conv(16)(inputs)
    for stage, filters in enumerate((16, 32, 64)):
        for block in range(5):
            strides = 2 if stage > 0 and block == 0 else 1
            y = layers.Activation("relu")(layers.BatchNormalization()(x))
            shortcut = conv(filters, 1, strides)(y) if strides == 2 else x
            y = conv(filters, strides=strides)(y)
            y = conv(filters)(layers.Activation("relu")(layers.BatchNormalization()(y)))
            x = layers.add([shortcut, y])
    x = layers.GlobalAveragePooling2D()(layers.Activation("relu")(layers.BatchNormalization()(x)))
    outputs = layers.Dense(10, activation="softmax")(x)
    return Model(inputs, outputs, name=w.id)


def _alexnet(w: Workload) -> Any:
    """tf_cnn_benchmarks' AlexNet: 227x227 input, conv 64-192-384-384-256, FC 4096 x2."""
    from keras import Input, Sequential, layers

    return Sequential([
        Input(w.input_shape),
        layers.Conv2D(64, 11, strides=4, activation="relu"), layers.MaxPooling2D(3, 2),
        layers.Conv2D(192, 5, padding="same", activation="relu"), layers.MaxPooling2D(3, 2),
        layers.Conv2D(384, 3, padding="same", activation="relu"),
        layers.Conv2D(384, 3, padding="same", activation="relu"),
        layers.Conv2D(256, 3, padding="same", activation="relu"), layers.MaxPooling2D(3, 2),
        layers.Flatten(),
        layers.Dense(4096, activation="relu"), layers.Dropout(0.5),
        layers.Dense(4096, activation="relu"), layers.Dropout(0.5),
        layers.Dense(IMAGENET_CLASSES, activation="softmax"),
    ], name=w.id)  # fmt: skip


def _resnet_v1(w: Workload, stages: tuple[int, ...]) -> Any:
    """ResNet v1 with bottleneck blocks, ``stages`` of them per stage (64-512 filters), built
    by the function ``keras.applications``' ResNet50/101/152 are built with (the same layers,
    names and initialisers; ``resnet152`` as ``(3, 8, 36, 3)`` is ``ResNet152``)."""
    from keras.src.applications import resnet

    def stack(x: Any) -> Any:
        for index, (filters, blocks) in enumerate(zip((64, 128, 256, 512), stages, strict=True)):
            x = resnet.stack_residual_blocks_v1(
                x, filters, blocks, stride1=2 if index else 1, name=f"conv{index + 2}"
            )
        return x

    return resnet.ResNet(
        stack, False, True, name=w.id, weights=None, input_shape=w.input_shape,
        classes=IMAGENET_CLASSES,
    )  # fmt: skip


def _application(name: str) -> Callable[[Workload], Any]:
    def builder(w: Workload) -> Any:
        from keras import applications

        constructor = getattr(applications, name)
        return constructor(weights=None, input_shape=w.input_shape, classes=IMAGENET_CLASSES)

    return builder


_BUILDERS: dict[str, Callable[[Workload], Any]] = {
    "mnist_mlp": _mnist_mlp,
    "mnist_cnn": _mnist_cnn,
    "cifar10_cnn": _cifar10_cnn,
    "imdb_fasttext": _imdb_fasttext,
    "imdb_bilstm": _imdb_bilstm,
    "lstm_text_generation": _lstm_text_generation,
    "resnet32_cifar10": _resnet32_cifar10,
    "alexnet": _alexnet,
    "inception3": _application("InceptionV3"),
    "vgg16": _application("VGG16"),
}
