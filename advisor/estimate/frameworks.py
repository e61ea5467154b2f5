"""What a framework runs when a model asks for float32: TF32 tensor cores or strict FP32.

On Ampere and later GPUs the two differ by up to 8x in step time, and which one a user gets
depends on the framework, its version and its container. So ``--precision fp32`` means the
user's framework default and ``fp32-strict`` asks for strict FP32 everywhere. By default TF32
runs TensorFlow >= 2.4, JAX, PyTorch 1.7-1.11, PyTorch's convolutions from 1.12 and every
framework in NVIDIA's containers; the rest is strict FP32 (``Framework.tf32``; the table and its
citations: docs/SOURCES.md, "Framework defaults"; the model: docs/PREDICTION.md, "Kernel paths")."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

KERNELS = ("matmul", "conv")
"""The kernel classes whose float32 path a framework chooses."""
FRAMEWORKS = ("tensorflow", "torch", "jax", "mxnet", "paddle")


@dataclass(frozen=True)
class Framework:
    """A framework at a version, maybe inside NVIDIA's container."""

    name: str = "tensorflow"
    """One of ``FRAMEWORKS``."""
    version: tuple[int, int] = (2, 16)
    container: bool = False
    """Run inside NVIDIA's NGC container, whose environment turns TF32 on."""
    keras: bool = False
    """A Keras 3 model on this framework as its backend (every probe; a published row whose
    software names Keras), whose host work per step is Keras' (``advisor.estimate.floor``);
    False: the framework's own API."""

    def tf32(self, kernel: str) -> bool:
        """True when a float32 ``kernel`` (``matmul`` or ``conv``) runs as TF32 by default on
        a GPU that has TF32 tensor cores."""
        if kernel not in KERNELS:
            raise ValueError(f"unknown kernel class {kernel!r}")
        if self.container:
            return True
        if self.name == "tensorflow":
            return self.version >= (2, 4)
        if self.name == "torch":
            return kernel == "conv" or self.version < (1, 12)
        return True  # JAX; MXNet and PaddlePaddle are published from NVIDIA's containers

    def describe(self, kernel: str) -> str:
        """``TF32`` or ``strict FP32``: what a float32 ``kernel`` runs as by default."""
        return "TF32" if self.tf32(kernel) else "strict FP32"

    def same_generation(self, other: Framework) -> bool:
        """The same framework at the same major version: the same data path and runtime."""
        return (self.name, self.version[0]) == (other.name, other.version[0])

    @property
    def tensorflow_1(self) -> bool:
        """TensorFlow 1.x: graphs run synchronously from Python, no cuDNN recurrent default,
        generic pip wheels, Keras optimizers of one op per expression."""
        return self.name == "tensorflow" and self.version < (2, 0)

    @property
    def half_runs_nhwc(self) -> bool:
        """The graph of a 16-bit convnet runs channels-last on a Volta or later GPU whatever
        layout the script wrote: TensorFlow's grappler, from 1.15 (its GenericLayoutOptimizer),
        swaps the layout to NHWC when at least half of the GPU's convolutions are fp16
        (``GetSrcAndDstDataFormats``); before, it turned every GPU graph to NCHW."""
        return self.name == "tensorflow" and self.version >= (1, 15)

    @property
    def cpu_kernels(self) -> str:
        """The library behind a CPU's convolutions and matrix products: ``onednn`` for
        TensorFlow 2.9 and later (``TF_ENABLE_ONEDNN_OPTS`` on by default on x86), PyTorch and
        JAX-era builds; ``eigen`` for older TensorFlow, whose kernels were Eigen's."""
        if self.name == "tensorflow" and self.version < (2, 9):
            return "eigen"
        return "onednn"

    @property
    def scales_like_onednn(self) -> bool:
        """Its CPU threads scale as today's oneDNN builds do (TensorFlow 2.9 and later, PyTorch,
        JAX), which keep training faster to 192 cores (``advisor.fitting.cpu_law``). TensorFlow
        1 and Eigen's 2.x, and the MXNet and PaddlePaddle builds of 2017-2018, keep the law
        fitted on TensorFlow 1.2's runs."""
        return self.cpu_kernels == "onednn" and self.name in ("tensorflow", "torch", "jax")

    @property
    def label(self) -> str:
        container = " (NVIDIA container)" if self.container else ""
        return f"{self.name} {self.version[0]}.{self.version[1]}{container}"


TENSORFLOW_2 = Framework()
"""What a probe runs today unless told otherwise."""


def from_software(software: str) -> Framework:
    """The framework a published row's ``software`` string names (``tensorflow-1.15-ngc-20.06``,
    ``pytorch-ngc-21.11``, ``pytorch-2.1-pip``, ``jax-0.4``); TensorFlow 2 when it names none."""
    text = software.lower()
    container = "ngc" in text
    keras = "keras" in text
    patterns = (
        ("torch", r"(?:py)?torch"),
        ("jax", r"jax"),
        ("mxnet", r"mxnet"),
        ("paddle", r"paddle(?:paddle)?"),
        ("tensorflow", r"tensorflow"),
    )
    for name, pattern in patterns:
        match = re.search(pattern + r"-?(\d+)?(?:\.(\d+))?", text)
        if match:
            major = int(match.group(1)) if match.group(1) else None
            minor = int(match.group(2) or 0)
            return Framework(name, _version(name, major, minor, container), container, keras)
    return replace(TENSORFLOW_2, keras=keras)


def from_backend(backend: str, version: str, keras: bool = True) -> Framework:
    """The framework a probe ran under (``probes.backend`` name and its version string), driven
    by Keras or (``keras`` False) by a script's own loop."""
    name = "torch" if backend == "torch" else backend
    if name not in FRAMEWORKS:
        return replace(TENSORFLOW_2, keras=True)
    numbers = re.findall(r"\d+", version)
    if len(numbers) < 2:
        return Framework(name, _version(name, None, 0, False), keras=keras)
    return Framework(name, (int(numbers[0]), int(numbers[1])), keras=keras)


def _version(name: str, major: int | None, minor: int, container: bool) -> tuple[int, int]:
    """A version when the string gives one; else the current one of that framework (a
    container of PyTorch without a version is a recent PyTorch)."""
    if major is not None:
        return (major, minor)
    return {"tensorflow": (2, 16), "torch": (2, 4), "jax": (0, 4)}.get(name, (1, 0))
