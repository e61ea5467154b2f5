"""Probes side by side, each lane on whole cores of its own: a measuring session's CPU lanes.

A GPU machine's check (``benchmarks/gpu/accelerator_check.py``) runs its probes in lanes of 1, 2,
4, 8 and 16 threads beside the GPU's own lane; each lane gets whole cores (a core's hyperthreads
together, as a cloud VM's vCPUs come), and lanes that would share cores run one after another.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from probes.device import siblings_of


@dataclass
class Lane:
    """Workloads run one after another in one process per backend, on its own cores."""

    name: str
    """``cpu-2``, ``cpu-8`` or ``gpu``."""
    threads: int
    gpu: bool
    cpus: list[int] = field(default_factory=list)


def by_core(cpus: list[int], siblings: Callable[[int], str] = siblings_of) -> list[int]:
    """``cpus`` with each core's hyperthreads side by side. Linux numbers every core's first
    thread before any second one, so the first CPU numbers are whole cores; a lane of 2n CPUs
    taken from this order holds n cores' threads, as a cloud VM's vCPUs do."""

    def core(cpu: int) -> tuple[int, int]:
        first = re.match(r"\d+", siblings(cpu).strip())
        return (int(first.group()) if first else cpu, cpu)

    return sorted(cpus, key=core)


def lanes_for(threads: list[int], cpu_only: bool, cpus: list[int]) -> list[list[Lane]]:
    """The lanes, grouped into waves that run side by side: each wave's lanes get disjoint
    cores when the machine has enough, else the lanes run one wave each."""
    lanes = [Lane(f"cpu-{n}", n, gpu=False) for n in threads]
    accelerator = Lane("gpu" if not cpu_only else "cpu-as-gpu", len(cpus), gpu=True)
    lanes.append(accelerator)
    wanted = sum(lane.threads for lane in lanes[:-1])
    if wanted < len(cpus):  # every CPU lane its own cores, the accelerator's lane the rest
        start = 0
        for lane in lanes[:-1]:
            lane.cpus = cpus[start : start + lane.threads]
            start += lane.threads
        accelerator.cpus, accelerator.threads = cpus[start:], len(cpus) - start
        return [lanes]
    for lane in lanes:
        lane.cpus = cpus[: min(lane.threads, len(cpus))]
        lane.threads = len(lane.cpus)
    return [[lane] for lane in lanes]
