"""The input pipeline on the target's host: decoding and augmenting each training image.

A zoo ImageNet workload trains on JPEGs: every sample is decoded, cropped, resized and flipped
on the host's CPUs while the accelerators compute (tf.data's and PyTorch's loaders prefetch, so
the two overlap and a step takes the longer). What one image costs one CPU was measured on the
development VM with TensorFlow's own kernels (``benchmarks/input_pipeline.py``,
``data/input-pipeline.csv``), and runs on the target's host at its family's all-core clock
against the measuring CPU's. Each data-parallel replica's loader has its share of the node's
vCPUs; a replica needs

    per-device batch x seconds an image / (vCPUs of the node / replicas of the node)

a step. Where that exceeds the device's step, the step is input-bound: a machine with too few
vCPUs for its GPUs. Pipelines that decode on the GPU (NVIDIA DALI) or read pre-decoded arrays
pay none of it, and a published run of synthetic data is predicted without it.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache

from advisor.estimate import catalog
from advisor.estimate.machine import Machine
from advisor.estimate.prediction import Target
from advisor.locations import shipped


@dataclass(frozen=True)
class Measured:
    """One image through the pipeline on one CPU thread, where it was timed."""

    seconds_per_image: float
    cpu_family: str
    source: str


@lru_cache(maxsize=1)
def measured() -> Measured:
    """The shipped measurement (``data/input-pipeline.csv``)."""
    with shipped("input-pipeline.csv").open(newline="", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    return Measured(float(row["seconds_per_image"]), row["cpu_family"], row["source"])


def input_seconds(target: Target, machine: Machine, per_device_batch: float) -> float:
    """Seconds a replica's loader needs for one step's images on ``target``'s host (0 where the
    host's vCPUs are not known, or on a CPU, whose step does the work itself)."""
    if machine.kind == "cpu" or not target.vcpus:
        return 0.0
    there, _ = catalog.cpu_family(target.cpu_family)
    here, _ = catalog.cpu_family(measured().cpu_family)
    per_image = measured().seconds_per_image * here.all_core_ghz / there.all_core_ghz
    workers = target.vcpus / machine.per_node
    return per_device_batch * per_image / workers


def describe(seconds: float, target: Target, machine: Machine) -> str:
    """``input-bound: 12 vCPUs a GPU decode and augment its 64 images in 40 ms``."""
    share = (target.vcpus or 0) / machine.per_node
    unit = "chip" if machine.kind == "tpu" else "GPU"
    return (
        f"input-bound: {share:.3g} vCPUs a {unit} decode and augment its JPEGs in "
        f"{seconds * 1e3:.3g} ms a step (measured here: "
        f"{measured().seconds_per_image * 1e3:.3g} ms an image a CPU)"
    )
