"""Honest ties: the chance that an option ranked below #1 is really cheaper than #1.

"Really cheaper" is about what is not known, not about luck: each option's cost is its median
(p50) times the error of its time prediction, log-normal with the prediction's log spread. The
luck of one spot run (when it is preempted) is not counted: no measurement could settle it, and
the median already holds the measured risk. Two options' errors are correlated by what they share:

- the same device kind (accelerator and count, or vCPUs and CPU family): their times come from
  one prediction for that device, so its error moves both the same way and cancels: the cheaper
  median is cheaper (one device in two regions, or spot beside on-demand, is never a tie);
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
_NORMAL = NormalDist()


def device_kind(option: Option) -> tuple[object, ...]:
    """What a prediction's error belongs to: the device, not where or how it is rented."""
    r = option.rentable
    if r.accelerator:
        return (r.accelerator, r.accelerator_count, r.nodes)
    return (r.vcpus, r.cpu_family)


def _gap_sd(option: Option, first: Option) -> float:
    """The spread of log(cost_option / cost_first) from what is not known: the predictions'
    errors. On one device kind they are one error and cancel; across devices, independent."""
    if device_kind(option) == device_kind(first):
        return 0.0
    return math.hypot(option.outcome.prediction.log_sigma, first.outcome.prediction.log_sigma)


def p_cheaper(option: Option, first: Option) -> float:
    """P(option's cost < first's cost), the pair's errors correlated by device kind."""
    if not (option.cost_usd > 0 and first.cost_usd > 0):
        return 0.0
    gap = math.log(option.cost_usd / first.cost_usd)
    sd = _gap_sd(option, first)
    if sd < 1e-12:
        return float(gap < 0)  # nothing unknown between them: the price decides
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
