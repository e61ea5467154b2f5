"""``advisor recommend``: the cheapest or fastest place to train (issue 6 builds the engine)."""

from __future__ import annotations

import click

from advisor.errors import AdvisorError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--model", "-m", required=True, help="Zoo id, alias (lstm, mlp, cnn, ...) or a .keras file."
)
@click.option("--deadline", help="Finish within this long: 8h, 90m, 2d, 1h30m, 45s.")
@click.option("--budget", type=float, help="Spend at most this many USD.")
def recommend(model: str, deadline: str | None, budget: float | None) -> None:
    """Recommend where to train MODEL: cheapest under a deadline, or fastest within a budget."""
    raise AdvisorError("recommend is not built yet (issue 6)")
