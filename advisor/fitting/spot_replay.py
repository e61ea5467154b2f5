"""Replay the public spot traces: does the fallback plan keep deadlines, and is pure spot predicted well?

Jobs of 2-48 h with deadlines of 1.1x-3x their work start at seeded random times on every trace
family of ``data/spot-trace-spells.csv``, spot in a region (``RegionProcess``: failing over
between its zones) or pinned to a zone, and run three ways with the engine's own policy code
(``advisor.recommend.fallback.run``): ``uniform_progress``, ``spot_only``, ``on_demand_only``.
It reports the deadline-met rates, the cost against all-on-demand and the perfect-foresight
floor, and pure spot's replayed rate against the predicted one (``advisor.recommend.spot``), each
against ``TARGET_MET``, ``TARGET_COST`` and ``TARGET_GAP`` (docs/SOURCES.md, "Spot risk").

Usage: ``python -m advisor.fitting.spot_replay [--starts N] [--seed S]``."""

from __future__ import annotations

import argparse
import bisect
import math
import random
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

from advisor.fitting.spot_traces import Trace, committed_traces, region_of, runs
from advisor.recommend import fallback, spot
from pricing.spot_risk import SpotRisk, shipped_risks

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
(andylizf/skynomad-artifact's price files); K80 and CPU: 0.3, an assumption
(the usual AWS spot discount). Only the cost ratios depend on these, not the deadlines."""
GPU_FAMILIES = {f for f in SPOT_PRICE_SHARE if "cpu" not in f}
SCOPES = ("region", "zone")
TARGET_MET, TARGET_COST, TARGET_GAP = 0.99, 0.75, 0.10
"""The targets: fallback deadline-met rate, median GPU fallback cost over all-on-demand, and the
largest family-level gap of the predicted pure-spot P(deadline) from the replayed one."""


class TraceProcess:
    """A trace as a spot process, started ``offset`` seconds in; it wraps around at its end."""

    def __init__(self, trace: Trace, offset: float) -> None:
        self.starts, self.states, self.length = _timeline(trace)
        self.offset = offset

    def at(self, t: float) -> tuple[bool, float]:
        into = (self.offset + t) % self.length
        i = bisect.bisect_right(self.starts, into) - 1
        end = self.starts[i + 1] if i + 1 < len(self.starts) else self.length
        return self.states[i], t + (end - into)


_TIMELINES: dict[int, tuple[Trace, list[float], list[bool], float]] = {}


def _timeline(trace: Trace) -> tuple[list[float], list[bool], float]:
    """When each run of ``trace`` starts, whether it is available, and the trace's length, kept
    per trace for the process (a replay starts thousands of processes on the same traces)."""
    kept = _TIMELINES.get(id(trace))
    if kept is None or kept[0] is not trace:
        starts: list[float] = []
        states: list[bool] = []
        clock = 0.0
        for state, length in runs(trace.ticks):
            starts.append(clock)
            states.append(state == 0)
            clock += length * trace.gap_seconds
        kept = _TIMELINES[id(trace)] = (trace, starts, states, clock)
    return kept[1], kept[2], kept[3]


class RegionProcess:
    """Spot anywhere in a region: its zones' time-aligned trace processes, the run starting on
    zone ``first`` if it has capacity, else on the first (in order) that has. It stays on its zone
    while that zone has capacity; when the zone loses it while another zone has capacity, that is
    a move: ``spot.MOVE_SECONDS`` without capacity, which ``fallback.run`` sees as a preemption (it
    steps to every change), then capacity on the first zone that has it; when no zone has capacity
    it waits for one and starts on the first that has (no move). ``advisor.fitting.spot_traces.failover``
    is the same walk on the ticks, from the first zone."""

    def __init__(self, zones: list[TraceProcess], first: int) -> None:
        self.zones, self.on = zones, first
        self.up = False  # on a machine: a loss of its zone's capacity is a preemption
        self.started = False
        self.moved_until = -math.inf

    def at(self, t: float) -> tuple[bool, float]:
        if t < self.moved_until:
            return False, self.moved_until
        if self.up:
            available, change = self.zones[self.on].at(t)
            if available:
                return True, change
        states = [zone.at(t) for zone in self.zones]
        if not self.started and states[self.on][0]:
            other: int | None = self.on
        else:
            other = next((i for i, (has, _) in enumerate(states) if has), None)
        self.started = True
        if other is None:  # no zone has capacity: wait for the first that has
            self.up = False
            return False, min(when for _, when in states)
        self.on = other
        if self.up:  # the zone of the machine lost capacity, another has it: a move
            self.up = False
            self.moved_until = t + spot.MOVE_SECONDS
            return False, self.moved_until
        self.up = True  # capacity at the start, after a wait, or after a move
        return True, states[other][1]


@dataclass
class Cell:
    """Results of one family, job length and slack."""

    met: dict[str, list[bool]]
    cost: dict[str, list[float]]
    floor: list[float]
    """Per job, the cost ratio to all-on-demand no policy can go below (``floor``)."""


def floor(
    process: TraceProcess | RegionProcess, work: float, deadline: float, spot_share: float
) -> float:
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


def replay(
    traces: list[Trace], starts: int, seed: int, scope: str = "region"
) -> dict[tuple[str, int, float], Cell]:
    """Every family's jobs under the three policies, ``scope`` ``zone`` (a random zone, weighted by
    its trace's length) or ``region`` (a random region and part, weighted by the part's length,
    starting on a random zone of it)."""
    rng = random.Random(seed)
    cells: dict[tuple[str, int, float], Cell] = {}
    families: dict[str, list[Trace]] = defaultdict(list)
    for t in traces:
        if len(t.ticks) > 1:
            families[t.family].append(t)
    for family, parts in families.items():
        if scope == "zone":
            groups = [[p] for p in parts]
        else:
            regions: dict[tuple[str, int], list[Trace]] = defaultdict(list)
            for p in parts:
                regions[region_of(p.provider, p.zone), p.part].append(p)
            groups = list(regions.values())
        weights = [len(g[0].ticks) * g[0].gap_seconds for g in groups]
        risk = engine_risk(family, scope)
        mean_life = statistics.fmean(z.mean_life_seconds for z in risk.mixture)
        tau = spot.young_interval(CHECKPOINT, HOUR / mean_life)
        prices = (SPOT_PRICE_SHARE[family], 1.0)
        for hours in JOB_HOURS:
            for slack in SLACKS:
                cell = Cell(defaultdict(list), defaultdict(list), [])
                for _ in range(starts):
                    group = rng.choices(groups, weights)[0]
                    first = rng.randrange(len(group)) if len(group) > 1 else 0
                    offset = rng.uniform(0, len(group[0].ticks) * group[0].gap_seconds)

                    def process(
                        group: list[Trace] = group, first: int = first, offset: float = offset
                    ) -> TraceProcess | RegionProcess:
                        if scope == "zone":
                            return TraceProcess(group[first], offset)
                        return RegionProcess([TraceProcess(p, offset) for p in group], first)

                    work, deadline = hours * HOUR, hours * HOUR * slack
                    cell.floor.append(floor(process(), work, deadline, prices[0]))
                    for policy in fallback.POLICIES:
                        r = fallback.run(work, work, deadline, RESTART, tau, process(), policy)
                        cell.met[policy].append(r.wall <= deadline)
                        cell.cost[policy].append(r.cost(*prices))
                cells[family, hours, slack] = cell
    return cells


def engine_risk(family: str, scope: str) -> SpotRisk:
    """The engine's model of ``family`` for ``scope``: its regions (what ``for_machine`` gives an
    offering without a zone) or its zones (an offering pinned to a zone)."""
    risk = shipped_risks().families[family]
    return risk if scope == "region" else risk.pinned_to_zone()


def predicted_spot(family: str, hours: int, scope: str = "region") -> list[float]:
    """The engine's pure-spot wall times for a job of ``hours`` (known work, no cap)."""
    sims = spot.simulate(hours * HOUR, 0.0, engine_risk(family, scope), CHECKPOINT, RESTART, None)
    return [s.wall + RESTART for s in sims]  # the first start, as in the replay


def report(cells: dict[tuple[str, int, float], Cell], scope: str = "region") -> list[str]:
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
    family_gaps: list[tuple[str, float]] = []
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
        walls_by_hours = {h: predicted_spot(family, h, scope) for h in JOB_HOURS}
        for (_, hours, slack), c in items:
            predicted = spot.fraction_within(sorted(walls_by_hours[hours]), hours * HOUR * slack)
            gaps.append(predicted - statistics.fmean(c.met["spot_only"]))
        mean_gap = statistics.fmean(abs(g) for g in gaps)
        overall = statistics.fmean(gaps)
        family_gaps.append((family, overall))
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
    met_rate, cost = statistics.fmean(all_met), statistics.median(gpu_ratios)
    worst_family, worst_gap = max(family_gaps, key=lambda fg: abs(fg[1]))
    lines.append(
        f"targets ({scope}): fallback met >= {TARGET_MET:.0%}: {_verdict(met_rate >= TARGET_MET)} "
        f"({met_rate:.2%}); median GPU fallback cost <= {TARGET_COST:.2f} of all-on-demand: "
        f"{_verdict(cost <= TARGET_COST)} ({cost:.2f}); pure-spot P(met) predicted within "
        f"{TARGET_GAP * 100:.0f} points on every family: {_verdict(abs(worst_gap) <= TARGET_GAP)} "
        f"(largest {worst_gap * 100:+.1f} points, {worst_family})"
    )
    return lines


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


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
    traces = committed_traces()
    for scope, what in (
        ("region", "spot anywhere in a region, failover between its zones (an offering without "
                   "a zone: the engine's regions)"),
        ("zone", "pinned to one zone (an offering that names its zone: the engine's zones)"),
    ):  # fmt: skip
        print(f"== {scope}: {what}")
        for line in report(replay(traces, args.starts, args.seed, scope), scope):
            print(line)
    print(f"({time.perf_counter() - began:.1f} s, seed {args.seed}, {args.starts} starts per cell)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
