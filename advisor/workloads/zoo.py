"""The workload zoo: the training runs of the seed benchmarks, as plain facts.

This module never imports TensorFlow: the estimation layer and ``advisor models`` read these facts
without building a model. The Keras builders live in ``probes.networks``.

Sizes, epochs, batch sizes, parameter counts and FLOPs come from the project's workload reference
(docs/SOURCES.md, distilled from the seed posts; see docs/SOURCES.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor import display
from advisor.errors import UsageError, did_you_mean
from advisor.workloads import transformers
from advisor.workloads.transformers import Shape

IMAGENET_TRAIN = 1_281_167
IMAGENET_VALIDATION = 50_000
SQUAD_TRAIN_FEATURES = 88_641
"""SQuAD v1.1 training set as BERT sees it: 87,599 questions, split into 88,641 windows of 384
tokens (doc stride 128) by google-research/bert's run_squad.py."""
MNLI_TRAIN, MNLI_VALIDATION = 392_702, 9_815
"""GLUE MNLI train and dev-matched sizes (Wang et al. 2019, GLUE, Table 1)."""
OPENWEBTEXT_SEQUENCES, OPENWEBTEXT_VALIDATION = 9_035_582_198 // 1024, 4_434_897 // 1024
"""nanoGPT's OpenWebText (data/openwebtext/prepare.py): 9,035,582,198 training and 4,434,897
validation GPT-2 tokens, as sequences of 1,024."""


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
    """Trainable parameters of the reference model (docs/SOURCES.md, "The workload zoo")."""
    train_flops_per_sample: float
    """Approximate training FLOPs per sample (3 x forward); 0 when not FLOP-bound. For a
    transformer, 6 N T + 6 L T^2 h (``advisor.workloads.transformers``)."""
    family: str
    """What dominates a step: ``dense``, ``conv``, ``recurrent`` or ``embedding``."""
    synthetic_input: bool = False
    """True where the reference figures used synthetic data (no input pipeline was timed)."""
    transformer: Shape | None = None
    """The published configuration of a transformer (``family == "transformer"``), else None."""
    adapters: tuple[int, tuple[str, ...]] | None = None
    """An LLM fine-tuned with LoRA (``advisor.workloads.llm_job``): the rank and the projections that get
    adapters, every other weight frozen; None: every weight trains."""
    stages: tuple[int, ...] = ()
    """Bottleneck blocks per stage of a ResNet v1 (He et al. 2016, Table 1), built as
    ``keras.applications`` builds it; () for any other architecture."""
    activations: float = 0.0
    """Forward activation elements per sample, summed over layer outputs (counted by hand from
    the architectures in docs/SOURCES.md; the ImageNet nets rounded from their published memory
    footprints); 0: not counted (a transformer's come from its shape)."""
    conv_share: float = 0.0
    """Share of the training FLOPs in convolutions, counted from the architectures (docs/SOURCES.md,
    multiply-adds per layer); the rest are the classifier's dense layers."""
    conv_channels: float = 0.0
    """Output channels of the convolutions, FLOP-weighted harmonic mean: the narrow side of the
    products they are (``probes.architecture`` on the zoo's Keras models, 2026-11-25)."""
    winograd_share: float = 0.0
    """Share of the training FLOPs in 3x3 and 5x5 stride-1 convolutions, which cuDNN runs as
    Winograd transforms (its WINOGRAD_NONFUSED algorithm takes 3x3 and 5x5 filters). AlexNet:
    conv2 (5x5, 224M multiply-adds) and conv3-5 (3x3, 486M) of 839M."""
    recurrent_layers: tuple[tuple[str, int, int], ...] = ()
    """The recurrent layers (``probes.networks``): cell, inputs per time step, hidden units."""
    host_augmented: bool = False
    """The reference runs augmented images on the host CPU each step (docs/SOURCES.md, "The workload zoo")."""


def _transformer(
    id: str, title: str, aliases: tuple[str, ...], shape: Shape, samples: int,
    validation: int, epochs: int, batch: int, synthetic_input: bool = False,
) -> Workload:  # fmt: skip
    """A transformer workload: parameters and FLOPs counted from its shape, AdamW."""
    vision = shape.kind == transformers.VISION
    input_shape = (shape.image, shape.image, 3) if vision else (shape.sequence,)
    dtype = "float32" if vision else "int32"
    return Workload(
        id, title, aliases, input_shape, dtype, samples, validation, epochs, batch, "adamw",
        shape.parameters(), shape.train_flops_per_sample(), "transformer", synthetic_input, shape,
    )  # fmt: skip


CLASSIC: tuple[Workload, ...] = (
    Workload("mnist_mlp", "MNIST multilayer perceptron", ("mlp",), (784,), "float32",
             60_000, 10_000, 20, 128, "rmsprop", 669_706, 4.0e6, "dense",
             activations=2.8e3),
    Workload("mnist_cnn", "MNIST small convnet", ("cnn", "mnist-cnn"), (28, 28, 1), "float32",
             60_000, 10_000, 12, 128, "adadelta", 1_199_882, 72e6, "conv",
             activations=7.8e4, conv_share=0.9, conv_channels=62.8, winograd_share=0.9),
    Workload("cifar10_cnn", "CIFAR-10 convnet", ("cifar", "cifar10"), (32, 32, 3), "float32",
             49_984, 10_000, 20, 32, "rmsprop", 1_250_858, 124e6, "conv",
             activations=2.05e5, conv_share=0.94, conv_channels=43.5, winograd_share=0.94,
             host_augmented=True),
    Workload("imdb_fasttext", "IMDB fastText (uni+bigram embedding)", ("fasttext",), (400,),
             "int32", 25_000, 25_000, 5, 32, "adam", 50 * 1_000_000 + 51, 0.0, "embedding",
             activations=2.0e4),
    Workload("imdb_bilstm", "IMDB bidirectional LSTM", ("lstm", "bilstm"), (100,), "int32",
             25_000, 25_000, 4, 32, "adam", 2_658_945, 59e6, "recurrent",
             activations=9.0e4, recurrent_layers=(("lstm", 128, 64),)),
    Workload("lstm_text_generation", "Nietzsche character LSTM", ("lstm-text", "text-lstm"),
             (40, 57), "float32", 200_285, 0, 10, 128, "rmsprop", 102_585, 23e6, "recurrent",
             activations=3.3e4, recurrent_layers=(("lstm", 57, 128),)),
    Workload("resnet32_cifar10", "ResNet-32 v2 on CIFAR-10", ("resnet32",), (32, 32, 3),
             "float32", 50_000, 10_000, 250, 128, "momentum", 467_000, 416e6, "conv",
             activations=8.6e5, conv_share=0.99, conv_channels=27.0, winograd_share=0.95),
    Workload("alexnet", "AlexNet (ImageNet)", (), (227, 227, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 512, "momentum", 61_800_000, 5.0e9,
             "conv", synthetic_input=True,
             activations=6.0e5, conv_share=0.93, conv_channels=209.4, winograd_share=0.85),
    Workload("inception3", "Inception v3 (ImageNet)", ("inception", "inceptionv3"),
             (299, 299, 3), "float32", IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 32, "momentum",
             23_800_000, 34e9, "conv", synthetic_input=True,
             activations=2.5e7, conv_share=0.99, conv_channels=121.1, winograd_share=0.35),
    Workload("resnet50", "ResNet-50 v1 (ImageNet)", ("resnet",), (224, 224, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 64, "momentum", 25_560_000, 23.1e9,
             "conv", synthetic_input=True, stages=(3, 4, 6, 3),
             activations=2.2e7, conv_share=0.99, conv_channels=185.7, winograd_share=0.45),
    Workload("resnet152", "ResNet-152 v1 (ImageNet)", (), (224, 224, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 90, 32, "momentum", 60_190_000, 67.7e9,
             "conv", synthetic_input=True, stages=(3, 8, 36, 3),
             activations=5.5e7, conv_share=0.99, conv_channels=237.7, winograd_share=0.51),
    Workload("vgg16", "VGG-16 (ImageNet)", ("vgg",), (224, 224, 3), "float32",
             IMAGENET_TRAIN, IMAGENET_VALIDATION, 74, 64, "momentum", 138_400_000, 92.8e9,
             "conv", synthetic_input=True,
             activations=1.5e7, conv_share=0.99, conv_channels=187.6, winograd_share=0.99),
)  # fmt: skip

TRANSFORMERS: tuple[Workload, ...] = (
    # BERT fine-tuning (Devlin et al. 2019, section 4; google-research/bert README): SQuAD v1.1
    # at 384 tokens, batch 32, 2 epochs, AdamW lr 3e-5; MNLI at 128 tokens, batch 32, 3 epochs.
    _transformer("bert_base", "BERT-base fine-tuning, SQuAD v1.1 (seq 384)",
                 ("bert", "bert-base-squad"), transformers.bert(12, 768, 12, 384, 2, False),
                 SQUAD_TRAIN_FEATURES, 0, 2, 32),
    _transformer("bert_large", "BERT-large fine-tuning, SQuAD v1.1 (seq 384)",
                 ("bert-large-squad",), transformers.bert(24, 1024, 16, 384, 2, False),
                 SQUAD_TRAIN_FEATURES, 0, 2, 32),
    _transformer("bert_base_mnli", "BERT-base fine-tuning, GLUE MNLI (seq 128)",
                 ("bert-mnli",), transformers.bert(12, 768, 12, 128, 3, True),
                 MNLI_TRAIN, MNLI_VALIDATION, 3, 32),
    # GPT-2 causal LM (Radford et al. 2019 sizes) on one pass over nanoGPT's OpenWebText
    # (~9.0B tokens), nanoGPT's micro-batch of 12 sequences of 1,024, AdamW lr 6e-4.
    _transformer("gpt2_small", "GPT-2 small (124M) causal LM, OpenWebText 1 epoch",
                 ("gpt2", "gpt2-124m"), transformers.gpt2(12, 768, 12),
                 OPENWEBTEXT_SEQUENCES, OPENWEBTEXT_VALIDATION, 1, 12),
    _transformer("gpt2_medium", "GPT-2 medium (355M) causal LM, OpenWebText 1 epoch",
                 ("gpt2-355m",), transformers.gpt2(24, 1024, 16),
                 OPENWEBTEXT_SEQUENCES, OPENWEBTEXT_VALIDATION, 1, 12),
    _transformer("gpt2_large", "GPT-2 large (774M) causal LM, OpenWebText 1 epoch",
                 ("gpt2-774m",), transformers.gpt2(36, 1280, 20),
                 OPENWEBTEXT_SEQUENCES, OPENWEBTEXT_VALIDATION, 1, 12),
    # ViT-B/16 on ImageNet-1k at 224 px, DeiT's recipe (Touvron et al. 2021, Table 9): 300
    # epochs, batch 1024, AdamW lr 1e-3 (5e-4 x 1024/512), weight decay 0.05.
    _transformer("vit_b16", "ViT-B/16 on ImageNet-1k (224 px, DeiT recipe)",
                 ("vit", "vit-b16", "deit-b"), transformers.vit(12, 768, 12, 224, 16, 1000),
                 IMAGENET_TRAIN, IMAGENET_VALIDATION, 300, 1024, synthetic_input=True),
)  # fmt: skip
WORKLOADS: tuple[Workload, ...] = (*CLASSIC, *TRANSFORMERS)

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
    hint = did_you_mean(name, names())
    raise UsageError(f"unknown model {display.quoted(name)}{hint} (see 'advisor models')")
