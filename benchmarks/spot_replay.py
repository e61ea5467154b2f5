"""Replay the public spot traces: does the fallback plan keep deadlines, and is pure spot predicted well?

For every trace family of ``data/spot-trace-spells.csv`` (the traces themselves, lossless run
lengths; ``benchmarks/spot_traces_derive.py``), jobs of 2-48 h with deadlines of 1.1x-3x their
work start at seeded random times in random zones of the family. Each job is run three ways on the
trace (``advisor.recommend.fallback.run``, the engine's own policy code):

- ``uniform_progress``: spot with an on-demand fallback, planned on the job's work;
- ``spot_only``: spot when the trace has capacity, wait otherwise, never on-demand;
- ``on_demand_only``: the reference cost.

It reports the deadline-met rate and the cost against all-on-demand, the floor no policy can go
below on the same trace (``floor``: perfect foresight, no restart or checkpoint costs), and
compares the
deadline-met rate of pure spot with the one the engine predicts from the fitted Weibull spells of
the same family (``data/spot-risk.csv``, ``advisor.recommend.spot.simulate``).

Targets: the fallback meets >= 99% of deadlines with slack >= 1.1x and costs >= 25% less
than all-on-demand in the median GPU replay; the predicted pure-spot P(deadline) is within 10
points of the replayed rate on every trace family.

Usage: ``python benchmarks/spot_replay.py [--starts N] [--seed S]`` (about half a minute).
"""

from __future__ import annotations

import argparse
import bisect
import random
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

from advisor.recommend import fallback, spot
from benchmarks.spot_traces_derive import Trace, committed_traces, runs
from pricing.spot_risk import shipped_risks

HOUR = 3600.0
JOB_HOURS = (2, 4, 8, 16, 24, 48)
SLACKS = (1.1, 1.25, 1.5, 2.0, 3.0)
RESTART = 300.0
"""Seconds per start of a machine: boot, start-up, checkpoint restore (an assumption)."""
CHECKPOINT = 30.0
"""Seconds to write one checkpoint (sets Young's interval from the family's mean lifetime)."""
SPOT_PRICE_SHARE = {
    "aws-v100-preemption-2023-04": 0.306,
    "aws-v100-availability-2023-02": 0.306,
    "aws-k80-availability-2022-10": 0.3,
    "aws-cpu-preemption-2023-04": 0.3,
    "gcp-h100-availability-2025-10": 0.2,
}
"""Spot price / on-demand price. AWS p3.2xlarge: $0.9362 spot (us-west-2, the dearer region) over
$3.06 on-demand in data/prices-seed.sqlite; GCP H100: 0.18-0.23 in 12 of 13 zones
(shared/reference/SPOT.md, from the SkyNomad artifact's prices); K80 and CPU: 0.3, an assumption
(the usual AWS spot discount). Only the cost ratios depend on these, not the deadlines."""
GPU_FAMILIES = {f for f in SPOT_PRICE_SHARE if "cpu" not in f}


class TraceProcess:
    """A trace as a spot process, started ``offset`` seconds in; it wraps around at its end."""

    def __init__(self, trace: Trace, offset: float) -> None:
        self.starts: list[float] = []
        self.states: list[bool] = []
        clock = 0.0
        for state, length in runs(trace.ticks):
            self.starts.append(clock)
            self.states.append(state == 0)
            clock += length * trace.gap_seconds
        self.length, self.offset = clock, offset

    def at(self, t: float) -> tuple[bool, float]:
        into = (self.offset + t) % self.length
        i = bisect.bisect_right(self.starts, into) - 1
        end = self.starts[i + 1] if i + 1 < len(self.starts) else self.length
        return self.states[i], t + (end - into)


@dataclass
class Cell:
    """Results of one family, job length and slack."""

    met: dict[str, list[bool]]
    cost: dict[str, list[float]]
    floor: list[float]
    """Per job, the cost ratio to all-on-demand no policy can go below (``floor``)."""


def floor(process: TraceProcess, work: float, deadline: float, spot_share: float) -> float:
    """The lowest cost over all-on-demand any policy could reach on this trace: every second a
    spot machine can be had before the deadline runs the job on spot (up to its work), the rest
    on on-demand, with no restart, no lost work, no checkpoint, and knowing the future. Loose on
    purpose: a policy that stays above it is not shown to be bad, one target below it is out of
    reach on these traces."""
    t = on_spot = 0.0
    while t < deadline and on_spot < work:
        available, change = process.at(t)
        end = min(change, deadline)
        if available:
            on_spot += end - t
        t = end
    spot = min(work, on_spot)
    return (spot * spot_share + work - spot) / work


def replay(traces: list[Trace], starts: int, seed: int) -> dict[tuple[str, int, float], Cell]:
    rng = random.Random(seed)
    risks = shipped_risks()
    cells: dict[tuple[str, int, float], Cell] = {}
    families: dict[str, list[Trace]] = defaultdict(list)
    for t in traces:
        if len(t.ticks) > 1:
            families[t.family].append(t)
    for family, parts in families.items():
        weights = [len(p.ticks) * p.gap_seconds for p in parts]
        risk = risks.families[family]
        mean_life = statistics.fmean(z.mean_life_seconds for z in risk.zones)
        tau = spot.young_interval(CHECKPOINT, HOUR / mean_life)
        prices = (SPOT_PRICE_SHARE[family], 1.0)
        for hours in JOB_HOURS:
            for slack in SLACKS:
                cell = Cell(defaultdict(list), defaultdict(list), [])
                for _ in range(starts):
                    part = rng.choices(parts, weights)[0]
                    offset = rng.uniform(0, len(part.ticks) * part.gap_seconds)
                    work, deadline = hours * HOUR, hours * HOUR * slack
                    cell.floor.append(floor(TraceProcess(part, offset), work, deadline, prices[0]))
                    for policy in fallback.POLICIES:
                        process = TraceProcess(part, offset)
                        r = fallback.run(work, work, deadline, RESTART, tau, process, policy)
                        cell.met[policy].append(r.wall <= deadline)
                        cell.cost[policy].append(r.cost(*prices))
                cells[family, hours, slack] = cell
    return cells


def predicted_spot(family: str, hours: int) -> list[float]:
    """The engine's pure-spot wall times for a job of ``hours`` (known work, no cap)."""
    risk = shipped_risks().families[family]
    sims = spot.simulate(hours * HOUR, 0.0, risk, CHECKPOINT, RESTART, None)
    return [s.wall + RESTART for s in sims]  # the first start, as in the replay


def report(cells: dict[tuple[str, int, float], Cell]) -> list[str]:
    lines = [
        "family                          jobs  fallback met  fallback/OD cost  floor  spot met  "
        "spot/OD cost  spot P(met) predicted vs replayed (mean |gap|, worst cell)",
    ]
    by_family: dict[str, list[tuple[tuple[str, int, float], Cell]]] = defaultdict(list)
    for key, cell in cells.items():
        by_family[key[0]].append((key, cell))
    gpu_ratios: list[float] = []
    gpu_floors: list[float] = []
    all_met: list[bool] = []
    for family, items in by_family.items():
        met = [m for _, c in items for m in c.met["uniform_progress"]]
        spot_met = [m for _, c in items for m in c.met["spot_only"]]
        ratios = [
            up / od
            for _, c in items
            for up, od in zip(c.cost["uniform_progress"], c.cost["on_demand_only"], strict=True)
        ]
        spot_ratios = [
            s / od
            for _, c in items
            for s, od in zip(c.cost["spot_only"], c.cost["on_demand_only"], strict=True)
        ]
        gaps = []
        walls_by_hours = {h: predicted_spot(family, h) for h in JOB_HOURS}
        for (_, hours, slack), c in items:
            predicted = spot.fraction_within(sorted(walls_by_hours[hours]), hours * HOUR * slack)
            gaps.append(predicted - statistics.fmean(c.met["spot_only"]))
        mean_gap = statistics.fmean(abs(g) for g in gaps)
        overall = statistics.fmean(gaps)
        worst = max(gaps, key=abs)
        floors = [f for _, c in items for f in c.floor]
        if family in GPU_FAMILIES:
            gpu_ratios += ratios
            gpu_floors += floors
        all_met += met
        lines.append(
            f"{family:31} {len(met):5}  {statistics.fmean(met):11.1%}  "
            f"{statistics.median(ratios):16.2f}  {statistics.median(floors):5.2f}  "
            f"{statistics.fmean(spot_met):8.1%}  "
            f"{statistics.median(spot_ratios):12.2f}  family {overall:+.1%}, mean |gap| "
            f"{mean_gap:.1%}, worst cell {worst:+.1%}"
        )
    lines.append(
        f"all families: fallback met {statistics.fmean(all_met):.2%} of {len(all_met)} jobs; "
        f"median GPU fallback cost {statistics.median(gpu_ratios):.2f} of all-on-demand "
        f"({1 - statistics.median(gpu_ratios):.0%} less; the median over every GPU job of its cost "
        f"over its own all-on-demand cost); no policy below {statistics.median(gpu_floors):.2f}"
    )
    by_slack = [(slack, _by_slack(cells, slack)) for slack in SLACKS]
    lines.append(
        "by slack (fallback met, median GPU fallback cost / all-on-demand, floor): "
        + ", ".join(
            f"{slack}x {met:.1%} {ratio:.2f} {low:.2f}" for slack, (met, ratio, low) in by_slack
        )
    )
    return lines


def _by_slack(
    cells: dict[tuple[str, int, float], Cell], slack: float
) -> tuple[float, float, float]:
    """The fallback's deadline-met rate (all families), median GPU cost ratio and median GPU
    floor at ``slack``."""
    met = [m for (_, _, s), c in cells.items() if s == slack for m in c.met["uniform_progress"]]
    ratios = [
        up / od
        for (family, _, s), c in cells.items()
        if s == slack and family in GPU_FAMILIES
        for up, od in zip(c.cost["uniform_progress"], c.cost["on_demand_only"], strict=True)
    ]
    floors = [
        f
        for (family, _, s), c in cells.items()
        if s == slack and family in GPU_FAMILIES
        for f in c.floor
    ]
    return statistics.fmean(met), statistics.median(ratios), statistics.median(floors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=20, help="jobs per family, length, slack")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    began = time.perf_counter()
    cells = replay(committed_traces(), args.starts, args.seed)
    for line in report(cells):
        print(line)
    print(f"({time.perf_counter() - began:.1f} s, seed {args.seed}, {args.starts} starts per cell)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
