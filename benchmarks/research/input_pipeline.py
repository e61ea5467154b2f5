"""What an ImageNet training's input pipeline costs a host CPU, an image at a time.

    .venv/bin/python benchmarks/research/input_pipeline.py [--images 200] [--rounds 5] [--write]

The zoo's ImageNet workloads are probed on arrays; the real job decodes each JPEG, crops it at a
random scale and aspect ratio (8-100% of the area, 3/4-4/3: the "Inception" crop ResNet-50's
recipes train with), resizes the crop to the network's input and flips it at random, on the
host's CPUs. This times that pipeline with TensorFlow's own kernels (``decode_and_crop_jpeg``,
libjpeg-turbo) on one image at a time, a compiled function per image, on a 500x375 JPEG of a
synthetic photograph (smooth shading and sensor noise, quality 90), and reports the median
seconds an image over ``--rounds`` rounds of ``--images`` images. ``--write`` stores the figure
with this CPU in ``data/input-pipeline.csv``, which the device model scales to a target host's
clock (``advisor.estimate.feed``).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from advisor.estimate import catalog  # noqa: E402
from probes import quiet  # noqa: E402
from probes.device import fingerprint  # noqa: E402

HEIGHT, WIDTH, SIDE = 375, 500, 224
FIELDS = ("pipeline", "framework", "cpu_family", "cpu_model", "seconds_per_image",
          "image_bytes", "image_size", "output_size", "source")  # fmt: skip


def synthetic_jpeg() -> bytes:
    """A photograph-like 500x375 JPEG: shading that varies across the frame, plus noise."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    channels = [128 + 100 * np.sin(x / 37.0 + c) * np.cos(y / 23.0 - c) for c in range(3)]
    noisy = np.stack(channels, -1) + rng.normal(0, 12, (HEIGHT, WIDTH, 3))
    image = np.clip(noisy, 0, 255).astype(np.uint8)
    return bytes(tf.io.encode_jpeg(image, quality=90).numpy())


def seconds_per_image(data: bytes, images: int) -> float:
    """The median seconds of the pipeline on one image, over ``images`` images."""
    import tensorflow as tf

    @tf.function
    def pipeline(jpeg: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        shape = tf.io.extract_jpeg_shape(jpeg)
        begin, size, _ = tf.image.stateless_sample_distorted_bounding_box(
            shape,
            tf.zeros([1, 0, 4]),
            seed=seed,
            min_object_covered=0.1,
            aspect_ratio_range=(3 / 4, 4 / 3),
            area_range=(0.08, 1.0),
            use_image_if_no_bounding_boxes=True,
        )
        top, left, _ = tf.unstack(begin)
        height, width, _ = tf.unstack(size)
        window = tf.stack([top, left, height, width])
        image = tf.image.decode_and_crop_jpeg(jpeg, window, channels=3)
        image = tf.image.resize(image, (SIDE, SIDE))
        image = tf.image.stateless_random_flip_left_right(image, seed)
        return (image - 127.5) / 127.5

    jpeg = tf.constant(data)
    for i in range(5):  # trace and warm up
        pipeline(jpeg, tf.constant([i, 0])).numpy()
    times = []
    for i in range(images):
        start = time.perf_counter()
        pipeline(jpeg, tf.constant([i, 1])).numpy()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="store it in data/input-pipeline.csv")
    args = parser.parse_args(argv)
    if not (1 <= args.images <= 100_000 and 1 <= args.rounds <= 100):
        parser.error("--images must be 1 to 100,000 and --rounds 1 to 100")
    quiet.prepare_tensorflow()
    import tensorflow as tf

    data = synthetic_jpeg()
    rounds = [seconds_per_image(data, args.images) for _ in range(args.rounds)]
    median = statistics.median(rounds)
    device = fingerprint()
    family, _ = catalog.family_of_cpu_model(device.cpu_model)
    print(f"JPEG of {len(data):,} bytes ({WIDTH}x{HEIGHT}) -> {SIDE}x{SIDE}, {device.cpu_model}")
    print(
        f"per image: median {median * 1e3:.3f} ms over {args.rounds} rounds of {args.images} "
        f"(rounds {min(rounds) * 1e3:.3f}-{max(rounds) * 1e3:.3f} ms)"
    )
    if args.write:
        row = {
            "pipeline": "imagenet-inception-crop",
            "framework": f"tensorflow-{tf.__version__}",
            "cpu_family": family,
            "cpu_model": device.cpu_model,
            "seconds_per_image": f"{median:.6f}",
            "image_bytes": len(data),
            "image_size": f"{WIDTH}x{HEIGHT}",
            "output_size": f"{SIDE}x{SIDE}",
            "source": (
                "our own run: benchmarks/research/input_pipeline.py --images "
                f"{args.images} --rounds {args.rounds}, "
                f"{datetime.now(UTC).date().isoformat()}"
            ),
        }
        path = ROOT / "data" / "input-pipeline.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerow(row)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
