"""Ties with #1 in one line, and the ``advisor bench`` that would settle one where that is worth
its cost (``plan``'s running time at the tied options' prices).

The engine says which options tie (``advisor.recommend.ties``: the chance each is really cheaper
than #1, and the stake, the expected overpay of keeping #1); this module says it to people, for
the command line and the app alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from advisor import display
from advisor.bench import plan
from advisor.recommend.recommendation import Option, Recommendation


def bench_args(options: Sequence[Option]) -> tuple[str, float]:
    """``--gpus T4 --cpus 4`` for the devices of ``options`` (a probe runs on one device), and
    the bench's expected cost at these options' prices (provisioning, setup, the probe)."""
    gpus: dict[str, float] = {}
    cpus: dict[int, float] = {}
    for o in options:
        r = o.rentable
        if r.accelerator:
            gpus[r.accelerator] = min(gpus.get(r.accelerator, math.inf), r.usd_per_hour)
        else:
            vcpus = round(r.vcpus or 0)
            cpus[vcpus] = min(cpus.get(vcpus, math.inf), r.usd_per_hour)
    base = plan.PROVISION_SECONDS + plan.PROBE_OVERHEAD_SECONDS + 20.0
    cost = sum(p * (base + plan.SETUP_SECONDS["gpu"]) / 3600 for p in gpus.values())
    cost += sum(p * (base + plan.SETUP_SECONDS["cpu"]) / 3600 for p in cpus.values())
    args = (f" --gpus {','.join(gpus)}" if gpus else "") + (
        f" --cpus {','.join(map(str, cpus))}" if cpus else ""
    )
    if all(o.rentable.pricing != "on_demand" for o in options):
        args += " --spot"
    return args, cost


def tie_lines(rec: Recommendation) -> list[str]:
    """Every tie with #1 in one line (``#2-#5 are within the prediction's uncertainty of #1,
    23-42% chance each; ...``), then one line per bench worth running: its command, its cost and
    what is at stake. Nothing without a tie."""
    first = rec.best
    tied = [o for o in rec.options if o.tie]
    if first is None or not tied:
        return []
    chances = sorted(o.p_cheaper or 0.0 for o in tied)
    low, high = (f"{p * 100:.0f}" for p in (chances[0], chances[-1]))
    spread = f"{low}%" if low == high else f"{low}-{high}%"
    each = " each" if len(tied) > 1 else ""
    head = (
        f"{display.ranks([o.rank for o in tied])} "
        f"{'are' if len(tied) > 1 else 'is'} within the prediction's uncertainty of #1, "
        f"{spread} chance{each} to be really cheaper"
    )
    benches: dict[str, tuple[float, float]] = {}
    measured = 0
    for option in tied:
        if option.outcome.prediction.measured and first.outcome.prediction.measured:
            measured += 1
            continue
        args, cost = bench_args([first, option])
        command = f"advisor bench --model {rec.workload}{args}"
        stake = max(option.stake_usd, benches.get(command, (0.0, 0.0))[1])
        benches[command] = (cost, stake)
    worth = {c: v for c, v in benches.items() if v[1] >= v[0]}
    unsettled = [v[1] for c, v in benches.items() if c not in worth]
    if unsettled:
        head += (
            f"; benchmarking {'them' if len(unsettled) > 1 else 'it'} would cost more than "
            f"the {display.money(max(unsettled))} at stake"
        )
    if measured:
        head += f"; {measured} measured on both machines: a bench would not settle {'them' if measured > 1 else 'it'}"
    return [head + "."] + [
        f"worth settling: {command} (about {display.money(cost)}, {display.money(stake)} at stake)"
        for command, (cost, stake) in worth.items()
    ]
