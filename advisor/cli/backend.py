"""``--backend``: which Keras backend a probe trains with, shared by every command that probes.

Keras picks its backend when it is first imported, and the command line probes in its own
process: the option selects it (``probes.backend.select``) while the command line is parsed,
before anything imports Keras. Without the option, ``KERAS_BACKEND`` decides, else TensorFlow,
and only where a backend is needed: a probe refuses a name it cannot probe with before it
starts, a stored probe's lookup reads it (``probes.backend.for_lookup``), and ``locate``,
``models`` or ``prices`` never look at it. The choice is exported, so the app's probe child and
the thread-scaling runs follow it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from probes.backend import NAMES

F = TypeVar("F", bound=Callable[..., Any])


def _select(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        from probes import backend

        backend.select(value)


def backend_option(function: F) -> F:
    """The ``--backend`` option (its value is applied, not passed to the command)."""
    option = click.option(
        "--backend",
        type=click.Choice(NAMES, case_sensitive=False),
        default=None,
        expose_value=False,
        callback=_select,
        help="Keras backend to probe with (default: KERAS_BACKEND, else tensorflow).",
    )
    return option(function)
