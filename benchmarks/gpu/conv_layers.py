"""Every convolution of the zoo's convnets timed alone on a device: the share of its peak each
layer shape reaches, training (forward, and the backward passes to the input and to the filter).

    .venv/bin/python benchmarks/gpu/conv_layers.py shapes > benchmarks/gpu/conv_layers_zoo.json
    python benchmarks/gpu/conv_layers.py time --batch 64 --dtype bfloat16 --out conv-layers.jsonl
    python benchmarks/gpu/conv_layers.py report conv-layers.jsonl --peak-tflops 989

Why: VGG-16 is predicted 1.35x too slow on every GPU while ResNet-50 comes out right, one
convolution efficiency a generation holding both (docs/BENCHMARKS.md, "Convolutions by GPU
generation", what remains). DeepBench's V100 fp16 layers put VGG's at 0.35 of the peak and
ResNet's at 0.24; these are the zoo's own layers, to time on today's GPUs under JAX (XLA hands
each convolution to cuDNN) whenever the device tool lends one.

``shapes`` walks the zoo's Keras models (any backend) and writes each convolution: its
workload, input height and width, channels in and out, filter, stride, padding and forward
FLOPs per sample. ``time`` runs each distinct shape at ``--batch`` under JAX on its default
device: a jitted gradient of the output's sum with respect to the input and the filter, the
three convolutions of a training step, timed as the median of ``--reps`` calls after a warm-up.
``report`` weighs each workload's layers by their FLOPs: the rate its convolutions reach
together, and that rate's share of ``--peak-tflops``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SHAPES = ROOT / "benchmarks" / "gpu" / "conv_layers_zoo.json"
CONVNETS = (
    "mnist_cnn", "cifar10_cnn", "resnet32_cifar10", "alexnet", "inception3", "resnet50",
    "resnet152", "vgg16",
)  # fmt: skip
TRAINING_CONVOLUTIONS = 3
"""A training step's convolutions of a layer: forward, backward to the input, to the filter."""
_KEY = ("h", "w", "c", "k", "r", "s", "stride", "padding")
_LARGEST = 65_536
"""The largest size a shapes file may give (height, width, channels, filter, stride)."""


def shapes(workloads: Sequence[str] = CONVNETS) -> list[dict[str, Any]]:
    """Each 2D convolution of the zoo's ``workloads``, channels last."""
    from advisor.workloads import zoo
    from probes import networks
    from probes.profile import leaf_layers

    found = []
    for workload in workloads:
        model = networks.build(zoo.get(workload))
        for index, layer in enumerate(leaf_layers(model)):
            if type(layer).__name__ != "Conv2D":
                continue
            r, s, c, k = (int(d) for d in layer.kernel.shape)
            _, h, w, _ = layer.input.shape
            _, p, q, _ = layer.output.shape
            found.append(
                {
                    "workload": workload, "layer": index, "h": int(h), "w": int(w), "c": c,
                    "k": k, "r": r, "s": s, "stride": int(layer.strides[0]),
                    "padding": layer.padding.upper(),
                    "forward_flops": 2.0 * int(p) * int(q) * k * c * r * s,
                }
            )  # fmt: skip
    return found


def distinct(layers: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One of each shape, in the order first met."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for layer in layers:
        seen.setdefault(tuple(layer[name] for name in _KEY), layer)
    return list(seen.values())


def time_shape(layer: dict[str, Any], batch: int, dtype: str, reps: int) -> float:
    """Median seconds of one training step's three convolutions of ``layer`` at ``batch``."""
    import jax
    import jax.numpy as jnp

    x = jnp.ones((batch, layer["h"], layer["w"], layer["c"]), dtype)
    w = jnp.ones((layer["r"], layer["s"], layer["c"], layer["k"]), dtype)
    stride = (layer["stride"], layer["stride"])

    def loss(x: Any, w: Any) -> Any:
        out = jax.lax.conv_general_dilated(
            x, w, stride, layer["padding"], dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        return jnp.sum(out.astype(jnp.float32))

    step = jax.jit(jax.grad(loss, argnums=(0, 1)))
    jax.block_until_ready(step(x, w))  # compiles, and lets cuDNN pick its algorithm
    times = []
    for _ in range(reps):
        started = time.perf_counter()
        jax.block_until_ready(step(x, w))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def time_all(
    layers: Sequence[dict[str, Any]], batch: int, dtype: str, reps: int, limit: int = 0
) -> list[dict[str, Any]]:
    """Each distinct shape of ``layers`` timed (the first ``limit`` only, when given)."""
    import jax

    device = jax.devices()[0]
    rows = []
    for layer in distinct(layers)[: limit or None]:
        seconds = time_shape(layer, batch, dtype, reps)
        flops = TRAINING_CONVOLUTIONS * layer["forward_flops"] * batch
        rows.append(
            {
                **{name: layer[name] for name in _KEY},
                "batch": batch,
                "dtype": dtype,
                "device": device.device_kind,
                "seconds": seconds,
                "tflops": flops / seconds / 1e12,
            }
        )
    return rows


def report(
    layers: Sequence[dict[str, Any]], timed: Sequence[dict[str, Any]], peak_tflops: float
) -> dict[str, dict[str, float]]:
    """Per workload whose every convolution was timed: the rate its convolutions reach together
    (their FLOPs over their summed times) and its share of the peak."""
    seconds = {tuple(row[name] for name in _KEY): row for row in timed}
    out = {}
    for workload in dict.fromkeys(layer["workload"] for layer in layers):
        mine = [layer for layer in layers if layer["workload"] == workload]
        rows = [seconds.get(tuple(layer[name] for name in _KEY)) for layer in mine]
        if not all(rows):
            continue
        flops = sum(TRAINING_CONVOLUTIONS * layer["forward_flops"] for layer in mine)
        spent = sum(row["seconds"] / row["batch"] for row in rows)
        rate = flops / spent / 1e12
        out[workload] = {
            "layers": len(mine),
            "tflops": rate,
            "peak_share": rate / peak_tflops if peak_tflops > 0 else math.nan,
        }
    return out


def read_shapes(path: Path) -> list[dict[str, Any]]:
    """The layers of a shapes file; a layer whose sizes are not positive whole numbers (up to
    ``_LARGEST``), whose padding is not SAME or VALID or whose FLOPs are not a positive finite
    number is refused, naming its place."""
    layers = json.loads(path.read_text())
    if not isinstance(layers, list):
        raise ValueError(f"{path}: not a list of convolutions")
    for number, layer in enumerate(layers, 1):
        sizes = [layer.get(name) for name in _KEY[:-1]] if isinstance(layer, dict) else [None]
        flops = layer.get("forward_flops") if isinstance(layer, dict) else None
        if not (
            all(type(size) is int and 0 < size <= _LARGEST for size in sizes)
            and layer.get("padding") in ("SAME", "VALID")
            and isinstance(layer.get("workload"), str)
            and isinstance(flops, (int, float)) and math.isfinite(flops) and flops > 0
        ):  # fmt: skip
            raise ValueError(f"{path}: convolution {number} is not a valid layer")
    return layers


def read_timed(path: Path) -> list[dict[str, Any]]:
    """The rows of a timing file; a row without a positive time or batch is refused, naming its
    line."""
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: not a timing row")
        seconds, batch = row.get("seconds"), row.get("batch")
        if not (
            isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0
            and isinstance(batch, int) and batch > 0
        ):  # fmt: skip
            raise ValueError(f"{path}:{number}: a timing row needs a positive time and batch")
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("shapes", help="the zoo's convolutions, as JSON on stdout")
    timing = commands.add_parser("time", help="time each distinct shape under JAX")
    timing.add_argument("--shapes", type=Path, default=SHAPES)
    timing.add_argument("--batch", type=int, default=64)
    timing.add_argument("--dtype", choices=("bfloat16", "float16", "float32"), default="bfloat16")
    timing.add_argument("--reps", type=int, default=5)
    timing.add_argument("--limit", type=int, default=0, help="only the first N shapes")
    timing.add_argument("--out", type=Path, required=True)
    summary = commands.add_parser("report", help="per workload, from a timing file")
    summary.add_argument("timed", type=Path)
    summary.add_argument("--shapes", type=Path, default=SHAPES)
    summary.add_argument("--peak-tflops", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.command == "shapes":
        print("[\n" + ",\n".join(json.dumps(layer) for layer in shapes()) + "\n]")
        return 0
    if args.command == "report" and not (math.isfinite(args.peak_tflops) and args.peak_tflops >= 0):
        parser.error("--peak-tflops must be a finite number, 0 or more (0: no share)")
    try:
        layers = read_shapes(args.shapes)
        if args.command == "time":
            if not (0 < args.batch <= _LARGEST and 0 < args.reps <= 1000 and args.limit >= 0):
                parser.error("--batch (up to 65536) and --reps (up to 1000) must be positive")
            rows = time_all(layers, args.batch, args.dtype, args.reps, args.limit)
            args.out.write_text("".join(json.dumps(row) + "\n" for row in rows))
            print(f"{len(rows)} shapes timed on {rows[0]['device'] if rows else '-'}: {args.out}")
            return 0
        timed = read_timed(args.timed)
        found = report(layers, timed, args.peak_tflops)
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"conv_layers: {error}", file=sys.stderr)
        return 1
    for workload, figures in found.items():
        print(
            f"{workload:18s} {figures['layers']:4d} convolutions  {figures['tflops']:8.2f} "
            f"TFLOP/s  {figures['peak_share']:.3f} of the peak"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
