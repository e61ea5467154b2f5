"""The advisor terminal app: pick a workload, watch it probed, compare where to train.

Presentation only: every number comes from the engine through ``advisor.tui.actions``. Blocking
work (probes, recommendations, price queries and refreshes) runs in thread workers that post
messages back, so the interface never freezes. A probe runs in a child process
(``probes.child``): TensorFlow never enters the app's process, so its logging never reaches the
screen, cancelling and quitting are immediate, and a crashed probe is a message.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.timer import Timer
from textual.widgets import (
    Footer,
    Header,
    Input,
    Label,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
)

from advisor import display
from advisor.recommend import columns
from advisor.tui import actions
from advisor.tui.form import FormState, WorkloadForm
from advisor.tui.help import HelpScreen
from advisor.tui.messages import (
    ProbeFinished,
    ProbeProgressed,
    ProbeStarted,
    RecommendationFailed,
    RecommendationReady,
)
from advisor.tui.price_browser import PricesScreen
from advisor.tui.probe_view import ProbeView
from advisor.tui.results import CostTimePlot, ExplainPanel, ResultsTable

if TYPE_CHECKING:
    from advisor.recommend.recommendation import Option, Recommendation
    from probes.fitting import ProbeProgress
    from probes.result import ProbeResult

RECOMPUTE_DELAY = 0.4
"""Seconds of quiet after the last edit before re-ranking (typing a deadline re-ranks once)."""


class AdvisorApp(App[None]):
    TITLE = "advisor"
    SUB_TITLE = "where should I train this model?"
    CSS_PATH = "advisor.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        ("ctrl+q", "quit", "Quit"),
        Binding("r", "recommend", "Recommend", show=False),  # changes re-rank on their own
        # escape reaches the app from a text field (no field takes it), x only from elsewhere
        Binding("escape", "cancel_probe", "Cancel probe", key_display="esc"),
        Binding("x", "cancel_probe", "Cancel probe", show=False),
        Binding("ctrl+b", "toggle_form", "Form"),
        Binding("f", "fresh_probe", "Probe again", show=False),  # the footer keeps room for help
        ("p", "prices", "Prices"),
        ("e", "export", "Export"),
        Binding("t", "toggle_theme", "Theme", show=False),  # in the help
        ("question_mark,f1", "help", "Help"),
    ]

    def __init__(self, state: FormState | None = None) -> None:
        super().__init__()
        self.state = state or FormState()
        self.rec: Recommendation | None = None
        self.payload: dict[str, Any] = {}
        self.explanations: dict[int, list[str]] = {}
        self.probe_result: ProbeResult | None = None
        self.probe_note = ""
        """Why an LLM job is ranked without its proxy's probe (it could not be probed here)."""
        self._cancel = threading.Event()
        self._pending: Timer | None = None
        self.probing = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield WorkloadForm(self.state, id="form")
            with Vertical(id="right"):
                yield ProbeView()
                yield Static("Starting...", id="summary")
                with TabbedContent(id="tabs"):
                    with TabPane("Options", id="tab-options"):
                        yield ResultsTable(id="results")
                        yield Static("", id="options-notes")
                    with TabPane("Cost vs time", id="tab-chart"):
                        yield CostTimePlot(id="plot")
                    with TabPane("Why", id="tab-why"):
                        yield ExplainPanel("Select an option to see why.", id="explain")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.action_recommend()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The palette (ctrl+p): the app's own commands beside Textual's."""
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Recommend", "Rank the offerings for the form again", self.action_recommend
        )
        yield SystemCommand(
            "Probe again", "Measure the workload here afresh", self.action_fresh_probe
        )
        yield SystemCommand("Cancel the probe", "Stop a running probe", self.action_cancel_probe)
        yield SystemCommand(
            "Hide or show the form", "Give the options the whole width", self.action_toggle_form
        )
        yield SystemCommand("Prices", "Browse and refresh the price database", self.action_prices)
        yield SystemCommand(
            "Refresh prices", "Fetch current prices from the public sources", self._refresh_prices
        )
        yield SystemCommand(
            "Export", "Write the highlighted option as a SkyPilot task or JSON", self.action_export
        )

    def _refresh_prices(self) -> None:
        """The price browser, refreshing: what the palette's 'Refresh prices' runs."""
        screen = PricesScreen()
        self.push_screen(screen)
        screen.call_after_refresh(screen.action_refresh_prices)

    # --- recommendation -------------------------------------------------------------------

    def on_workload_form_form_changed(self, message: WorkloadForm.FormChanged) -> None:
        model_changed = message.state.workload != self.state.workload
        sizes_changed = message.state.probe_key != self.state.probe_key
        self.state = message.state
        if model_changed or sizes_changed:
            self.probe_result, self.probe_note = None, ""
        if self.rec is not None:
            self._stale("Inputs changed: updating", error=False)
        if self._pending is not None:
            self._pending.stop()
        self._pending = self.set_timer(RECOMPUTE_DELAY, self.action_recommend)

    def action_recommend(self) -> None:
        if self.probing:
            return
        if self.probe_result is None and not self.probe_note:
            self.find_or_probe(self.state, fresh=False)
        else:
            self.rank(self.state, self.probe_result, self.probe_note)

    def action_fresh_probe(self) -> None:
        if not self.probing:
            self.find_or_probe(self.state, fresh=True)

    @work(thread=True, exclusive=True, group="probe")
    def find_or_probe(self, state: FormState, fresh: bool) -> None:
        try:
            stored = None if fresh else actions.stored_probe(state)
            note = "" if fresh or stored is not None else actions.stored_fallback(state)
            if stored is not None or note:
                self.post_message(ProbeFinished(stored, note=note))
                return
            self._cancel.clear()
            self.probing = True
            self.post_message(ProbeStarted(state.workload))

            def progress(event: ProbeProgress) -> None:
                self.post_message(ProbeProgressed(event))

            if state.is_llm:
                result, note = actions.probe_job(state, progress=progress, cancel=self._cancel)
            else:
                result = actions.run_probe(state, progress=progress, cancel=self._cancel)
            self.post_message(ProbeFinished(result, note=note))
        except Exception as exc:
            self.post_message(ProbeFinished(error=actions.one_line(exc)))
        finally:
            self.probing = False

    def on_probe_started(self, message: ProbeStarted) -> None:
        self.query_one(ProbeView).started(message.workload)

    def on_probe_progressed(self, message: ProbeProgressed) -> None:
        self.query_one(ProbeView).progressed(message.event)

    def on_probe_finished(self, message: ProbeFinished) -> None:
        view = self.query_one(ProbeView)
        if message.error:
            view.finished(f"Probe: {message.error}")
            self._stale(message.error)
            return
        if message.result is None and not message.note:
            return
        self.probe_result, self.probe_note = message.result, message.note
        said = (
            actions.describe_probe(message.result) if message.result else f"Probe: {message.note}"
        )
        view.finished(said)
        self.rank(self.state, message.result, message.note)

    @work(thread=True, exclusive=True, group="recommend")
    def rank(self, state: FormState, probe: ProbeResult | None, note: str = "") -> None:
        try:
            rec, payload, explanations = actions.recommend(state, probe, note)
            self.post_message(RecommendationReady(rec, payload, explanations))
        except Exception as exc:
            self.post_message(RecommendationFailed(actions.one_line(exc)))

    def on_recommendation_ready(self, message: RecommendationReady) -> None:
        self.rec = message.rec
        self.payload = message.payload
        self.explanations = message.explanations
        table = self.query_one(ResultsTable)
        table.show(message.rec)
        self.query_one(CostTimePlot).show(message.rec)
        summary = "\n".join(actions.summary_lines(message.rec))
        self._summary(summary, infeasible=not message.rec.feasible)
        self.query_one("#tabs").set_class(False, "stale")  # the current inputs' answer
        self._explain(self._option_at(table, 0))

    def on_results_table_fitted(self, message: ResultsTable.Fitted) -> None:
        """Under the options: what the columns mean, the marks, and what this width left out."""
        if self.rec is None:
            return
        fit = message.fit
        notes = columns.legend(self.rec, self.rec.options, fit, detail="see Why")
        hidden = columns.left_out_line(fit, message.width, at="here", more="Why")
        for widget in self.query("#options-notes").results(Static):  # none once shutting down
            widget.update(display.safe_text("\n".join(notes + ([hidden] if hidden else []))))

    def on_recommendation_failed(self, message: RecommendationFailed) -> None:
        self._stale(message.error)

    def _stale(self, why: str, *, error: bool = True) -> None:
        """Mark the shown options as the previous inputs' (after a change, an error, a cancel):
        the answer says why and the options dim until a new answer replaces them."""
        shown = self.rec is not None
        said = f"{why}. The options below are for the previous inputs." if shown else why
        self._summary(said, infeasible=error)
        self.query_one("#tabs").set_class(shown, "stale")

    def _summary(self, text: str, *, infeasible: bool) -> None:
        summary = self.query_one("#summary", Static)
        summary.update(display.safe_text(text))
        summary.set_class(infeasible, "infeasible")

    def on_data_table_row_highlighted(self, event: ResultsTable.RowHighlighted) -> None:
        # the table that moved, not a query: this can arrive while the app shuts down
        if isinstance(event.data_table, ResultsTable):
            self._explain(self._option_at(event.data_table, event.cursor_row))

    def _explain(self, option: Option | None) -> None:
        lines = self.explanations.get(option.rank, []) if option else []
        for panel in self.query(ExplainPanel):  # none once the app is shutting down
            panel.explain(option, lines)

    def selected_option(self) -> Option | None:
        """The highlighted option of the results table, if any."""
        table = self.query_one(ResultsTable)
        return self._option_at(table, table.cursor_row)

    def _option_at(self, table: ResultsTable, row: int) -> Option | None:
        if not 0 <= row < table.row_count:
            return None
        rank = int(table.get_row_at(row)[0])
        return table.option(rank)

    # --- other actions ----------------------------------------------------------------------

    def action_cancel_probe(self) -> None:
        if self.probing:
            self._cancel.set()

    async def action_quit(self) -> None:
        self._cancel.set()  # a running probe's child process is killed, not waited for
        self.exit()

    def on_unmount(self) -> None:
        self._cancel.set()

    def action_toggle_form(self) -> None:
        """Hide the form (the options take the whole width) or bring it back; a field that had
        focus hands it to the options, so keys never go to a field out of sight."""
        form = self.query_one(WorkloadForm)
        form.toggle_class("collapsed")
        if form.has_class("collapsed") and form.has_focus_within:
            tabs = self.query_one("#tabs", TabbedContent)
            shown = tabs.active == "tab-options"  # else the options are in a tab out of sight
            (self.query_one(ResultsTable) if shown else tabs.query_one(Tabs)).focus()

    def action_prices(self) -> None:
        self.push_screen(PricesScreen())

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_export(self) -> None:
        option = self.selected_option()
        if option is None:
            self.notify("Nothing to export yet.", severity="warning")
            return
        self.push_screen(ExportScreen(), lambda path: self._export(option.rank, path))

    def _export(self, rank: int, path: str | None) -> None:
        if not path or self.rec is None:
            return
        target = Path(path)
        if actions.needs_confirmation(target):  # never replace a file without asking

            def answered(replace: bool | None) -> None:
                if replace:
                    self._write_export(rank, target, overwrite=True)

            self.push_screen(ReplaceScreen(target), answered)
            return
        self._write_export(rank, target, overwrite=False)

    def _write_export(self, rank: int, target: Path, *, overwrite: bool) -> None:
        if self.rec is None:
            return
        try:
            written = actions.export(self.rec, rank, target, overwrite=overwrite)
        except Exception as exc:
            self.notify(display.plain(actions.one_line(exc)), severity="error")
            return
        self.notify(display.plain(f"Wrote {written}"))


class ExportScreen(ModalScreen[str | None]):
    """Ask where to write the chosen option (SkyPilot YAML, or JSON for a ``.json`` name)."""

    BINDINGS: ClassVar[list[BindingType]] = [("escape", "dismiss", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Label(
                "Export the highlighted option: a SkyPilot task (name.yaml) or JSON (name.json)"
            )
            yield Input("advisor-task.yaml", id="export-path")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class ReplaceScreen(ModalScreen[bool]):
    """Ask before an export replaces an existing file: ``y`` replaces, anything else keeps it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("y", "answer(True)", "Replace"),
        ("n", "answer(False)", "Keep"),
        ("escape", "answer(False)", "Keep"),
    ]

    def __init__(self, target: Path) -> None:
        super().__init__()
        self.target = target

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            yield Label(
                display.safe_text(f"{self.target} exists. Replace it? (y: replace, n: keep)")
            )

    def action_answer(self, replace: bool) -> None:
        self.dismiss(replace)


def make_app(state: FormState | None = None) -> AdvisorApp:
    """The one factory for the CLI and the tests."""
    return AdvisorApp(state)
