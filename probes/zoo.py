"""The workload zoo: the training runs of the seed benchmarks, as plain facts.

This module never imports TensorFlow: the estimation layer and ``advisor models`` read these facts
without building a model. The Keras builders live in ``probes.networks``.

Sizes, epochs, batch sizes, parameter counts and FLOPs come from the project's workload reference
(WORKLOADS.md, distilled from the seed posts; see docs/SOURCES.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.errors import UsageError, did_you_mean

IMAGENET_TRAIN = 1_281_167
IMAGENET_VALIDATION = 50_000


@dataclass(frozen=True)
class Workload:
    id: str
    """Canonical id, as in the reference measurements (``imdb_bilstm``)."""
    title: str
    aliases: tuple[str, ...]
    input_shape: tuple[int, ...]
    input_dtype: str
    """``float32`` or ``int32`` (token ids)."""
    samples: int
    validation_samples: int
    epochs: int
    batch_size: int
    optimizer: str
    parameters: int
    """Trainable parameters of the reference model (WORKLOADS.md)."""
    train_flops_per_sample: float
    """Approximate training FLOPs per sample (3 x forward); 0 when not FLOP-bound."""
    family: str
    """What dominates a step: ``dense``, ``conv``, ``recurrent`` or ``embedding``."""
    synthetic_input: bool = False
    """True where the reference figures used synthetic data (no input pipeline was timed)."""


WORKLOADS: tuple[Workload, ...] = (
    Workload("mnist_mlp", "MNIST multilayer perceptron", ("mlp",), (784,), "float32",
             60_000, 10_000, 20, 128, "rmsprop", 669_706, 4.0e6, "dense"),
    Workload("mnist_cnn", "MNIST small convnet", ("cnn", "mnist-cnn"), (28, 28, 1), "float32",
             60_000, 10_000, 12, 128, "adadelta", 1_199_882, 72e6, "conv"),
    Workload("cifar10_cnn", "CIFAR-10 convnet", ("cifar", "cifar10"), (32, 32, 3), "float32",
             49_984, 10_000, 20, 32, "rmsprop", 1_250_858, 124e6, "conv"),
    Workload("imdb_fasttext", "IMDB fastText (uni+bigram embedding)", ("fasttext",), (400,),
             "int32", 25_000, 25_000, 5, 32, "adam", 50 * 1_000_000 + 51, 0.0, "embedding"),
    Workload("imdb_bilstm", "IMDB bidirectional LSTM", ("lstm", "bilstm"), (100,), "int32",
             25_000, 25_000, 4, 32, "adam", 2_658_945, 59e6, "recurrent"),
    Workload("lstm_text_generation", "Nietzsche character LSTM", ("lstm-text", "text-lstm"),
             (40, 57), "float32", 200_285, 0, 10, 128, "rmsprop", 102_585, 23e6, "recurrent"),
    Workload("resnet32_cifar10", "ResNet-32 v2 on CIFAR-10", ("resnet32",), (32, 32, 3),
             "float32", 50_000, 10_000, 250, 128, "momentum", 467_000, 416e6, "conv"),
    Workload("alexnet", "AlexNet (ImageNet)", (), (227, 227, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 512, "momentum", 61_800_000, 5.0e9,
             "conv", synthetic_input=True),
    Workload("inception3", "Inception v3 (ImageNet)", ("inception", "inceptionv3"),
             (299, 299, 3), "float32", IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 32, "momentum",
             23_800_000, 34e9, "conv", synthetic_input=True),
    Workload("resnet50", "ResNet-50 v1 (ImageNet)", ("resnet",), (224, 224, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 64, "momentum", 25_560_000, 23.1e9,
             "conv", synthetic_input=True),
    Workload("resnet152", "ResNet-152 v1 (ImageNet)", (), (224, 224, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 32, "momentum", 60_190_000, 67.7e9,
             "conv", synthetic_input=True),
    Workload("vgg16", "VGG-16 (ImageNet)", ("vgg",), (224, 224, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 74, 64, "momentum", 138_400_000, 92.8e9,
             "conv", synthetic_input=True),
)  # fmt: skip

_BY_NAME = {name: w for w in WORKLOADS for name in (w.id, *w.aliases)}


def names() -> list[str]:
    """Every id and alias a user may type."""
    return sorted(_BY_NAME)


def get(name: str) -> Workload:
    """The workload called ``name`` (id or alias, case-insensitive), or a usage error."""
    key = name.strip().lower()
    workload = _BY_NAME.get(key) or _BY_NAME.get(key.replace("-", "_"))
    if workload is not None:
        return workload
    raise UsageError(f"unknown model {name!r}{did_you_mean(name, names())} (see 'advisor models')")
