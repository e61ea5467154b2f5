"""Honest ties: the chance that an option ranked below #1 is really cheaper than #1.

Each option's cost is taken as log-normal, with its median and a spread read from its p50 and
p90 costs (the prediction's uncertainty, and for spot the preemptions'). Two options' errors are
correlated by what they share:

- the same device kind (accelerator and count, or vCPUs and CPU family): their times come from
  one prediction for that device, so its error (the prediction's log spread) moves both the same
  way and cancels in the comparison; what is left of each cost's spread (a spot run's
  preemptions and waits) is its own, independent;
- different devices: correlation 0, the conservative choice. The probe's own error is shared by
  every device and would correlate them, but no fit separates it from the device-scaling error,
  and assuming independence can only widen a tie, never invent a winner.

``p_cheaper`` is P(cost_i < cost_1) under that pair model, the log gap normal; ``stake`` is the
expected overpay of keeping #1 when the other is cheaper, E[max(0, cost_1 - cost_i)] with #1 at
its median: what settling it is worth.
"""

from __future__ import annotations

import math
from dataclasses import replace
from statistics import NormalDist

from advisor.recommend.recommendation import Option, Recommendation

GRID = 64
"""Normal quantiles per dimension when averaging the overpay (deterministic)."""
_Z90 = NormalDist().inv_cdf(0.9)
_NORMAL = NormalDist()


def device_kind(option: Option) -> tuple[object, ...]:
    """What a prediction's error belongs to: the device, not where or how it is rented."""
    r = option.rentable
    if r.accelerator:
        return (r.accelerator, r.accelerator_count)
    return (r.vcpus, r.cpu_family)


def _spread(option: Option) -> float:
    low, high = option.cost_usd, option.cost_usd_p90
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 or high <= low:
        return 0.0
    return math.log(high / low) / _Z90


def _parts(option: Option) -> tuple[float, float]:
    """(the prediction's log spread, the rest of the cost's spread: the spot process's own)."""
    total, predicted = _spread(option), option.outcome.prediction.log_sigma
    return predicted, math.sqrt(max(0.0, total * total - predicted * predicted))


def _gap_sd(option: Option, first: Option) -> float:
    """The spread of log(cost_option / cost_first): on one device kind the prediction's error is
    shared and cancels but for the difference of spreads; spot noise never is shared."""
    (p_i, r_i), (p_1, r_1) = _parts(option), _parts(first)
    if device_kind(option) == device_kind(first):
        return math.sqrt((p_i - p_1) ** 2 + r_i**2 + r_1**2)
    return math.sqrt(p_i**2 + r_i**2 + p_1**2 + r_1**2)


def p_cheaper(option: Option, first: Option) -> float:
    """P(option's cost < first's cost), the pair's errors correlated by device kind."""
    if not (option.cost_usd > 0 and first.cost_usd > 0):
        return 0.0
    gap = math.log(option.cost_usd / first.cost_usd)
    sd = _gap_sd(option, first)
    if sd < 1e-12:
        return 0.5 if gap == 0 else float(gap < 0)
    return _NORMAL.cdf(-gap / sd)


def stake(option: Option, first: Option) -> float:
    """E[max(0, cost_first - cost_option)]: the expected overpay of keeping #1 (USD), over a
    grid of the log gap's normal quantiles."""
    gap = math.log(option.cost_usd / first.cost_usd) if first.cost_usd > 0 else 0.0
    sd = _gap_sd(option, first)
    zs = [_NORMAL.inv_cdf((k + 0.5) / GRID) for k in range(GRID)]
    # cost_option = cost_first * exp(gap + sd z), cost_first held at its median
    total = sum(max(0.0, first.cost_usd * (1 - math.exp(gap + sd * z))) for z in zs)
    return total / GRID


def with_ties(options: list[Option], objective: str) -> list[Option]:
    """``options`` (ranked) with, for each feasible one after #1, its chance of being really
    cheaper than #1 and the stake, and a word of it in its ``why`` when it is a tie."""
    if objective != "cheapest" or not options or not options[0].feasible:
        return options
    first = options[0]
    out = [first]
    for option in options[1:]:
        if not option.feasible:
            out.append(option)
            continue
        chance = p_cheaper(option, first)
        tied = replace(option, p_cheaper=chance, stake_usd=stake(option, first))
        if tied.tie:
            tied = replace(
                tied, why=f"{option.why}; a tie: {chance:.0%} chance it is really cheaper than #1"
            )
        out.append(tied)
    return out


def ties(rec: Recommendation) -> list[Option]:
    """The options tied with #1."""
    return [o for o in rec.options if o.tie]
