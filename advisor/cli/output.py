"""One output switch for every command that prints rows: ``--table`` (default), ``--json``, ``--csv``.

``--json`` and ``--csv`` are contracts for scripts: plain values, stable keys, nothing decorative.
The table is for people and is drawn with rich (imported only when a table is drawn).
"""

from __future__ import annotations

import csv
import functools
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from advisor import display
from advisor.errors import AdvisorError

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("table", "json", "csv")


def output_format(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--table/--json/--csv`` to a command; it receives the choice as ``fmt``."""

    @click.option(
        "--table", "fmt", flag_value="table", default=True, help="Print a table (default)."
    )
    @click.option("--json", "fmt", flag_value="json", help="Print JSON for scripts.")
    @click.option("--csv", "fmt", flag_value="csv", help="Print CSV for spreadsheets.")
    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return command(*args, **kwargs)

    return wrapper


def emit(
    rows: Sequence[dict[str, Any]],
    fmt: str,
    *,
    columns: Sequence[str] | None = None,
    title: str | None = None,
    payload: Any = None,
) -> None:
    """Print ``rows`` in ``fmt``. ``payload`` replaces the rows in JSON output when given.

    Every string passes ``display.plain`` on every format (catalog names are untrusted), and a
    CSV cell a spreadsheet would run as a formula is neutralised (``display.csv_cell``)."""
    columns = list(columns or (rows[0].keys() if rows else []))
    if fmt == "json":
        click.echo(strict_json(display.plain_tree(payload if payload is not None else list(rows))))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow([display.csv_cell(column) for column in columns])
        for row in rows:
            writer.writerow([display.csv_cell(row.get(column)) for column in columns])
    else:
        _table(rows, columns, title)


COUNTED = frozenset({"parameters", "train_flops_per_sample", "samples", "validation_samples"})
"""Columns whose large counts a table shows as ``670k``, ``1.2M`` (JSON and CSV keep them whole)."""
GAP = 3
"""Characters between two columns of a table: a space each side and the (blank) rule."""
HEADERS = {
    "accelerator_count": "n", "usd_per_hour": "$/h", "memory_gib": "GiB", "vcpus": "vCPU",
    "instance_type": "instance", "accelerator": "accel", "batch_size": "batch",
    "step_seconds": "step", "fit_seconds": "fit", "interval_80": "80% interval",
    "startup_seconds": "start-up", "probe_seconds": "probe", "validation_samples": "val samples",
    "train_flops_per_sample": "FLOPs/sample", "extrapolated_from": "extrapolated from",
}  # fmt: skip
"""Short headers a table shows (JSON and CSV keep the keys)."""


def _table(rows: Sequence[dict[str, Any]], columns: list[str], title: str | None) -> None:
    """A table as wide as the terminal: the columns in the caller's order of importance, each
    whole; those that do not fit are left out from the last, and said (a cell is never cut)."""
    from rich import box
    from rich.table import Table

    out = console()
    texts = {c: [display.plain(_cell(row.get(c), c)) for row in rows] for c in columns}
    headers = {c: HEADERS.get(c, c.replace("_", " ")) for c in columns}
    widths = {c: max([len(headers[c]), *map(len, texts[c])]) for c in columns}
    shown = list(columns)
    while len(shown) > 1 and sum(widths[c] for c in shown) + GAP * (len(shown) - 1) > out.width:
        shown.pop()
    table = Table(
        title=display.escape(title) if title else None, header_style="bold",
        box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1),
    )  # fmt: skip
    for column in shown:  # one line a row; a lone column wider than the screen folds
        table.add_column(headers[column], no_wrap=len(shown) > 1, overflow="fold")
    for row in rows:
        table.add_row(*(display.safe_text(_cell(row.get(column), column)) for column in shown))
    out.print(table)
    hidden = [headers[c] for c in columns if c not in shown]
    if hidden:
        click.echo(f"hidden at {out.width} columns: {', '.join(hidden)} (--json shows all)")


def strict_json(value: Any) -> str:
    """``value`` as strict JSON (RFC 8259: no NaN or Infinity, which many parsers refuse).

    The engine never produces a non-finite number; if one slips through, the command fails with
    one line rather than printing JSON that a script cannot read.
    """
    try:
        return json.dumps(value, indent=2, default=str, allow_nan=False)
    except ValueError as exc:
        raise AdvisorError(f"cannot print JSON: {exc}") from None


PIPED_WIDTH = 400
"""Columns a table may take when stdout is not a terminal: logs and files are never cut."""


def console() -> Console:
    """The console tables print on: the terminal's width, or wide enough when piped."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console()
    return Console(width=PIPED_WIDTH, soft_wrap=False)


def _cell(value: Any, column: str = "") -> str:
    """A value for people: money, rates and durations by the column's name, as everywhere."""
    if value is None:
        return "-"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if column.endswith("usd_per_hour") or column.endswith("_per_hour_usd"):
            return display.rate(float(value))
        if column.endswith("_usd") or column == "usd":
            return display.money(float(value))
        if column.endswith("_seconds"):
            return display.duration(float(value))
        if column.endswith("_hours"):
            return display.duration(float(value) * 3600)
        if column in COUNTED:
            return display.count(float(value))
    if column == "interval_80" and isinstance(value, list | tuple) and len(value) == 2:
        low, high = (_cell(v, "_seconds") for v in value)  # beside a duration, a span of them
        return f"{low}-{high}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
