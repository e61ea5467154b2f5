"""The advisor terminal app. A placeholder screen until the app issue (7) lands."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.widgets import Footer, Header, Static

WELCOME = """\
[b]advisor[/b]: where should I train this model?

The interactive app is being built. Meanwhile, from the command line:

  advisor recommend --model lstm --deadline 8h
  advisor prices list --accelerator T4
  advisor probe --model mnist_mlp

Press [b]ctrl+q[/b] to quit.
"""


class AdvisorApp(App[None]):
    TITLE = "advisor"
    BINDINGS: ClassVar[list[BindingType]] = [("ctrl+q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(WELCOME, id="welcome")
        yield Footer()


def make_app() -> AdvisorApp:
    """The one factory for the CLI and the tests."""
    return AdvisorApp()
