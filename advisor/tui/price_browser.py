"""The prices screen: browse and filter the price table, see each source's age, refresh in place."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label

from advisor import display
from advisor.tui import actions
from advisor.tui.messages import PricesLoaded, PricesRefreshed, RefreshProgressed

PRICE_COLUMNS = ("provider", "region", "instance_type", "accelerator", "accelerator_count",
                 "pricing", "usd_per_hour", "fetched_at")  # fmt: skip
SOURCE_COLUMNS = ("source", "status", "age", "note")


class PricesScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        ("escape", "app.pop_screen", "Back"),
        ("ctrl+r", "refresh_prices", "Refresh prices"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            with Horizontal(id="prices-filter"):
                yield Input(placeholder="provider", id="f-provider")
                yield Input(placeholder="region", id="f-region")
                yield Input(placeholder="accelerator", id="f-accelerator")
                yield Input(placeholder="max $/h", id="f-max-price", type="number")
            yield Label("", id="prices-status")
            yield Label("", id="prices-error")
            yield DataTable(id="sources")
            yield DataTable(id="prices")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#sources", DataTable).add_columns(*SOURCE_COLUMNS)
        table = self.query_one("#prices", DataTable)
        table.cursor_type = "row"
        table.zebra_stripes = True
        table.add_columns(*PRICE_COLUMNS)
        self.load()

    def filters(self) -> dict[str, str]:
        return {
            name: self.query_one(f"#f-{name}", Input).value.strip()
            for name in ("provider", "region", "accelerator", "max-price")
        }

    @on(Input.Changed)
    def filter_changed(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="prices-load")
    def load(self) -> None:
        try:
            rows = actions.price_rows(self.filters())
            sources = actions.source_rows()
            error = ""
        except Exception as exc:  # one line in place; the table keeps what it showed
            rows, sources, error = None, None, actions.one_line(exc)
        self.post_message(PricesLoaded(rows, sources, error))

    def on_prices_loaded(self, message: PricesLoaded) -> None:
        rows, sources = message.rows, message.sources
        self.query_one("#prices-error", Label).update(display.safe_text(message.error))
        if sources is not None:
            table = self.query_one("#sources", DataTable)
            table.clear()
            for source in sources:
                table.add_row(*(display.safe_text(source.get(c, "")) for c in SOURCE_COLUMNS))
        if rows is not None:
            table = self.query_one("#prices", DataTable)
            table.clear()
            for row in rows:
                table.add_row(*(display.safe_text(_fmt(row.get(c), c)) for c in PRICE_COLUMNS))

    def action_refresh_prices(self) -> None:
        self.query_one("#prices-status", Label).update("Refreshing prices...")
        self.refresh_worker()

    @work(thread=True, exclusive=True, group="prices-refresh")
    def refresh_worker(self) -> None:
        def progress(source: str, done: int, total: int | None, note: str = "") -> None:
            self.post_message(RefreshProgressed(source, done, total, note))

        try:
            reports = actions.refresh_prices(progress)
            self.post_message(PricesRefreshed(reports))
        except Exception as exc:
            self.post_message(PricesRefreshed([], error=actions.one_line(exc)))

    def on_refresh_progressed(self, message: RefreshProgressed) -> None:
        total = f"/{message.total}" if message.total else ""
        self.query_one("#prices-status", Label).update(
            display.safe_text(f"Refreshing {message.source}: {message.done}{total} {message.note}")
        )

    def on_prices_refreshed(self, message: PricesRefreshed) -> None:
        failed = [r for r in message.reports if getattr(r, "error", None)]
        if message.error:
            text = f"Refresh failed: {message.error}"
        elif failed:
            text = "Refresh failed (previous prices kept): " + "; ".join(
                f"{r.source}/{r.unit}: {r.error}" for r in failed
            )
        else:
            text = f"Refreshed {len(message.reports)} source(s)."
        self.query_one("#prices-status", Label).update(display.safe_text(text))
        self.load()


def _fmt(value: Any, column: str = "") -> str:
    if value is None:
        return "-"
    if column == "usd_per_hour" and isinstance(value, int | float):
        return display.rate(float(value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
