"""How is this machine doing right now: a short fixed reference kernel, and who else is busy.

A shared or throttled machine changes speed from minute to minute (identical training runs on a
2-vCPU cloud VM differ by 20-50%). A probe times this kernel when it starts, between its phases
and when it ends: if the machine's speed moved while the probe measured, the readings differ,
the probe says so (``ProbeResult.machine_drift``) and its prediction's interval widens by that
much. The kernel is the same on every machine and every run (a float32 matrix product of fixed
size on NumPy's BLAS, the median of several repetitions), so its time is comparable across
probes too, and its FLOP rate is a floor under this CPU's peak.

A machine that stays busy the whole probe moves no reading, so the probe also counts the CPU
time other processes took while it ran (``CpuClock``: the kernel's busy time from /proc/stat
less the probe's own), as a share of the machine (``ProbeResult.contention``).
"""

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
