"""Which data-parallel training across processes Keras 3 runs here: the ground a probe over
several nodes (issue "Scale out": ``advisor bench`` on N nodes) would stand on.

Two worker processes on 127.0.0.1 train one MLP with ``model.fit`` on NumPy arrays, each its own:

- ``jax``: Keras's distribution API on JAX (``keras.distribution.initialize`` with a coordinator
  address, a process count and an id, as SkyPilot's head IP, ``SKYPILOT_NUM_NODES`` and
  ``SKYPILOT_NODE_RANK`` would give them; ``DataParallel`` over every process's devices, each
  worker's arrays its own shard), CPU collectives through gloo;
- ``tensorflow``: ``tf.distribute.MultiWorkerMirroredStrategy`` from ``TF_CONFIG``.

2026-11-29, the 2-vCPU development VM, Keras 3.15, JAX 0.10, TensorFlow 2.21: ``jax`` trains
(both workers see two global devices, one local each; 2 epochs of 6,400 samples in 1.3 s);
``tensorflow`` fails inside ``fit`` ("Attempt to convert a value (PerReplica...) to a Tensor"):
Keras 3's ``fit`` does not take that strategy's per-replica values. In one process,
``tf.distribute.MirroredStrategy`` over two logical CPU devices and Keras's ``DataParallel`` over
two forced host devices both train.

    .venv/bin/python benchmarks/research/multiworker_keras.py [--backend jax|tensorflow]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PORT = 23_999


def worker(backend: str, index: int) -> None:
    """One worker: join the other, train, say how long ``fit`` took."""
    os.environ["KERAS_BACKEND"] = backend
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np

    if backend == "jax":
        import jax

        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        import keras

        keras.distribution.initialize(f"127.0.0.1:{PORT}", num_processes=2, process_id=index)
        distribution = keras.distribution.DataParallel(devices=jax.devices())
        distribution.auto_shard_dataset = False  # each worker's arrays are its own shard
        keras.distribution.set_distribution(distribution)
        scope = None
    else:
        cluster = {"worker": [f"127.0.0.1:{PORT}", f"127.0.0.1:{PORT + 1}"]}
        os.environ["TF_CONFIG"] = json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": index}}
        )
        import tensorflow as tf

        scope = tf.distribute.MultiWorkerMirroredStrategy().scope()
        import keras
    if scope is not None:
        scope.__enter__()
    model = keras.Sequential(
        [keras.Input((784,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(10)]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.rand(6400, 784).astype("float32")
    y = np.random.randint(0, 10, 6400)
    started = time.perf_counter()
    model.fit(x, y, batch_size=256, epochs=2, verbose=0)
    print(f"worker {index}: fit of 2 epochs in {time.perf_counter() - started:.1f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("jax", "tensorflow"), default="jax")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.backend, args.worker)
        return 0
    command = [sys.executable, __file__, "--backend", args.backend, "--worker"]
    workers = [
        subprocess.Popen(
            [*command, str(i)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for i in (0, 1)
    ]
    failed = 0
    for process in workers:
        out, err = process.communicate(timeout=300)
        said = out.strip() or (err.strip().splitlines() or ["(nothing)"])[-1]
        print(f"{args.backend}: {said}")
        failed += process.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
