"""Running a probe from the command line: a rich progress bar on stderr, Ctrl-C cancels cleanly.

Shared by ``advisor probe`` and ``advisor recommend`` (which probes when nothing is stored).
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from probes.result import ProbeResult
    from probes.spec import ProbeSpec

DEFAULT_BUDGET_SECONDS = 20.0


def run_with_progress(
    spec: ProbeSpec, budget: float = DEFAULT_BUDGET_SECONDS, thread_counts: tuple[int, ...] = ()
) -> ProbeResult:
    """Run the probe; the first Ctrl-C cancels it cleanly (a second one interrupts at once)."""
    cancel = threading.Event()

    def on_interrupt(signum: int, frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()

    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_interrupt) if in_main_thread else None
    try:
        return _run(spec, budget, cancel, thread_counts)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)


def _run(
    spec: ProbeSpec, budget: float, cancel: threading.Event, thread_counts: tuple[int, ...]
) -> ProbeResult:
    from probes.fitting import ProbeProgress
    from probes.run import probe as run_probe

    if not sys.stderr.isatty():
        return run_probe(spec, budget_seconds=budget, cancel=cancel, thread_counts=thread_counts)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[detail]}"))  # fmt: skip
    with Progress(*columns, transient=True, console=_stderr_console()) as bar:
        task = bar.add_task(f"probing {spec.label}", total=budget, detail="")

        def show(event: ProbeProgress) -> None:
            detail = f"{event.phase}, {event.steps} steps"
            if event.relative_half_width is not None:
                detail += f", +-{event.relative_half_width:.1%}"
            bar.update(task, completed=min(event.elapsed_seconds, budget), detail=detail)

        return run_probe(
            spec, budget_seconds=budget, progress=show, cancel=cancel, thread_counts=thread_counts
        )


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)
