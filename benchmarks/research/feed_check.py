"""How much of a GPU training step is the GPU's: the same compiled step fed from device-resident
arrays and from NumPy, beside the host-to-device copy alone.

``benchmarks/gpu/accelerator_check.py`` times ``model.fit`` on NumPy arrays, as a Keras user runs it.
On an H200 (2026-11-26) its ImageNet convnets ran at 0.5-0.8 ms per megabyte of input per step
under JAX and PyTorch alike, so their real runs may time the feed more than the GPU. This check
splits the two, one workload after another until ``--seconds`` run out, one JSON line each:

    KERAS_BACKEND=jax python3 benchmarks/research/feed_check.py --out $OUT/feed.jsonl

``resident``: median seconds of ``train_on_batch`` on arrays already on the device (the compiled
step, what published synthetic-data rows such as tf_cnn_benchmarks' time); ``numpy``: the same
call on NumPy arrays (the step plus the feed); ``copy``: ``jax.device_put`` of the batch alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CASES = {"resnet50": 64, "vgg16": 64, "alexnet": 512, "inception3": 32, "resnet152": 32,
         "mnist_mlp": 128}  # fmt: skip
"""Workload and batch, the batches of ``accelerator_check.CASES``."""


def _timed(call: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        call()
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def measure(name: str, batch: int, repeats: int) -> dict[str, object]:
    import jax

    from advisor.workloads import zoo
    from probes import networks
    from probes.data import InputSpec, make

    workload = zoo.get(name)
    model = networks.build(workload)
    x = make(InputSpec(tuple(workload.input_shape), workload.input_dtype), batch)
    y = make(InputSpec((), "int32", high=networks.classes(workload)), batch, seed=1)
    if networks.classes(workload) == 1:
        y = y.astype("float32")
    begin = time.perf_counter()
    for _ in range(3):
        model.train_on_batch(x, y)
    warm = time.perf_counter() - begin
    on_device = (jax.device_put(x), jax.device_put(y))
    resident = _timed(lambda: model.train_on_batch(*on_device), repeats)
    fed = _timed(lambda: model.train_on_batch(x, y), repeats)
    copy = _timed(lambda: jax.device_put(x).block_until_ready(), repeats)
    resident_again = _timed(lambda: model.train_on_batch(*on_device), repeats)
    return {"workload": name, "batch": batch, "megabytes": x.nbytes / 1e6, "warm_s": warm,
            "resident": min(resident, resident_again), "resident_first": resident,
            "numpy": fed, "copy": copy,
            "samples_per_second_resident": batch / min(resident, resident_again),
            "samples_per_second_numpy": batch / fed,
            "device": str(jax.devices()[0]), "jax": jax.__version__}  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cases", default="resnet50,vgg16,alexnet,inception3,resnet152")
    parser.add_argument("--seconds", type=float, default=150)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    if args.repeats < 1 or not args.seconds > 0:  # NaN fails too
        parser.error("--repeats must be >= 1 and --seconds positive")
    deadline = time.monotonic() + args.seconds
    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"--cases: unknown {', '.join(unknown)} (known: {', '.join(CASES)})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as out:
        for name in names:
            if time.monotonic() > deadline:
                print(f"{name}: not reached (deadline)", flush=True)
                continue
            try:
                line = measure(name, CASES[name], args.repeats)
            except Exception as error:
                line = {"workload": name, "error": f"{type(error).__name__}: {error}"[:300]}
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
