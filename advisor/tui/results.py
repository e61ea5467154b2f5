"""The recommendation views: a sortable table, the chosen option's explanation, cost vs time.

They render the ``advisor recommend --json`` payload (a stable contract), so the app shows exactly
what the command line prints.
"""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("rank", "#", 3),
    ("provider", "provider", 8),
    ("region", "region", 14),
    ("instance_type", "instance", 17),
    ("accelerator", "accel", 13),
    ("pricing", "pricing", 9),
    ("usd_per_hour", "$/h", 8),
    ("predicted_hours", "hours p50", 9),
    ("predicted_hours_p90", "p90", 8),
    ("cost_usd", "cost p50", 9),
    ("cost_usd_p90", "cost p90", 9),
    ("p_meet_deadline", "P(deadline)", 11),
)
"""Key in the ``--json`` payload, header, width. Fixed widths: the table keeps its shape while it
re-ranks (and renders the same at any moment, which the snapshot tests rely on)."""


def cell(key: str, option: dict[str, Any]) -> str | float | int:
    """Sortable cell value: numbers stay numbers, the accelerator shows its count."""
    value = option.get(key)
    if key == "accelerator":
        count = option.get("accelerator_count") or 0
        shown = f"{value} x{count}" if value else "CPU"
        return f"{shown} \u2713" if option.get("measured") else shown  # a check: measured there
    if value is None:
        return "-"
    if isinstance(value, float):
        return round(value, 3)
    return value


class ResultsTable(DataTable[Any]):
    """Ranked options; click a header (or press s) to sort by that column."""

    BINDINGS = [("s", "cycle_sort", "Sort")]  # noqa: RUF012

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for key, label, width in COLUMNS:
            self.add_column(label, key=key, width=width)
        self._sort_index = 0
        self._reverse = False

    def show(self, options: list[dict[str, Any]]) -> None:
        self.clear()
        for option in options:
            self.add_row(*(cell(key, option) for key, _, _ in COLUMNS), key=str(option["rank"]))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self._sort_by(str(event.column_key.value))

    def action_cycle_sort(self) -> None:
        self._sort_index = (self._sort_index + 1) % len(COLUMNS)
        self._sort_by(COLUMNS[self._sort_index][0])

    def _sort_by(self, key: str) -> None:
        self._reverse = not self._reverse if getattr(self, "_last_key", None) == key else False
        self._last_key = key
        self.sort(key, key=_sort_key, reverse=self._reverse)


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


class ExplainPanel(Static):
    """The highlighted option, walked through: measurement, scaling, preemption, billing, cost."""

    def explain(self, option: dict[str, Any] | None, lines: list[str]) -> None:
        if option is None:
            self.update("Select an option to see why.")
            return
        head = (
            f"[b]#{option['rank']} {option['provider']} {option['region']} "
            f"{option['instance_type']}[/b] ({option['pricing']})"
        )
        self.update("\n".join([head, "", *lines]))


class CostTimePlot(PlotextPlot):
    """Expected cost against predicted time for every candidate, the Pareto front and the deadline."""

    def show(self, payload: dict[str, Any]) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        options = payload.get("options", [])
        if not options:
            self.refresh()
            return
        plt.scatter(
            [o["predicted_hours"] for o in options],
            [o["cost_usd"] for o in options],
            marker="dot",
            label="options",
        )
        front = pareto_front(options)
        if front:
            plt.plot(
                [o["predicted_hours"] for o in front],
                [o["cost_usd"] for o in front],
                marker="braille",
                label="Pareto front",
            )
        deadline = payload.get("deadline_hours")
        if deadline:
            plt.vline(deadline)
        plt.xlabel("predicted hours (p50)")
        plt.ylabel("expected cost USD")
        plt.title("cost vs time")
        self.refresh()


def pareto_front(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Options no other option beats on both time and cost, by increasing time."""
    front: list[dict[str, Any]] = []
    for option in sorted(options, key=lambda o: (o["predicted_hours"], o["cost_usd"])):
        if not front or option["cost_usd"] < front[-1]["cost_usd"]:
            front.append(option)
    return front
