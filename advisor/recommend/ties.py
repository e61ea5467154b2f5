"""Honest ties: the chance that an option ranked below #1 is really cheaper than #1.

Each option's cost is taken as log-normal, with its median and a spread read from its p50 and
p90 costs (the prediction's uncertainty, and for spot the preemptions'). Two options' errors are
correlated by what they share:

- the same device kind (accelerator and count, or vCPUs and CPU family): correlation 1. Their
  times come from one prediction for that device, so its error moves both the same way (one
  device in two regions, or spot beside on-demand, differ only by price and by the spot risk);
- different devices: correlation 0, the conservative choice. The probe's own error is shared by
  every device and would correlate them, but no fit separates it from the device-scaling error,
  and assuming independence can only widen a tie, never invent a winner.

``p_cheaper`` is P(cost_i < cost_1) under that pair model; ``stake`` is the expected overpay of
keeping #1 when the other is cheaper, E[max(0, cost_1 - cost_i)]: what settling it is worth.
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


def p_cheaper(option: Option, first: Option) -> float:
    """P(option's cost < first's cost), the pair's errors correlated by device kind."""
    if not (option.cost_usd > 0 and first.cost_usd > 0):
        return 0.0
    gap = math.log(option.cost_usd / first.cost_usd)
    s_i, s_1 = _spread(option), _spread(first)
    shared = device_kind(option) == device_kind(first)
    sd = abs(s_i - s_1) if shared else math.hypot(s_i, s_1)
    if sd < 1e-12:
        return 0.5 if gap == 0 else float(gap < 0)
    return _NORMAL.cdf(-gap / sd)


def stake(option: Option, first: Option) -> float:
    """E[max(0, cost_first - cost_option)]: the expected overpay of keeping #1 (USD)."""
    s_i, s_1 = _spread(option), _spread(first)
    zs = [_NORMAL.inv_cdf((k + 0.5) / GRID) for k in range(GRID)]
    if device_kind(option) == device_kind(first):
        pairs = [(z, z) for z in zs]
    else:
        pairs = [(a, b) for a in zs for b in zs]
    total = sum(
        max(0.0, first.cost_usd * math.exp(s_1 * a) - option.cost_usd * math.exp(s_i * b))
        for a, b in pairs
    )
    return total / len(pairs)


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
