"""The help screen: what the app does and every key."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# advisor

Pick a workload on the left and set a deadline or a budget. advisor measures the workload on this
machine (a probe of a few seconds, reused once stored), predicts its training time on every cloud
machine in the price database, and ranks them. `data` is a data set each machine downloads
before training (`150GB`), `from` the cloud it lives in: its download, and another cloud's
egress, are billed (the command line's `--data` and `--data-from`).

| key | does |
|---|---|
| `r` | recommend again now (changes re-rank on their own) |
| `esc`, `x` | cancel a running probe, nothing stored (`esc` from a text field too) |
| `f` | probe again, fresh |
| `ctrl+b` | hide or show the form (the options take the whole width) |
| `tab` | the next field (the form scrolls to it) |
| `p` | prices: browse, filter, refresh |
| `e` | export the highlighted option as a SkyPilot task and JSON |
| `s` | sort the table by the next column (or click a header) |
| `t` | dark / light theme |
| `ctrl+p` | command palette |
| `?` or `f1` | this help |
| `ctrl+q` | quit |

The answer comes first, in words: the chosen option and why, its time (the training, the wait
for a spot VM, what interruptions add) and its cost against the cheapest on-demand and the
fastest option. Columns: `time` and `cost` p50-p90 on the machine (billed); `wait` the expected
wait for a spot VM (not billed); `meet` the chance of finishing by the deadline; `*` a spot risk
read from another cloud's or accelerator's trace. A column that does not fit is left out and
said under the table; the `Why` tab walks the highlighted option through.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Markdown(HELP)
