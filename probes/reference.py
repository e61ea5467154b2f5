"""How is this machine doing right now: a short fixed reference kernel, and who else is busy.

A probe times this kernel (a fixed float32 matrix product on NumPy's BLAS, the median of several
repetitions) at its start, between its phases and at its end: readings that differ mean the
machine's speed moved while it measured (``ProbeResult.machine_drift``), and the interval widens
by that much. The kernel is the same everywhere, so its time compares across probes and its FLOP
rate floors this CPU's peak. ``CpuClock`` counts the CPU time other processes took meanwhile, as
a share of the machine (``ProbeResult.contention``; docs/PREDICTION.md, "Uncertainty")."""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass

SIZE = 512
"""Matrix side: about 0.27 GFLOP a product, 1.1-1.5 ms on the 2-vCPU VM."""
FLOPS = 2.0 * SIZE**3
"""Floating-point operations of one product."""
REPEATS = 21
NOISE = 0.05
"""Change between two readings that the kernel's own noise explains: 20 readings back to back on
the idle 2-vCPU VM stayed within 2% of each other; 5% leaves a margin."""


def reference_seconds() -> float:
    """Median seconds of one fixed matrix product on this machine now (about 0.05 s in all)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((SIZE, SIZE), dtype=np.float32)
    b = rng.standard_normal((SIZE, SIZE), dtype=np.float32)
    a @ b  # the first product pays BLAS's thread start-up
    times = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def flops_per_second(seconds: float) -> float:
    """The reference kernel's FLOP rate for one reading (0 for no reading)."""
    return FLOPS / seconds if seconds > 0 else 0.0


_STAT = "/proc/stat"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class CpuClock:
    """A reading of the machine's and this process's CPU time (Linux; ``busy`` is None
    elsewhere)."""

    wall: float
    busy: float | None
    """Seconds the machine's CPUs spent busy since boot (user, nice, system, irq, softirq,
    steal), summed over CPUs."""
    own: float
    """CPU seconds this process and its finished children used."""


def cpu_clock() -> CpuClock:
    times = os.times()
    own = times.user + times.system + times.children_user + times.children_system
    return CpuClock(time.perf_counter(), _busy_seconds(), own)


def contention(start: CpuClock, end: CpuClock, cpus: int) -> float:
    """Share of the machine's CPU time that other processes used between two readings, 0..1
    (0 where the machine does not say: no /proc/stat)."""
    wall = end.wall - start.wall
    if start.busy is None or end.busy is None or wall <= 0 or cpus <= 0:
        return 0.0
    others = (end.busy - start.busy) - (end.own - start.own)
    return min(1.0, max(0.0, others / (wall * cpus)))


def _busy_seconds() -> float | None:
    try:
        with open(_STAT) as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 8 or fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq, *rest = (int(f) for f in fields[1:])
    steal = rest[0] if rest else 0
    return (user + nice + system + irq + softirq + steal) / _TICKS


BUSY_CONTENTION = 0.2
"""Share of the machine's CPU time taken by other processes from which a probe calls the
machine busy: its measured times are then slow by up to 1 / (1 - share)."""


def busy_note(contention: float, drift: float) -> str | None:
    """One line saying a probe ran on a busy or changing machine, or None when it did not."""
    if contention >= BUSY_CONTENTION:
        slow = 1 / max(1 - contention, 0.05)
        return (
            f"the machine was busy while it probed: other processes took {contention:.0%} of its "
            f"CPU time, so its measured times may be up to {slow:.2g}x slow; probe again when "
            "it is quiet (--fresh)"
        )
    if drift > 0.5:
        return (
            f"the machine's speed changed by {drift:.0%} while it probed (the reference kernel); "
            "probe again when it is quiet (--fresh)"
        )
    return None
