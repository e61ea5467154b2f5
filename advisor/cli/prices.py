"""``advisor prices``: what each price source holds and how old it is; list, show, history, refresh.

A thin layer over ``pricing``: the engine answers, this module prints (tables with rich, or
``--json``/``--csv`` for scripts). The ``--json`` of ``prices list`` is a stable contract: one
object per machine with every ``pricing.offers.Rentable`` field (provider, region,
instance_type, accelerator, accelerator_count, pricing, usd_per_hour, fetched_at, source, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from advisor import config, display
from advisor.cli.numbers import BoundedInt, FiniteFloat
from advisor.cli.output import emit, output_format
from advisor.errors import AdvisorError

if TYPE_CHECKING:
    from pricing.refresh import RefreshProgress

_HELP = {"help_option_names": ["-h", "--help"]}

LIST_COLUMNS = (
    "provider",
    "region",
    "instance_type",
    "accelerator",
    "accelerator_count",
    "pricing",
    "usd_per_hour",
    "vcpus",
    "memory_gib",
)
SHOW_COLUMNS = (
    "provider",
    "region",
    "accelerator",
    "accelerator_count",
    "pricing",
    "usd_per_hour",
    "host_usd_per_hour",
    "accelerator_usd_per_hour",
    "interruptions_per_hour",
)


@click.group(context_settings=_HELP, invoke_without_command=True)
@click.option(
    "--ttl-days",
    type=FiniteFloat(0, 36_500, low_open=True),
    help="Call data older than this stale (default: config, 7 days).",
)
@output_format
@click.pass_context
def prices(ctx: click.Context, ttl_days: float | None, fmt: str) -> None:
    """Cloud prices: what each source holds (providers, offerings), how old; list, show, refresh."""
    if ctx.invoked_subcommand is not None:
        return
    from advisor import service

    ttl = ttl_days if ttl_days is not None else config.load().prices_ttl_days
    statuses = service.source_status(ttl)
    rows = [
        {
            "source": s.source,
            "cloud": s.unit,
            "providers": ", ".join(s.providers),
            "offerings": s.offerings,
            "last_success": s.last_success,
            "age_days": round(s.age_days, 2) if s.age_days is not None else None,
            "stale": s.stale,
            "last_status": s.last_status,
            "last_error": s.last_error,
        }
        for s in statuses
    ]
    emit(rows, fmt, title=f"Price sources (stale after {ttl:g} days)")
    for s in statuses:
        if s.stale:
            age = f"{s.age_days:.1f} days old" if s.age_days is not None else "never refreshed"
            click.echo(
                f"advisor: warning: {s.source}/{s.unit} prices are stale ({age}); "
                "run 'advisor prices refresh'",
                err=True,
            )


@prices.command("list", context_settings=_HELP)
@click.option("--provider", help="gcp, aws, azure, lambda, runpod, vast, ... (any case).")
@click.option("--region", help="e.g. us-central1.")
@click.option("--accelerator", help="As catalogs spell it: T4, A100-80GB, tpu-v3-8 (any case).")
@click.option("--min-count", type=BoundedInt(0, 100_000), help="At least this many accelerators.")
@click.option("--max-count", type=BoundedInt(0, 100_000), help="At most this many accelerators.")
@click.option("--spot", "pricing", flag_value="spot", help="Spot / preemptible prices only.")
@click.option("--on-demand", "pricing", flag_value="on_demand", help="On-demand prices only.")
@click.option("--cpu-only", is_flag=True, help="Machines without accelerators.")
@click.option("--max-price", type=FiniteFloat(0, 1e6), help="At most this many USD per hour.")
@click.option("--limit", type=BoundedInt(1), help="Show only the cheapest N.")
@output_format
def list_prices(
    provider: str | None,
    region: str | None,
    accelerator: str | None,
    min_count: int | None,
    max_count: int | None,
    pricing: str | None,
    cpu_only: bool,
    max_price: float | None,
    limit: int | None,
    fmt: str,
) -> None:
    """List rentable machines and their latest prices, cheapest first."""
    from advisor import service
    from pricing.offers import Filters

    wanted = Filters(
        provider, region, accelerator, pricing, cpu_only, min_count, max_count, max_price
    )
    found = service.price_rows(wanted, limit=limit)
    rows = [rentable._asdict() for rentable in found]
    columns = LIST_COLUMNS if fmt == "table" else (list(rows[0]) if rows else LIST_COLUMNS)
    emit(rows, fmt, columns=columns, title=f"{len(rows)} rentable machines (USD/hour)")


def _named(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """An instance or accelerator name: not empty, not blank."""
    if not value.strip():
        raise click.BadParameter("give an instance type or accelerator name, not an empty one")
    return value


@prices.command(context_settings=_HELP)
@click.argument("instance", callback=_named)
@output_format
def show(instance: str, fmt: str) -> None:
    """Show every price of INSTANCE (all regions, pricing models; GPUs a host can carry)."""
    from advisor import service

    rows = [rentable._asdict() for rentable in service.machines(instance)]
    columns = SHOW_COLUMNS if fmt == "table" else list(rows[0])
    emit(rows, fmt, columns=columns, title=instance)


@prices.command(context_settings=_HELP)
@click.argument("instance", callback=_named)
@output_format
def history(instance: str, fmt: str) -> None:
    """Show how INSTANCE's prices changed over refreshes (or an attachable GPU's, e.g. T4)."""
    from dataclasses import asdict

    from advisor import service

    rows = [asdict(point) for point in service.price_history(instance)]
    emit(rows, fmt, title=f"Price history of {instance}")


@prices.command(context_settings=_HELP)
@click.option(
    "--source",
    "sources",
    multiple=True,
    help="skypilot, azure-retail, aws-spot-advisor, gcp-billing (needs ADVISOR_GCP_API_KEY); "
    "NAME/CLOUD picks one cloud, e.g. skypilot/gcp; repeat for several. Default: all that "
    "need no key, plus gcp-billing when its key is set.",
)
@click.option(
    "--url",
    help="Base URL of the first --source (default source: the SkyPilot catalog); "
    "also env ADVISOR_SKYPILOT_CATALOG_URL and [sources] in config.toml.",
)
@click.option(
    "--allow-shrink",
    is_flag=True,
    help="Store a catalog even when it would retire more than half of a source's prices "
    "(refused by default: an empty or broken catalog looks just like that).",
)
def refresh(sources: tuple[str, ...], url: str | None, allow_shrink: bool) -> None:
    """Fetch current prices from the public sources (one transaction per source and cloud)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    from advisor import service

    urls = {}
    if url:
        target = sources[0].partition("/")[0] if sources else "skypilot"
        urls[target] = url
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description:<24}"),
        BarColumn(),
        TextColumn("{task.fields[phase]}"),
        console=console,
    ) as bar:
        tasks: dict[str, Any] = {}

        def on_progress(event: RefreshProgress) -> None:
            name = f"{event.source}/{event.unit}"
            if name not in tasks:
                tasks[name] = bar.add_task(name, total=None, phase="")
            done, total = event.done, event.total
            if event.phase in ("done", "failed"):
                done = total = 1
            bar.update(tasks[name], completed=done, total=total, phase=_phase(event))

        reports = service.refresh_prices(
            list(sources) or None, urls=urls, progress=on_progress, allow_shrink=allow_shrink
        )
    for report in reports:
        if report.status == "ok":
            click.echo(
                f"{report.source}/{report.unit}: ok, {report.added} added, {report.changed} "
                f"changed, {report.unchanged} unchanged, {report.skipped} skipped, "
                f"{report.removed} retired{_unmapped(report.unmapped)}"
            )
    failed = [r for r in reports if r.status != "ok"]
    if failed:
        detail = "; ".join(f"{r.source}/{r.unit}: {_why(r)}" for r in failed)
        raise AdvisorError(
            f"{len(failed)} of {len(reports)} price sources failed, their previous prices "
            f"are kept: {detail}"
        )


NAME_CHARS = 40
"""Longest accelerator name the refresh summary shows whole (a catalog's names are short; a
hostile one of 5,000 characters is shown by its ends and length)."""


def _unmapped(unmapped: tuple[tuple[str, int], ...]) -> str:
    """``; 7 offerings of 3 accelerators without a device (no prediction): RTX4090, ...``."""
    if not unmapped:
        return ""
    offerings = sum(count for _, count in unmapped)
    names = ", ".join(display.plain(display.cut(name, NAME_CHARS)) for name, _ in unmapped[:6])
    more = f" and {len(unmapped) - 6} more" if len(unmapped) > 6 else ""
    count = len(unmapped)
    return (
        f"; {offerings} offering{'s' * (offerings != 1)} of {count} "
        f"accelerator{'s' * (count != 1)} without a device (no prediction): {names}{more}"
    )


def _why(report: Any) -> str:
    """A failed report's error; a refused one says how to accept it."""
    if report.status == "refused":
        return f"refused: {report.error}; prices unchanged; --allow-shrink accepts it"
    return str(report.error)


def _phase(event: RefreshProgress) -> str:
    """``downloading 9.4 MB``, ``writing 50,000 / 100,000 rows``, ``done``."""
    if event.what == "bytes":
        return f"downloading {event.done / 1e6:.1f} MB"
    if event.what == "pages":
        return f"downloading page {event.done}"
    if event.what == "rows":
        return f"writing {event.done:,} / {event.total:,} rows"
    return str(event.phase)
