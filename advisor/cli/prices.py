"""``advisor prices``: list, show, history and refresh cloud prices (issue 3 builds them)."""

from __future__ import annotations

import click

from advisor.errors import AdvisorError

_HELP = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=_HELP, invoke_without_command=True)
@click.pass_context
def prices(ctx: click.Context) -> None:
    """Cloud prices: what each source holds, how old it is; list, show, refresh."""
    if ctx.invoked_subcommand is None:
        raise AdvisorError("prices is not built yet (issue 3)")


@prices.command("list", context_settings=_HELP)
def list_prices() -> None:
    """List offerings and their latest prices, filtered."""
    raise AdvisorError("prices list is not built yet (issue 3)")


@prices.command(context_settings=_HELP)
@click.argument("instance")
def show(instance: str) -> None:
    """Show every price of INSTANCE (all regions, pricing models)."""
    raise AdvisorError("prices show is not built yet (issue 3)")


@prices.command(context_settings=_HELP)
@click.argument("instance")
def history(instance: str) -> None:
    """Show how INSTANCE's prices changed over refreshes."""
    raise AdvisorError("prices history is not built yet (issue 3)")


@prices.command(context_settings=_HELP)
def refresh() -> None:
    """Fetch current prices from the public sources."""
    raise AdvisorError("prices refresh is not built yet (issue 3)")
