"""The replay's spot anywhere in a region (advisor/fitting/spot_replay.py ``RegionProcess``): the same
walk as the derivation of the region rows, and a move is a preemption to the fallback run."""

from __future__ import annotations

import itertools

import pytest

from advisor.fitting.spot_replay import RegionProcess, TraceProcess, replay
from advisor.fitting.spot_traces import Trace, committed_traces, failover, region_of
from advisor.recommend import fallback, spot

HOUR = 3600.0
MOVE = spot.MOVE_SECONDS


def trace(zone: str, ticks: list[int]) -> Trace:
    return Trace("f", "aws", "V100", "r", "c", f"{zone}.json", zone, 0, HOUR, ticks, "w")


A = trace("us-east-1a", [0, 0, 1, 1, 1, 0, 0, 0, 1, 1])
B = trace("us-east-1b", [1, 0, 0, 1, 1, 1, 0, 1, 1, 0])


def region(first: int = 0, offset: float = 0.0) -> RegionProcess:
    return RegionProcess([TraceProcess(A, offset), TraceProcess(B, offset)], first)


def test_the_region_process_stays_moves_and_waits() -> None:
    p = region()
    assert p.at(0.0) == (True, 2 * HOUR)  # on a until it loses capacity at 2 h
    assert p.at(2 * HOUR) == (False, 2 * HOUR + MOVE)  # b has capacity: a move
    assert p.at(2 * HOUR + 0.5) == (False, 2 * HOUR + MOVE)
    assert p.at(2 * HOUR + MOVE) == (True, 3 * HOUR)  # on b
    assert p.at(3 * HOUR) == (False, 5 * HOUR)  # neither: wait for the first that has
    assert p.at(5 * HOUR) == (True, 8 * HOUR)  # a again, after a wait: no move
    assert p.at(8 * HOUR) == (False, 9 * HOUR)
    assert p.at(9 * HOUR) == (True, 10 * HOUR)  # b, to the end of the trace
    # starting on a zone without capacity, another has it: a start there, not a move
    late = region(first=0, offset=2.5 * HOUR)
    assert late.at(0.0) == (True, 0.5 * HOUR)


def walk(p: RegionProcess, length: float) -> tuple[list[tuple[int, float]], int]:
    """The process's spells up to ``length`` as ``(state, seconds)``, 0 up and 1 down, with two
    up spells in a row around each move (its 1 s is in neither), and the number of moves."""
    out: list[tuple[int, float]] = []
    moves, moving, t = 0, False, 0.0
    while t < length:
        available, change = p.at(t)
        change = min(change, length)
        state = 0 if available else 1
        if state and out and out[-1][0] == 0 and change - t == pytest.approx(MOVE):
            moves, moving = moves + 1, True  # a real wait lasts whole ticks (>= 32 s)
        elif out and out[-1][0] == state and not moving:
            out[-1] = (state, out[-1][1] + change - t)
        else:
            out.append((state, change - t))
            moving = False
        t = change
    return out, moves


@pytest.mark.parametrize("family", ["aws-v100-preemption-2023-04", "gcp-h100-availability-2025-10"])
def test_the_replay_walks_a_region_as_the_derivation_does(family: str) -> None:
    traces = [t for t in committed_traces() if t.family == family and t.part == 0]
    by_region: dict[str, list[Trace]] = {}
    for t in traces:
        by_region.setdefault(region_of(t.provider, t.zone), []).append(t)
    for zones in by_region.values():
        gap = zones[0].gap_seconds
        expected = failover(zones)
        length = len(zones[0].ticks) * gap
        p = RegionProcess([TraceProcess(z, 0.0) for z in zones], 0)
        got, moves = walk(p, length)
        assert moves == sum(1 for a, b in itertools.pairwise(expected) if a[0] == b[0] == 0)
        assert [s for s, _ in got] == [s for s, _ in expected]
        # each move takes its 1 s from the next machine's spell
        for (state, seconds), (_, ticks) in zip(got, expected, strict=True):
            assert seconds == pytest.approx(ticks * gap, abs=MOVE + 1e-6), state


def test_a_move_in_the_replay_is_a_preemption_to_the_fallback_run() -> None:
    # 2.5 h of work, a checkpoint every 600 s of work, 300 s per start. On a: started at 300 s,
    # 6,900 s done when a loses capacity at 2 h; the 300 s since the checkpoint at 6,600 s are
    # lost. In the region the run moves to b (1 s) and starts again: 300 s, then the 2,400 s left.
    # Pinned to a it waits for a until 5 h.
    work, deadline = 2.5 * HOUR, 30 * HOUR
    moved = fallback.run(work, work, deadline, 300, 600, region(), "spot_only")
    pinned = fallback.run(work, work, deadline, 300, 600, TraceProcess(A, 0.0), "spot_only")
    assert moved.preemptions == pinned.preemptions == 1
    assert moved.wall == pytest.approx(2 * HOUR + MOVE + 300 + 2400)
    assert pinned.wall == pytest.approx(5 * HOUR + 300 + 2400)
    assert moved.spot_seconds == pinned.spot_seconds == pytest.approx(2 * HOUR + 300 + 2400)


def test_both_replays_run_every_family() -> None:
    traces = committed_traces()
    for scope in ("region", "zone"):
        cells = replay(traces, starts=1, seed=7, scope=scope)
        assert {family for family, _, _ in cells} >= {"aws-k80-availability-2022-10"}
        assert all(all(c.met["on_demand_only"]) for c in cells.values())
