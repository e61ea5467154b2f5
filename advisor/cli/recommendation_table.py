"""How a recommendation looks to people: rich tables and lines, shared by the CLI and the app."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from advisor import display
from advisor.bench import plan as bench_plan
from advisor.recommend.deadline import describe_seconds
from advisor.recommend.recommendation import Option, Recommendation
from advisor.recommend.report import explain, fallback_words, infeasible_lines, spot_risk_words


def _hours(option: Option) -> str:
    """``4.1-4.9 h``: both ends in the unit that suits the upper one."""
    return display.duration_span(option.outcome.p50_seconds, option.outcome.p90_seconds)


def _cost(option: Option) -> str:
    return display.money_span(option.cost_usd, option.cost_usd_p90)


def device(option: Option) -> str:
    r = option.rentable
    return display.machine(r.accelerator, r.accelerator_count, r.vcpus)


_MEASURED = ", measured"
"""Marks an option whose time was measured on its device rather than predicted."""


def _measured(option: Option) -> bool:
    return option.outcome.prediction.measured


def spot_risk(option: Option) -> str:
    """``~6 interruptions expected (spot traces, AWS V100 Apr 2023)``: the measured risk in words."""
    if option.rentable.pricing != "spot":
        return "-"
    text = spot_risk_words(option.outcome)
    if option.outcome.cap_restarts:
        text += f", {option.outcome.cap_restarts} forced restarts"
    return text


def render_options(
    options: Sequence[Option], *, title: str | None = None, with_deadline: bool = True
) -> Table:
    """The ranked options as a table: time and cost as p50-p90, spot risk under the pricing."""
    table = Table(
        title=title,
        header_style="bold",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    columns = ["#", "where", "machine", "pricing", "$/h", "time", "cost"]
    columns += ["meet"] if with_deadline else []
    for name in columns:
        right = name in {"#", "$/h", "time", "cost", "meet"}
        table.add_column(
            name,
            justify="right" if right else "left",
            no_wrap=name not in {"where", "machine", "pricing"},
            min_width={"machine": 12, "pricing": 9}.get(name),
        )
    for option in options:
        r = option.rentable
        pricing = r.pricing.replace("_", "-")
        if r.pricing == "spot":
            pricing += f" {spot_risk(option)}"
        elif option.outcome.fallback is not None:
            pricing = f"spot, on-demand fallback ({fallback_words(option.outcome)})"
        cells: list[str | Text] = [
            str(option.rank) if option.rank else "",
            display.safe_text(f"{r.provider} {r.region}"),
            display.safe_text(f"{r.instance_type or '-'} ({device(option)})")
            + (_MEASURED if _measured(option) else ""),
            display.safe_text(pricing),
            display.rate(r.usd_per_hour),
            _hours(option),
            _cost(option),
        ]
        if with_deadline:
            cells.append(display.chance(option.outcome.p_meet))
        table.add_row(*cells, style=None if option.feasible else "dim")
    return table


def render_reasons(options: Sequence[Option]) -> Text:
    """One line of why per ranked option."""
    return display.safe_text("\n".join(f"#{o.rank} {o.why}" for o in options if o.rank and o.why))


def _bench_args(options: Sequence[Option]) -> tuple[str, float]:
    """``--gpus T4 --cpus 4`` for the devices of ``options`` (a probe runs on one device), and
    the bench's expected cost at these options' prices (``advisor.bench.plan``'s running time:
    provisioning, setup, the probe)."""
    gpus: dict[str, float] = {}
    cpus: dict[int, float] = {}
    for o in options:
        r = o.rentable
        if r.accelerator:
            gpus[r.accelerator] = min(gpus.get(r.accelerator, math.inf), r.usd_per_hour)
        else:
            vcpus = round(r.vcpus or 0)
            cpus[vcpus] = min(cpus.get(vcpus, math.inf), r.usd_per_hour)
    base = bench_plan.PROVISION_SECONDS + bench_plan.PROBE_OVERHEAD_SECONDS + 20.0
    cost = sum(p * (base + bench_plan.SETUP_SECONDS["gpu"]) / 3600 for p in gpus.values())
    cost += sum(p * (base + bench_plan.SETUP_SECONDS["cpu"]) / 3600 for p in cpus.values())
    args = (f" --gpus {','.join(gpus)}" if gpus else "") + (
        f" --cpus {','.join(map(str, cpus))}" if cpus else ""
    )
    if all(o.rentable.pricing != "on_demand" for o in options):
        args += " --spot"
    return args, cost


def settle_lines(rec: Recommendation) -> list[str]:
    """For each tie with #1: what would settle it, and whether it is worth its cost."""
    first = rec.best
    if first is None:
        return []
    lines = []
    for option in rec.options:
        if not option.tie:
            continue
        head = f"#{option.rank} ties with #1: {option.p_cheaper:.0%} chance it is really cheaper"
        stake = display.money(option.stake_usd)
        if option.outcome.prediction.measured and first.outcome.prediction.measured:
            lines.append(
                f"{head}; both were measured: a bench would not settle it ({stake} at stake)"
            )
            continue
        args, cost = _bench_args([first, option])
        command = f"advisor bench --model {rec.workload}{args}"
        worth = option.stake_usd >= cost
        lines.append(
            f"{head}; {command} (about {display.money(cost)}) would settle it"
            + (
                f": worth it, {stake} expected overpay at stake"
                if worth
                else f", but it costs more than the {stake} at stake: not worth it"
            )
        )
    return lines


def render_recommendation(rec: Recommendation, *, pareto: bool = False) -> list[Table | Text]:
    """Everything ``advisor recommend`` prints as a table, in order."""
    c = rec.constraints
    with_deadline = c.deadline_seconds is not None
    goal = f"{c.objective}"
    if c.deadline_seconds:
        goal += f", deadline {describe_seconds(c.deadline_seconds)}"
    if c.budget_usd is not None:
        goal += f", budget ${c.budget_usd:,.2f}"
    title = display.escape(
        f"{rec.workload}: {goal}; {rec.feasible_count} of {rec.considered} offerings qualify"
        " (time and cost: p50-p90)"
    )
    parts: list[Table | Text] = [
        render_options(rec.options, title=title, with_deadline=with_deadline),
        render_reasons(rec.options),
    ]
    for line in settle_lines(rec):
        parts.append(display.safe_text(line, style="yellow"))
    for line in infeasible_lines(rec):
        parts.append(display.safe_text(line, style="bold yellow"))
    contrast = [
        ("fastest", rec.fastest),
        ("cheapest on-demand", rec.cheapest_on_demand),
    ]
    for label, option in contrast:
        if option is not None:
            parts.append(display.safe_text(f"{label}: {_summary(option)}"))
    if pareto and rec.pareto:
        parts.append(
            render_options(rec.pareto, title="Cost/time frontier", with_deadline=with_deadline)
        )
    if rec.excluded:
        left_out = "; ".join(f"{count} {reason}" for reason, count in sorted(rec.excluded.items()))
        parts.append(display.safe_text(f"left out: {left_out}", style="dim"))
    return parts


def render_explanation(rec: Recommendation, option: Option) -> Text:
    """``--explain``: the chosen option walked through."""
    return display.safe_text("\n".join(explain(rec, option)))


def _summary(option: Option) -> str:
    r = option.rentable
    return (
        f"{r.provider} {r.region} {r.instance_type or '-'} {device(option)} "
        + ("(measured) " if _measured(option) else "")
        + f"{r.pricing.replace('_', '-')}, {_hours(option)}, "
        f"{_cost(option)}"
        + (f", {display.chance(option.outcome.p_meet)} on time" if option.rank == 0 else "")
    )
