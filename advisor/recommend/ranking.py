"""What a ranked list needs besides the sort: the cost/time frontier and one line of why."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from advisor import display
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.report import usd

if TYPE_CHECKING:
    from advisor.recommend.recommendation import Constraints, Option, Outcome
    from pricing.offers import Rentable


class Priced(NamedTuple):
    """One offering with its outcome and costs, before it becomes an ``Option``."""

    outcome: Outcome
    rentable: Rentable
    cost_usd: float
    """Cost at the p50 wall time."""
    confident_cost_usd: float
    """Cost at the confidence quantile."""
    feasible: bool
    expected_cost_usd: float = math.nan
    """Cost at the mean wall time (spot: its interruptions' lost work and restarts, billed);
    NaN: not known, the p50's taken."""


def frontier(rows: Sequence[Priced]) -> list[Priced]:
    """Rows on the Pareto front of (p50 time, p50 cost), fastest first.

    Only the cheapest row of each distinct outcome can be on the front, so the sort runs over
    outcomes, not over every offering.
    """
    cheapest: dict[int, Priced] = {}
    for row in rows:
        seen = cheapest.get(id(row.outcome))
        if seen is None or row.cost_usd < seen.cost_usd:
            cheapest[id(row.outcome)] = row
    front: list[Priced] = []
    best_cost = float("inf")
    for row in sorted(cheapest.values(), key=lambda r: (r.outcome.p50_seconds, r.cost_usd)):
        if row.cost_usd < best_cost:
            front.append(row)
            best_cost = row.cost_usd
    return front


def explain_why(option: Option, rank: int, first: Option, constraints: Constraints) -> str:
    """One line: why this option sits where it does."""
    result = option.outcome
    deadline = constraints.deadline_seconds
    chance = (
        f"{display.chance(result.p_meet)} chance to finish in {describe_seconds(deadline)}"
        if deadline
        else ""
    )
    if not option.feasible:
        misses = []
        if not option.meets_deadline:
            misses.append(f"only {chance}")
        if not option.within_budget:
            level = round(constraints.confidence * 100)
            misses.append(f"p{level} cost ${option.confident_cost_usd:,.2f} is over budget")
        return "; ".join(misses)
    if rank == 1:
        what = "cheapest" if constraints.objective == "cheapest" else "fastest"
        where = []
        if deadline:
            where.append("meets the deadline")
        if constraints.budget_usd is not None:
            where.append("fits the budget")
        tail = f" that {' and '.join(where)}" if where else ""
        return f"{what}{tail}" + (f" ({chance})" if chance else "")
    dt = option.outcome.p50_seconds - first.outcome.p50_seconds
    dc = option.cost_usd - first.cost_usd
    same = abs(dc) < max(0.0005, 0.005 * first.cost_usd)  # within half a percent: a tie
    dearer = "same cost" if same else f"{usd(abs(dc))} {'more' if dc > 0 else 'less'}"
    if abs(dt) < 60:
        return f"{dearer}, about as fast as #1"
    return f"{dearer}, {describe_seconds(abs(dt))} {'slower' if dt > 0 else 'faster'} than #1"
