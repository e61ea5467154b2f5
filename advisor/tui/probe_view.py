"""Live view of a running probe: progress, a step-time sparkline, the narrowing interval, ETA."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar, Sparkline

from advisor import display

if TYPE_CHECKING:
    from probes.fitting import ProbeProgress


class ProbeView(Vertical):
    """Shows the probe's progress events; idle text when no probe runs."""

    def compose(self) -> ComposeResult:
        yield Label("No probe running.", id="probe-status")
        yield ProgressBar(total=100, show_eta=False, id="probe-progress")
        yield Sparkline([], id="probe-sparkline")

    def _show_progress(self, running: bool) -> None:
        """The progress bar and the step times only while a probe runs: the lines go to the
        answer otherwise."""
        for part in ("#probe-progress", "#probe-sparkline"):
            self.query_one(part).display = running

    def started(self, workload: str) -> None:
        self._show_progress(True)
        self.query_one("#probe-status", Label).update(
            display.safe_text(f"Probing {workload} on this machine... (press x to cancel)")
        )
        self.query_one("#probe-progress", ProgressBar).update(progress=0)
        self.query_one("#probe-sparkline", Sparkline).data = []

    def progressed(self, event: ProbeProgress) -> None:
        parts = [f"{event.phase}: {event.steps} steps"]
        if event.relative_half_width is not None:
            parts.append(f"step time known to +-{event.relative_half_width * 100:.1f}%")
        if event.eta_seconds is not None:
            parts.append(f"ETA {display.duration(event.eta_seconds)}")
            total = event.elapsed_seconds + event.eta_seconds
            fraction = event.elapsed_seconds / total if total > 0 else 0.0
            self.query_one("#probe-progress", ProgressBar).update(progress=100 * fraction)
        self.query_one("#probe-status", Label).update("  ".join(parts))
        if event.recent:
            self.query_one("#probe-sparkline", Sparkline).data = [s * 1000 for s in event.recent]

    def finished(self, text: str) -> None:
        self.query_one("#probe-status", Label).update(display.safe_text(text))
        self.query_one("#probe-progress", ProgressBar).update(progress=100)
        self._show_progress(False)
