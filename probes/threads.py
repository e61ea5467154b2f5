"""CPU thread scaling: the steady step time with fewer intra-op threads.

Every backend fixes its thread pools when it starts, so each thread count is measured in a fresh
Python process (the same backend: ``KERAS_BACKEND`` is inherited) (``python -m probes.threads``) that runs a short self-stopping fit and prints the
steady mean step time. This costs a framework start-up per thread count, so it is opt-in
(``probe(..., thread_counts=[1])``, ``advisor probe --thread-scaling``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from advisor.errors import AdvisorError
from probes import backend, quiet
from probes.result import WorkloadConfig

WORKER_BUDGET_SECONDS = 6.0


def measure(
    name_or_path: str, config: WorkloadConfig, threads: int, budget: float = WORKER_BUDGET_SECONDS
) -> float:
    """Steady step seconds of ``config`` with ``threads`` intra-op threads (fresh process)."""
    sizes = {"epochs": config.epochs, "batch_size": config.batch_size,
             "samples": config.samples, "validation_samples": config.validation_samples}  # fmt: skip
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    command = [sys.executable, "-m", "probes.threads", name_or_path, json.dumps(sizes),
               str(threads), str(budget)]  # fmt: skip
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise AdvisorError(f"thread-scaling run with {threads} thread(s) failed")
    return float(out.stdout.strip().splitlines()[-1])


def _worker(name_or_path: str, sizes: dict[str, int], threads: int, budget: float) -> float:
    quiet.prepare()
    backend.active().limit_threads(threads)
    from probes.fitting import arrays, fit, steady_of
    from probes.loading import prepare
    from probes.spec import spec_for

    spec = spec_for(name_or_path, **sizes)
    prepared = prepare(spec)
    started = time.perf_counter()
    x, y = arrays(prepared, spec.config.samples, spec.config.batch_size, seed=0)
    timer = fit(prepared.model, x, y, spec.config.batch_size, started, started + budget)
    return steady_of(timer)[0].mean


if __name__ == "__main__":
    name, raw_sizes, thread_count, seconds = sys.argv[1:5]
    print(_worker(name, json.loads(raw_sizes), int(thread_count), float(seconds)))
