"""Speed of ``predict()``: the recommender calls it once per unique target (a few hundred).

    .venv/bin/python benchmarks/estimate_speed.py

Times every accelerator of the catalog at 1 and 8 units plus 13 CPU families at 4 vCPU counts,
for a convnet probe and a recurrent probe with measured thread scaling, in 7 rounds; prints the median per call and the first call
(which loads the catalog and the calibration). Target: well under 1 ms per call.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.estimate.test_probes import probe


def main() -> int:
    started = time.perf_counter()
    from advisor.estimate import Target, catalog, predict

    first = predict(probe("resnet50", 5.0), Target("T4", 1))
    first_call = time.perf_counter() - started
    targets = [Target(name, n) for name in catalog.accelerators() for n in (1, 8)]
    targets += [
        Target(None, 0, v, family) for family in catalog.cpu_families() for v in (2, 8, 32, 96)
    ]
    probes = [
        probe("resnet50", 5.0),
        replace(probe("imdb_bilstm", 0.25), thread_scaling={1: 0.4, 2: 0.25}),
    ]
    rounds = []
    for _ in range(7):
        t0 = time.perf_counter()
        for p in probes:
            for target in targets:
                predict(p, target)
        rounds.append((time.perf_counter() - t0) / (len(probes) * len(targets)))
    print(
        f"targets per round: {len(targets) * len(probes)}; first call (loads data): "
        f"{first_call * 1e3:.1f} ms ({first.seconds:.0f} s predicted)"
    )
    print(
        f"predict(): median {statistics.median(rounds) * 1e6:.1f} us per call "
        f"(min {min(rounds) * 1e6:.1f}, max {max(rounds) * 1e6:.1f}) over {len(rounds)} rounds"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
