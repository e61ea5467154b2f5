"""A short fixed reference kernel: how fast is this machine right now?

A shared or throttled machine changes speed from minute to minute (identical training runs on a
2-vCPU cloud VM differ by 20-50%). A probe times this kernel when it starts and when it ends:
if the machine's speed moved while the probe measured, the two readings differ, the probe says
so (``ProbeResult.machine_drift``) and its prediction's interval widens by that much. The kernel
is the same on every machine and every run (a float32 matrix product of fixed size on NumPy's
BLAS, the median of several repetitions), so its time is comparable across probes too.
"""

from __future__ import annotations

import statistics
import time

SIZE = 512
"""Matrix side: about 0.27 GFLOP a product, 1.5 ms on the 2-vCPU VM."""
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
