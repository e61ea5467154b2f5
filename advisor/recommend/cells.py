"""One option in short cells, the same on the command line and in the app: where, the machine's
essentials, the way to pay (``spot``, ``on-demand``, ``spot, fallback``, marked where the spot
risk is a stand-in), time, wait for spot capacity and cost; and its time said plainly.

Plain strings (no rich, no textual); the detail behind a cell (the trace of a spot figure, its
stand-in, the fallback's switch rule) is in ``report.explain`` and the JSON.
"""

from __future__ import annotations

from collections.abc import Sequence

from advisor import display
from advisor.estimate import catalog
from advisor.recommend import staging
from advisor.recommend.recommendation import Option

PRICING = {"on_demand": "on-demand", "spot": "spot", "spot_fallback": "spot, fallback"}
"""The way to pay in a cell: spot with an on-demand fallback is ``spot, fallback``."""
STAND_IN = "*"
"""Marks a spot figure whose risk rests on another cloud's or accelerator's trace."""
MEASURED = "\u2713"
"""Marks a time measured on that very machine (``advisor bench``), not predicted."""


def where(option: Option) -> str:
    return display.plain(f"{option.rentable.provider} {option.rentable.region}")


def machine(option: Option) -> str:
    """``g4dn.xlarge (T4)``, ``4x p4d.24xlarge (A100 x8)`` for a cluster, with ``MEASURED``
    after it where the time was measured there."""
    r = option.rentable
    device = r.accelerator and catalog.device_as_sold(r.provider, r.instance_type, r.accelerator)
    label = display.machine_label(r.instance_type, device, r.accelerator_count, r.vcpus)
    if r.nodes > 1:
        label = f"{r.nodes}x {label}"
    return f"{label} {MEASURED}" if option.outcome.prediction.measured else label


def stand_in(option: Option) -> bool:
    """Whether the option's spot risk was measured on another cloud or accelerator."""
    risk = option.outcome.spot_risk
    return risk is not None and bool(risk.stand_in)


def pricing(option: Option) -> str:
    """``on-demand``, ``spot`` or ``spot, fallback``, marked ``STAND_IN`` where it applies."""
    word = PRICING.get(option.rentable.pricing, option.rentable.pricing)
    return word + (STAND_IN if stand_in(option) else "")


def time_span(option: Option) -> str:
    """p50-p90 of the time on machines (what is billed): the training plus what interruptions
    add, without the waits for a spot machine."""
    return display.duration_span(*option.outcome.machine_seconds)


def wait(option: Option) -> str:
    """The expected wait for spot capacity (``~34 min``), ``-`` where there is none."""
    seconds = option.outcome.expected_wait_seconds
    return display.about(seconds) if seconds >= 1 else "-"


def cost_span(option: Option) -> str:
    return display.money_span(option.cost_usd, option.cost_usd_p90)


def stand_in_note(options: Sequence[Option], *, detail: str = "--explain") -> str | None:
    """The meaning of ``STAND_IN``, one line, when a shown option carries it (``detail``: where
    the trace and why it stands in are told)."""
    if not any(stand_in(o) for o in options):
        return None
    return f"{STAND_IN} stand-in spot risk: another cloud's or accelerator's trace ({detail})"


def overhead_words(option: Option) -> str:
    """`` (start, set-up and 150 GB of data, ~22 min, in it)``: what the training's time holds
    besides training, billed (`` (the machine's start, ~70 s, in it)`` when that is all); empty
    when it is under a second."""
    result = option.outcome
    parts = {
        "start": result.boot_seconds,
        "set-up": result.setup_seconds,
        f"{staging.describe_size(result.data_bytes)} of data": result.staging_seconds,
        "checkpoints": result.checkpointing_seconds,
    }
    named = [name for name, seconds in parts.items() if seconds > 0]
    total = sum(parts.values())
    if total < 1:
        return ""
    if named == ["start"]:
        named = ["the machine's start"]
    said = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
    return f" ({said}, {display.about(total)}, in it)"


def time_words(option: Option) -> str:
    """``1.8-3.9 min of training (the machine's start, ~1.7 min, in it) + ~34 min waiting for a
    spot VM (not billed); ~0.1 interruptions add ~35 s; 9 runs in 10 end within 1.8 h``."""
    result = option.outcome
    text = f"{display.duration_span(*result.training_seconds)} of training"
    text += overhead_words(option)
    if result.spot_risk is None:
        return text + ", on-demand: no wait, no interruption"
    if result.expected_wait_seconds >= 1:
        text += f" + {wait(option)} waiting for a spot VM (not billed)"
    count = result.expected_preemptions
    if count >= 0.05:
        shown = f"~{count:.0f}" if count >= 1.5 else f"~{count:.1f}"
        text += (
            f"; {shown} interruption{'' if shown == '~1' else 's'} "
            f"add {display.about(result.expected_delay_seconds)} (lost work, restarts)"
        )
    else:
        text += "; no interruption expected"
    if result.fallback is not None:
        text += f"; {result.fallback.on_demand_share:.0%} of the machine time on on-demand"
    return text + f"; 9 runs in 10 end within {display.duration(result.p90_seconds)}"
