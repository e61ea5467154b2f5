"""The workload pane: what to train and under which constraints. Emits ``FormChanged``."""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Switch

from probes import zoo


@dataclass(frozen=True)
class FormState:
    """Everything the user set in the workload pane (strings stay raw until the engine parses)."""

    model: str = "imdb_bilstm"
    epochs: str = ""
    samples: str = ""
    batch_size: str = ""
    deadline: str = "8h"
    budget: str = ""
    objective: str = "cheapest"
    spot: bool = True
    on_demand: bool = True
    provider: str = ""
    region: str = ""
    accelerator: str = ""
    confidence: str = "0.9"


class WorkloadForm(VerticalScroll):
    """The zoo, sizes and constraints; every change posts ``FormChanged``."""

    class FormChanged(Message):
        def __init__(self, state: FormState) -> None:
            super().__init__()
            self.state = state

    def __init__(self, state: FormState | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.state = state or FormState()

    def compose(self) -> ComposeResult:
        s = self.state
        options = [(f"{w.id} ({w.title})", w.id) for w in zoo.WORKLOADS]
        yield Label("Model")
        yield Select(options, value=s.model, allow_blank=False, id="model")
        yield Label("Epochs / samples / batch (blank: default)")
        yield Input(s.epochs, placeholder="epochs", id="epochs", type="integer")
        yield Input(s.samples, placeholder="samples", id="samples", type="integer")
        yield Input(s.batch_size, placeholder="batch size", id="batch_size", type="integer")
        yield Label("Deadline (8h, 90m, 2d, 1h30m)")
        yield Input(s.deadline, id="deadline")
        yield Label("Budget USD (blank: none)")
        yield Input(s.budget, placeholder="e.g. 50", id="budget", type="number")
        yield Label("Objective")
        yield Select(
            [("cheapest that meets the deadline", "cheapest"), ("fastest within budget", "fastest")],
            value=s.objective,
            allow_blank=False,
            id="objective",
        )
        yield Label("Spot / preemptible")
        yield Switch(s.spot, id="spot")
        yield Label("On-demand")
        yield Switch(s.on_demand, id="on_demand")
        yield Label("Provider / region / accelerator")
        yield Input(s.provider, placeholder="provider (gcp, aws, ...)", id="provider")
        yield Input(s.region, placeholder="region", id="region")
        yield Input(s.accelerator, placeholder="accelerator (T4, A100, ...)", id="accelerator")
        yield Label("Confidence of meeting the deadline")
        yield Input(s.confidence, id="confidence", type="number")

    def _update(self, field: str, value: object) -> None:
        if getattr(self.state, field) == value:
            return
        self.state = replace(self.state, **{field: value})
        self.post_message(self.FormChanged(self.state))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id:
            self._update(event.input.id, event.value.strip())

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id and event.value is not Select.BLANK:
            self._update(event.select.id, str(event.value))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        if event.switch.id:
            self._update(event.switch.id, event.value)
