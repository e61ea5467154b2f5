"""``--backend``: which Keras backend a probe trains with, shared by every command that probes.

Keras picks its backend when it is first imported, and the command line probes in its own
process: the option selects it (``probes.backend.select``) while the command line is parsed,
before anything imports Keras. Without the option, ``KERAS_BACKEND`` decides, else TensorFlow.
The choice is exported, so the app's probe child and the thread-scaling runs follow it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from probes.backend import NAMES

F = TypeVar("F", bound=Callable[..., Any])


def _select(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    from probes import backend

    if value is None:
        backend.requested()  # a bad KERAS_BACKEND is a usage error now, not mid-probe
    else:
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
