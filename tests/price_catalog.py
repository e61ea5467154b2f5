"""A synthetic 100,000-row SkyPilot-format AWS catalog for the price benchmarks.

Real column order (catalogs/v7/aws/vms.csv), real family names and GPU spellings, made-up sizes:
50,000 offerings (instance type x region), each listed in two availability zones with
different spot prices, so a refresh does the regional-minimum work of the real catalog.
"""

from __future__ import annotations

import random
from pathlib import Path

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
FAMILIES = [
    ("c5", "", 0), ("c6i", "", 0), ("c7i", "", 0), ("m6g", "", 0), ("c7g", "", 0),
    ("g4dn", "T4", 1), ("g5", "A10G", 1), ("p3", "V100", 4), ("p4d", "A100", 8), ("p5", "H100", 8),
]  # fmt: skip
REGIONS = [f"region-{n:02d}" for n in range(25)]


def write_catalog(
    root: Path, rows: int = 100_000, *, seed: int = 0, scale: float = 1.0, zones: int = 2
) -> Path:
    """Write ``root/skypilot/aws/vms.csv`` with ``rows`` rows; ``scale`` multiplies prices;
    ``zones`` lists each offering in that many zones (1: every row is an offering of its own)."""
    path = root / "skypilot" / "aws" / "vms.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(catalog_text(rows, seed=seed, scale=scale, zones=zones))
    return path


def catalog_text(rows: int, *, seed: int = 0, scale: float = 1.0, zones: int = 2) -> str:
    """The text of ``write_catalog``'s file."""
    rng = random.Random(seed)
    lines = [HEADER]
    per_region = rows // zones // len(REGIONS)
    for region in REGIONS:
        for n in range(per_region):
            family, gpu, count = FAMILIES[n % len(FAMILIES)]
            vcpus = 2 ** (n % 7 + 1)
            price = round(rng.uniform(0.05, 40.0) * scale, 5)
            info = (
                f"\"{{'Gpus': [{{'Name': '{gpu}', 'MemoryInfo': {{'SizeInMiB': 16384}}}}]}}\""
                if gpu
                else ""
            )
            for zone in "abcdefgh"[:zones]:
                spot = round(price * rng.uniform(0.2, 0.5), 5)
                lines.append(
                    f"{family}.size{n},{gpu},{count if gpu else ''},{vcpus},{vcpus * 4},{info},"
                    f"{price},{spot},{region},{region}{zone}"
                )
    return "\n".join(lines) + "\n"
