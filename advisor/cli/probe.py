"""``advisor probe``, ``advisor models``, ``advisor import`` (issue 4 builds the probes)."""

from __future__ import annotations

import click

from advisor.errors import AdvisorError

_HELP = {"help_option_names": ["-h", "--help"]}


@click.command(context_settings=_HELP)
@click.option("--model", "-m", required=True, help="Zoo id, alias or a .keras file.")
def probe(model: str) -> None:
    """Measure MODEL's training steps here and predict its full training time."""
    raise AdvisorError("probe is not built yet (issue 4)")


@click.command(context_settings=_HELP)
def models() -> None:
    """List the workload zoo with parameters, FLOPs per sample and default sizes."""
    raise AdvisorError("models is not built yet (issue 4)")


@click.command("import", context_settings=_HELP)
@click.argument("file", type=click.Path(dir_okay=False))
def import_results(file: str) -> None:
    """Import measured results (reference CSV format), e.g. a probe run on a cloud machine."""
    raise AdvisorError("import is not built yet (issue 4)")
