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
from functools import lru_cache

from advisor.estimate import catalog
from advisor.estimate.machine import Machine
from advisor.estimate.prediction import Target
from advisor.locations import shipped


@lru_cache(maxsize=1)
def measured() -> tuple[float, str]:
    """Seconds one image takes one CPU thread, and the family of the CPU that timed it
    (``data/input-pipeline.csv``, its source beside it)."""
    with shipped("input-pipeline.csv").open(newline="", encoding="utf-8") as handle:
        row = next(csv.DictReader(handle))
    return float(row["seconds_per_image"]), row["cpu_family"]


def input_seconds(target: Target, machine: Machine, per_device_batch: float) -> float:
    """Seconds a replica's loader needs for one step's images on ``target``'s host (0 where the
    host's vCPUs are not known, or on a CPU, whose step does the work itself)."""
    if machine.kind == "cpu" or not target.vcpus:
        return 0.0
    seconds, here = measured()
    per_image = seconds * catalog.clock_ratio(here, target.cpu_family)
    workers = target.vcpus / machine.per_node
    return per_device_batch * per_image / workers


def describe(seconds: float, target: Target, machine: Machine) -> str:
    """``input-bound: 12 vCPUs a GPU decode and augment its 64 images in 40 ms``."""
    share = (target.vcpus or 0) / machine.per_node
    unit = "chip" if machine.kind == "tpu" else "GPU"
    return (
        f"input-bound: {share:.3g} vCPUs a {unit} decode and augment its JPEGs in "
        f"{seconds * 1e3:.3g} ms a step (measured here: "
        f"{measured()[0] * 1e3:.3g} ms an image a CPU)"
    )
