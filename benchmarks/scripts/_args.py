"""The sizes every benchmark script takes, so that a real run stays within a benchmark's time."""

import argparse


def sizes(epochs: int, samples: int) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--samples", type=int, default=samples)
    return parser.parse_args()
