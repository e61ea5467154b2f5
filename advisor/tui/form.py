"""The workload pane: what to train and under which constraints. Emits ``FormChanged``."""

from __future__ import annotations

from dataclasses import dataclass, replace

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Label, Select, Switch

from advisor.recommend import staging
from advisor.workloads import llm, stacks, zoo
from advisor.workloads.llm import METHODS

OWN_STORE = "own"
"""``FormState.data_from`` for each machine's own provider and region (nothing billed)."""


@dataclass(frozen=True)
class FormState:
    """Everything the user set in the workload pane (strings stay raw until the engine parses)."""

    model: str = "imdb_bilstm"
    model_file: str = ""
    """A user's ``.keras`` file; when set it replaces the zoo model (loaded in safe mode)."""
    command: str = ""
    """A user's training command (``python train.py --epochs 30``); when set it replaces the
    model and the file, and is probed as ``advisor probe -- COMMAND`` is. Taken on Enter only:
    a command half typed is never run."""
    epochs: str = ""
    samples: str = ""
    batch_size: str = ""
    data: str = ""
    """The data set each machine downloads before training (``150GB``), billed as ``--data``."""
    data_from: str = OWN_STORE
    """Where the data lives (``--data-from``): a provider, or each machine's own store."""
    deadline: str = "8h"
    budget: str = ""
    objective: str = "cheapest"
    spot: bool = True
    on_demand: bool = True
    provider: str = ""
    region: str = ""
    accelerator: str = ""
    confidence: str = "0.9"
    method: str = "lora"
    """An LLM's fine-tuning method (the LLM fields show only for an LLM)."""
    tokens: str = ""
    examples: str = ""
    seq_len: str = ""
    lora_rank: str = ""
    stack: str = stacks.DEFAULT
    """The software an LLM is fine-tuned with (``advisor.workloads.stacks``)."""

    @property
    def workload(self) -> str:
        """What to probe: the command, else the model file when one is given, else the zoo
        model."""
        return self.command or self.model_file or self.model

    @property
    def is_llm(self) -> bool:
        return not self.model_file and not self.command and llm.find(self.model) is not None

    @property
    def probe_key(self) -> tuple[str, ...]:
        """What decides the probe: the sizes, and an LLM job's method and text."""
        sizes = (self.epochs, self.samples, self.batch_size)
        if not self.is_llm:
            return sizes
        job = (self.method, self.tokens, self.examples, self.seq_len, self.lora_rank, self.stack)
        return (*sizes, *job)


class WorkloadForm(VerticalScroll):
    """The zoo, sizes and constraints; every change posts ``FormChanged``. Each field sits beside
    its own label, so what a field is stays said while it is typed in (a placeholder goes at the
    first key); every label and placeholder fits the pane's 24 columns whole, and at 80x24 the
    pane scrolls to whichever field has focus (tests/tui/test_tui.py and test_fit.py check)."""

    class FormChanged(Message):
        def __init__(self, state: FormState) -> None:
            super().__init__()
            self.state = state

    def __init__(self, state: FormState | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.state = state or FormState()

    def compose(self) -> ComposeResult:
        s = self.state
        options = [(w.id, w.id) for w in zoo.WORKLOADS]
        options += [(f"{m.id} (LLM)", m.id) for m in llm.models().values()]
        yield Label("Model", classes="heading first")
        yield Select(options, value=s.model, allow_blank=False, id="model", compact=True)
        yield row(
            "or file", Input(s.model_file, placeholder="model.keras", id="model_file", compact=True)
        )
        yield row(
            "or command", Input(s.command, placeholder="python x.py⏎", id="command", compact=True)
        )
        # numbers are typed as text and read as the command line reads them: an integer field
        # would keep the digits of "1e999" and read 1999
        yield row("epochs", Input(s.epochs, placeholder="default", id="epochs", compact=True))
        yield row("samples", Input(s.samples, placeholder="default", id="samples", compact=True))
        yield row(
            "batch", Input(s.batch_size, placeholder="default", id="batch_size", compact=True)
        )
        yield row("data", Input(s.data, placeholder="none, 150GB", id="data", compact=True))
        stores = [("own cloud", OWN_STORE)] + [(p, p) for p in staging.sources()]
        yield row("from", Select(stores, value=s.data_from, allow_blank=False, id="data_from",
                                 compact=True))  # fmt: skip
        with Vertical(id="llm_fields") as fields:
            fields.display = s.is_llm
            yield from self._llm_fields()
        yield from self._constraints()

    def _llm_fields(self) -> ComposeResult:
        """An LLM's fine-tuning job, as ``advisor recommend --method --tokens ...`` takes it."""
        s = self.state
        yield Label("LLM job", classes="heading")
        methods = [(m, m) for m in METHODS]
        yield row("method", Select(methods, value=s.method, allow_blank=False, id="method",
                                   compact=True))  # fmt: skip
        yield row("tokens", Input(s.tokens, placeholder="20M", id="tokens", compact=True))
        yield row("examples", Input(s.examples, placeholder="50k", id="examples", compact=True))
        yield row("seq len", Input(s.seq_len, placeholder="2048", id="seq_len", compact=True))
        yield row("LoRA rank", Input(s.lora_rank, placeholder="16", id="lora_rank", compact=True))
        names = [(name, name) for name in stacks.stacks()]
        yield row("stack", Select(names, value=s.stack, allow_blank=False, id="stack",
                                  compact=True))  # fmt: skip

    def _constraints(self) -> ComposeResult:
        """When it must finish, what it may cost, and which offerings may be ranked."""
        s = self.state
        yield Label("Constraints", classes="heading")
        yield row("deadline", Input(s.deadline, placeholder="8h, 90m, 2d", id="deadline",
                                    compact=True))  # fmt: skip
        yield row("budget $", Input(s.budget, placeholder="none", id="budget", compact=True))
        objectives = [("cheapest in time", "cheapest"), ("fastest in budget", "fastest")]
        yield Vertical(
            Label("objective"),
            Select(objectives, value=s.objective, allow_blank=False, id="objective", compact=True),
            classes="stacked",
        )
        with Horizontal(classes="switches"):
            yield Switch(s.spot, id="spot")
            yield Label("spot")
            yield Switch(s.on_demand, id="on_demand")
            yield Label("on-demand")
        yield row("provider", Input(s.provider, placeholder="gcp, aws", id="provider",
                                    compact=True))  # fmt: skip
        yield row("region", Input(s.region, placeholder="us-east-1", id="region", compact=True))
        yield row("accelerator", Input(s.accelerator, placeholder="T4, A100", id="accelerator",
                                       compact=True))  # fmt: skip
        yield row("confidence", Input(s.confidence, placeholder="0.9", id="confidence",
                                      compact=True))  # fmt: skip

    def _update(self, field: str, value: str | bool) -> None:
        if getattr(self.state, field) == value:
            return
        self.state = replace(self.state, **{field: value})  # type: ignore[arg-type]
        self.query_one("#llm_fields").display = self.state.is_llm
        self.post_message(self.FormChanged(self.state))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id and event.input.id != "command":  # a command is taken on Enter
            self._update(event.input.id, event.value.strip())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "command":
            self._update("command", event.value.strip())

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id and event.value is not Select.BLANK:
            self._update(event.select.id, str(event.value))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        if event.switch.id:
            self._update(event.switch.id, event.value)


def row(label: str, field: Widget) -> Horizontal:
    """One field on one line after its label: the label stays when the placeholder goes."""
    return Horizontal(Label(label), field, classes="row")
