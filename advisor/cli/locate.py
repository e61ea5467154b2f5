"""``advisor locate``: where the database, cache, config and shipped data are."""

from __future__ import annotations

import click

from advisor import locations
from advisor.cli.output import emit, output_format


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument(
    "what", required=False, type=click.Choice(["database", "data", "cache", "config", "shipped"])
)
@output_format
def locate(what: str | None, fmt: str) -> None:
    """Print where advisor keeps its files (ADVISOR_HOME moves them all).

    With WHAT, print only that path, for scripts: `sqlite3 "$(advisor locate database)"`.
    """
    paths = {
        "database": locations.database_path(),
        "data": locations.data_dir(),
        "cache": locations.cache_dir(),
        "config": locations.config_path(),
        "shipped": locations.shipped_data_dir(),
    }
    if what:
        click.echo(str(paths[what]))
        return
    rows = [
        {"what": name, "path": str(path), "exists": path.exists()} for name, path in paths.items()
    ]
    emit(rows, fmt, title="advisor's files")
