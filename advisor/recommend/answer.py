"""The answer in words, before any table: which option, why, and what it costs against the
cheapest on-demand and the fastest option.

Plain strings (no rich, no textual): the command line prints them above its table, the app in its
summary, so both say the same.
"""

from __future__ import annotations

from advisor import display
from advisor.estimate.layout import Layout
from advisor.recommend.cells import cost_span, machine, pricing, time_span, time_words, where
from advisor.recommend.clusters import LINEAR_SCALING_LIMIT
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.recommendation import Option, Recommendation
from advisor.recommend.report import infeasible_lines
from advisor.workloads import stacks


def lines(rec: Recommendation) -> list[str]:
    """The answer: the chosen option and why, its time said plainly, and what it costs against
    the cheapest on-demand and the fastest option. Nothing feasible: what would be."""
    best = rec.best
    if best is None:
        if not rec.options:
            return [nothing_ranked(rec), *here_words(rec)]
        return [
            *infeasible_lines(rec),
            *[f"The {' and the '.join(labels)}: {summary(o)}." for labels, o in _alike(rec)],
            *here_words(rec),
        ]
    said = [
        f"Best: {where(best)} {machine(best)}, {pricing(best)}, {cost_span(best)}: "
        f"{_why(rec, best)}.",
        f"Time: {time_words(best)}.",
        *batch_words(best),
        *plan_words(best),
        *fallback_words(best),
    ]
    contrasts = _contrasts(rec, best)
    itself = [label for label, o in _contrasts(rec, None) if (label, o) not in contrasts]
    # said first and by its number, so that "itself" cannot be read as the option before it
    against = [f"#1 is itself the {' and the '.join(itself)} option"] if itself else []
    against += [_against(label, o, best) for label, o in contrasts]
    said.append(f"Against: {'; '.join(against)}.")
    return said + here_words(rec)


def here_words(rec: Recommendation) -> list[str]:
    """This machine, where its own probe predicts the training: free, and how long."""
    if rec.here_seconds is None:
        return []
    return [f"Here: this machine, free, in {describe_seconds(rec.here_seconds)}."]


METHOD_NAMES = {"lora": "LoRA", "qlora": "QLoRA"}


def plan_words(option: Option) -> list[str]:
    """An LLM job's plan as the answer says it: the stack, the method, the number type and the
    optimizer, and how a step spreads over the GPUs."""
    said = dict(option.outcome.prediction.environment)
    software = stacks.find(said.get("ADVISOR_STACK", ""))
    layout = option.outcome.prediction.layout
    if software is None or layout is None:
        return []
    method, rank = said.get("ADVISOR_METHOD", ""), said.get("ADVISOR_LORA_RANK", "")
    what = (
        "full fine-tuning"
        if method == "full"
        else f"{METHOD_NAMES.get(method, method)} rank {rank}"
    )
    optimizer = "8-bit AdamW" if said.get("ADVISOR_OPTIMIZER") == "adamw8bit" else "AdamW"
    if method == "full":
        optimizer += f" on {said.get('ADVISOR_WEIGHTS', '')} weights"
    return [
        f"Plan: {software.title} (--stack {software.id}), {what}, "
        f"{said.get('ADVISOR_PRECISION', '')}, {optimizer}; {_layout(layout)} "
        "(--explain compares stacks)."
    ]


SPREAD_WORDS = {"fsdp": "FSDP", "hsdp": "HSDP (FSDP within each node)", "zero1": "ZeRO-1"}
"""An LLM plan's sharding (``Layout.launcher_sharding``) as the answer says it."""


def _layout(layout: Layout) -> str:
    """``32 GPUs, tensor 4 x pipeline 2 x data 4, micro-batch 1 x 16 accumulated``."""
    text = f"{layout.gpus} GPU{'s' if layout.gpus != 1 else ''}"
    if layout.model_parallel > 1:
        text += f", tensor {layout.tensor} x pipeline {layout.pipeline} x data {layout.data}"
    elif layout.launcher_sharding in SPREAD_WORDS:
        text += f", {SPREAD_WORDS[layout.launcher_sharding]}"
    accumulated = f" x {layout.accumulation} accumulated" if layout.accumulation > 1 else ""
    return f"{text}, micro-batch {layout.micro_batch}{accumulated}"


def fallback_words(option: Option) -> list[str]:
    """What the plan runs other than asked (a precision the machine lacks, a smaller recipe)."""
    text = option.outcome.prediction.fallback
    return [f"Note: {display.plain(text)}."] if text else []


def nothing_ranked(rec: Recommendation) -> str:
    """Why no option is ranked: the offerings matched but this job runs on none of them (the
    commonest reason first), or none matched the filters."""
    left_out = sum(rec.excluded.values())
    if not left_out:
        return "No offering matches these filters."
    said = f"None of the {left_out:,} matching offerings can run this job"
    if len(rec.excluded) == 1:
        return f"{said}: {display.plain(next(iter(rec.excluded)))}."
    return f"{said} (--explain says why for each)."


def batch_words(option: Option) -> list[str]:
    """The batch a device and a step compute where the option splits the step over several
    devices or had to shrink it to fit, with what a grown global batch asks of the recipe."""
    p = option.outcome.prediction
    if not p.global_batch or (p.replicas <= 1 and not p.batch_note):
        return []
    text = f"Batch: {p.batch_per_device:g} per device"
    if p.replicas > 1:
        text += f" x {p.replicas} devices = {p.global_batch:,} a step"
    if p.batch_note:
        text += " (the largest that fits a device)"
    if p.batch_grown:
        text += (
            f"; it grows with the devices: scale the learning rate with it and warm up "
            f"(Goyal et al. 2017 kept ResNet-50's accuracy so to {LINEAR_SCALING_LIMIT:,})"
        )
        if p.global_batch > LINEAR_SCALING_LIMIT:
            text += ", past which it needs LARS or LAMB"
        text += "; --global-batch holds a recipe's"
    return [text + "."]


def summary(option: Option) -> str:
    """``gcp us-central1 n1-standard-4 (4 vCPU), spot*, 1.8-3.9 min, $0.0016-$0.0047``."""
    return (
        f"{where(option)} {machine(option)}, {pricing(option)}, {time_span(option)}, "
        f"{cost_span(option)}"
    )


def _against(label: str, option: Option, best: Option) -> str:
    """``the cheapest on-demand (#1's machine) costs $0.0056-$0.012 (3.5x) in 1.8-3.9 min``."""
    a, b = option.rentable, best.rentable
    same = (a.provider, a.region, a.instance_type) == (b.provider, b.region, b.instance_type)
    which = "#1's machine" if same else f"{where(option)} {machine(option)}"
    if option.rentable.pricing != "on_demand":
        which += f", {pricing(option)}"
    ratio = display.ratio(option.cost_usd / best.cost_usd) if best.cost_usd > 0 else "-"
    return f"the {label} ({which}) costs {cost_span(option)} ({ratio}) in {time_span(option)}"


def _why(rec: Recommendation, best: Option) -> str:
    c = rec.constraints
    what = "cheapest" if c.objective == "cheapest" else "fastest"
    that = []
    if c.deadline_seconds:
        that.append(f"finish within {describe_seconds(c.deadline_seconds)}")
    if c.budget_usd is not None:
        that.append(f"fit a ${c.budget_usd:,.2f} budget")
    text = f"the {what} of the {rec.feasible_count} offerings"
    text += f" that {' and '.join(that)}" if that else ""
    if c.deadline_seconds:
        text += f" ({display.chance(best.outcome.p_meet)} chance in time)"
    return text


def _alike(rec: Recommendation) -> list[tuple[list[str], Option]]:
    """The cheapest on-demand and the fastest options, one line for both when they are one."""
    said: list[tuple[list[str], Option]] = []
    for label, option in _contrasts(rec, None):
        same = [labels for labels, o in said if o.rentable == option.rentable]
        if same:
            same[0].append(label)
        else:
            said.append(([label], option))
    return said


def _contrasts(rec: Recommendation, best: Option | None) -> list[tuple[str, Option]]:
    """The cheapest on-demand and the fastest options, where they are not ``best`` itself."""
    found = [("cheapest on-demand", rec.cheapest_on_demand), ("fastest", rec.fastest)]
    return [
        (label, o)
        for label, o in found
        if o is not None and (best is None or o.rentable != best.rentable)
    ]
