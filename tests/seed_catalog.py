"""Real seed prices as ``Rentable`` tuples, for the recommender's tests and speed benchmark.

Reads ``data/prices-reference.csv`` (public list prices, skypilot-catalog v7) and composes each
GCP attachable accelerator with a host VM the way GCP sells it, summing the two prices. The
recommender's unit tests and speed benchmark use these without a price database (the database's
own composition is ``pricing.materialise``); the interruption rates are stated assumptions.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path

from advisor.estimate.prediction import Prediction, Target
from pricing.offers import Rentable

SEED = Path(__file__).resolve().parents[1] / "data" / "prices-reference.csv"

# GCP host VM families for attachable GPUs: (seed host row, its GPUs, name for n GPUs). The host
# price for n GPUs is the seed host's price scaled by n / its GPUs (an approximation: the seed
# holds one size per family); the older GPUs attach to one n1-standard-8 whatever their count.
GCP_HOSTS = {
    "A100": ("a2-highgpu-1g", 1, "a2-highgpu-{n}g"),
    "A100-80GB": ("a2-ultragpu-1g", 1, "a2-ultragpu-{n}g"),
    "H100": ("a3-highgpu-8g", 8, "a3-highgpu-{n}g"),
    "L4": ("g2-standard-4", 1, "g2-standard-{vcpus}"),
    "T4": ("n1-standard-8", 0, "n1-standard-8"),
    "V100": ("n1-standard-8", 0, "n1-standard-8"),
    "P100": ("n1-standard-8", 0, "n1-standard-8"),
    "P4": ("n1-standard-8", 0, "n1-standard-8"),
}
SPOT_RATES = (0.02, 0.05, 0.1)
"""Assumed preemptions per hour, cycled over instance types (the price library supplies real
rates from AWS Spot Advisor and the providers' defaults)."""


def _rate(name: str, pricing: str) -> float:
    if pricing != "spot":
        return 0.0
    return SPOT_RATES[sum(map(ord, name)) % len(SPOT_RATES)]


def _number(text: str) -> float | None:
    return float(text) if text else None


def seed_rentables(path: Path = SEED) -> list[Rentable]:
    """Every priced machine in the seed, GCP accelerators composed with their host."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    hosts = {
        (r["region"], r["instance_type"], r["pricing"]): r
        for r in rows
        if r["provider"] == "gcp" and r["instance_type"]
    }
    rentables = []
    for r in rows:
        if r["provider"] == "gcp" and r["instance_type"].startswith(("a2-", "a3-", "g2-")):
            continue  # GPU-bundled hosts: rented only with their accelerators (composed below)
        accelerator = r["accelerator"] or None
        count = int(r["accelerator_count"] or 0)
        price = float(r["usd_per_hour"])
        host_price, instance, vcpus, memory = price, r["instance_type"], r["vcpus"], r["memory_gib"]
        accelerator_price = 0.0
        if r["attachable"] == "1" and accelerator:
            accelerator_price, host_price = price, 0.0
            if accelerator in GCP_HOSTS:
                seed_host, gpus, pattern = GCP_HOSTS[accelerator]
                host = hosts.get((r["region"], seed_host, r["pricing"]))
                if host is None:
                    continue
                scale = count / gpus if gpus else 1.0
                host_price = float(host["usd_per_hour"]) * scale
                host_vcpus = float(host["vcpus"]) * scale
                instance = pattern.format(n=count, vcpus=int(host_vcpus))
                vcpus, memory = str(host_vcpus), str(float(host["memory_gib"]) * scale)
            elif accelerator.startswith("tpu-"):
                instance = accelerator  # a TPU VM: the price includes its host
            else:
                continue  # a GPU whose host family is not in the seed (H200, B200, ...)
        rentables.append(
            Rentable(
                provider=r["provider"],
                region=r["region"],
                zone=None,
                instance_type=instance,
                vcpus=_number(vcpus),
                memory_gib=_number(memory),
                cpu_family=None,
                accelerator=accelerator,
                accelerator_count=count,
                accelerator_memory_gib=_number(r["accelerator_memory_gib"]),
                pricing=r["pricing"],
                usd_per_hour=host_price + accelerator_price,
                host_usd_per_hour=host_price,
                accelerator_usd_per_hour=accelerator_price,
                interruptions_per_hour=_rate(instance, r["pricing"]),
                fetched_at="2025-01-01T00:00:00Z",
                source=f"{r['source_path']}@{r['source_commit'][:8]}",
            )
        )
    return rentables


def many_rentables(count: int, path: Path = SEED) -> list[Rentable]:
    """``count`` offerings: the seed cycled over as many made-up regions as needed."""
    seed = seed_rentables(path)
    out: list[Rentable] = []
    for copy in _copies():
        out.extend(r._replace(region=f"{r.region}-{copy}") for r in seed)
        if len(out) >= count:
            return out[:count]
    return out


def _copies() -> Iterator[int]:
    n = 0
    while True:
        yield n
        n += 1


# Relative training speed per accelerator (1 = one CPU core); a hand-built predictor for tests and
# the benchmark, standing in for ``advisor.estimate.predict``.
SPEED = {"T4": 40.0, "P4": 20.0, "P100": 45.0, "V100": 80.0, "L4": 55.0, "A10G": 60.0}
SPEED |= {"A100": 140.0, "A100-80GB": 150.0, "H100": 250.0, "H200": 280.0}


def speed_predictor(
    one_core_seconds: float, *, log_sigma: float = 0.15
) -> tuple[dict[Target, int], Callable[[Target], Prediction]]:
    """A predictor ``Target -> Prediction`` and the dict counting its calls per target."""
    calls: dict[Target, int] = {}

    def predict(target: Target) -> Prediction:
        calls[target] = calls.get(target, 0) + 1
        if target.accelerator is None:
            cores = target.vcpus or 1
            speed = cores / (1 + 0.03 * (cores - 1))  # Amdahl-like saturation
        elif target.accelerator in SPEED:
            speed = SPEED[target.accelerator] * target.accelerator_count**0.8
        else:
            return Prediction(0.0, 0.0, reason=f"no speed for {target.accelerator}")
        return Prediction(one_core_seconds / speed, log_sigma, kernel_path="test table")

    return calls, predict
