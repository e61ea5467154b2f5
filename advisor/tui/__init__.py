"""The Textual app. ``run_app()`` is what bare ``advisor`` calls."""

from __future__ import annotations


def run_app() -> None:
    from advisor.tui.app import make_app

    make_app().run()
