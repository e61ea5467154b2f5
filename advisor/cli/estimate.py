"""``advisor devices`` and ``advisor validate`` (issue 5 builds the estimation layer)."""

from __future__ import annotations

import click

from advisor.errors import AdvisorError

_HELP = {"help_option_names": ["-h", "--help"]}


@click.command(context_settings=_HELP)
def devices() -> None:
    """List the device catalog: accelerators and CPU families with their specs and sources."""
    raise AdvisorError("devices is not built yet (issue 5)")


@click.command(context_settings=_HELP)
@click.option(
    "--reference", type=click.Path(dir_okay=False), help="Measurements in the reference format."
)
def validate(reference: str | None) -> None:
    """Check cross-device predictions against measured results."""
    raise AdvisorError("validate is not built yet (issue 5)")
