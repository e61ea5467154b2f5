"""The input pipeline on the target's host: decoding and augmenting each training image.

A zoo ImageNet workload's JPEGs are decoded and augmented on the host's CPUs while the devices
compute, so a step takes the longer of the two. One image's measured cost to one CPU
(``data/input-pipeline.csv``), at the target family's clock, costs a replica a step

    per-device batch x seconds an image / (vCPUs of the node / replicas of the node)

and the step is input-bound where that exceeds the device's step. GPU decoding (NVIDIA DALI),
pre-decoded arrays and published runs of synthetic data pay none of it (docs/PREDICTION.md,
"Many devices: per-device batch, the target's host, several nodes")."""

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
    workers = target.vcpus / machine.topology.per_node
    return per_device_batch * per_image / workers


def describe(seconds: float, target: Target, machine: Machine) -> str:
    """``input-bound: 12 vCPUs a GPU decode and augment its 64 images in 40 ms``."""
    share = (target.vcpus or 0) / machine.topology.per_node
    unit = "chip" if machine.kind == "tpu" else "GPU"
    return (
        f"input-bound: {share:.3g} vCPUs a {unit} decode and augment its JPEGs in "
        f"{seconds * 1e3:.3g} ms a step (measured here: "
        f"{measured()[0] * 1e3:.3g} ms an image a CPU)"
    )
