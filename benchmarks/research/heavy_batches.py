"""How a heavy workload's CPU step grows with the batch: real steps at the real batch.

    .venv/bin/python benchmarks/research/heavy_batches.py [--model resnet50] [--batches 2,4,8,16,32,64]
        [--rounds 2] [--steps 3] [--out benchmarks/results/heavy_batches.json]

A probe of an ImageNet CNN cannot step its real batch within its budget on a few cores; it steps
smaller batches and extrapolates (``probes.scaling``). This measures what the extrapolation must
hit: the steady step time at each batch, up to the real one, on this machine, with the fixed
reference kernel (``probes.reference``) timed beside each batch so the machine's drift is seen
apart from the batch's effect. Rounds go through the batches in alternating order (interleaved,
so a slow minute does not fall on one batch size only); each step time is the median of
``--steps`` steady steps after two warm-up steps. Writes the readings as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from advisor.workloads import zoo
from probes import quiet
from probes.reference import reference_seconds


def step_times(model: object, batch: int, steps: int, workload: zoo.Workload) -> list[float]:
    import numpy as np

    rng = np.random.default_rng(batch)
    x = rng.standard_normal((batch, *workload.input_shape), dtype=np.float32)
    y = rng.integers(0, 1000, size=(batch,))
    times = []
    for index in range(steps + 2):
        started = time.perf_counter()
        model.train_on_batch(x, y)  # type: ignore[attr-defined]
        if index >= 2:
            times.append(time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batches", default="2,4,8,16,32,64")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    quiet.prepare()
    from probes import networks

    workload = zoo.get(args.model)
    model = networks.build(workload)
    readings: list[dict[str, object]] = []
    for round_index in range(args.rounds):
        order = batches if round_index % 2 == 0 else batches[::-1]
        for batch in order:
            before = reference_seconds()
            times = step_times(model, batch, args.steps, workload)
            after = reference_seconds()
            step = statistics.median(times)
            reading = {
                "round": round_index,
                "batch": batch,
                "step_seconds": step,
                "samples_per_second": batch / step,
                "steps": times,
                "reference_seconds": [before, after],
            }
            readings.append(reading)
            print(
                f"round {round_index} batch {batch:4d}: {step:7.3f} s/step, "
                f"{batch / step:6.2f} samples/s, reference {before * 1e3:.2f}/{after * 1e3:.2f} ms",
                flush=True,
            )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"model": args.model, "readings": readings}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
