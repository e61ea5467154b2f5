"""Running a probe from the command line: a rich progress bar on stderr, Ctrl-C cancels cleanly.

Shared by ``advisor probe`` and ``advisor recommend`` (which probes when nothing is stored).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

import click

from advisor import display
from advisor.recommend.deadline import describe_seconds
from probes.limits import LLM_PROBE_MEMORY_BYTES, LLM_PROBE_OVERRUN_SECONDS

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
    watched = sys.stderr.isatty()  # a person at a terminal; a pipe gets the result or one error
    if watched:
        announce(spec.label, budget)
    began = time.perf_counter()
    try:
        result = _run(spec, budget, cancel, thread_counts)
    finally:
        if in_main_thread:
            signal.signal(signal.SIGINT, previous)
    if watched:
        said = describe_seconds(time.perf_counter() - began)
        click.echo(f"probed {display.plain(spec.label)} here in {said}", err=True)
    return result


def announce(label: str, budget: float) -> None:
    """One line before a probe at a terminal: what it will take, as this machine's recent
    probes took (else: its steps for at most the budget, once TensorFlow has started and built
    the model); an LLM job's proxy says its bounds too (``llm_bounds``)."""
    from advisor import service
    from advisor.workloads.llm_job import is_probe_name

    llm = is_probe_name(label)
    typical = service.typical_probe_seconds(llm=llm)
    if llm and typical is not None and typical > budget + LLM_PROBE_OVERRUN_SECONDS:
        typical = None  # taken under a larger budget: the bound says more
    if typical is not None:
        kind = "LLM probes" if llm else "probes"
        when = f"about {describe_seconds(typical)}, as this machine's recent {kind} took"
    elif llm:
        when = "TensorFlow's start, the proxy's build and its steps"
    else:
        when = f"TensorFlow's start and the model's build, then at most {budget:g} s of steps"
    if llm:
        when += f"; {llm_bounds(budget)}"
    click.echo(
        f"probing {display.plain(label)} here first ({when}); stored for next time", err=True
    )


def llm_bounds(budget: float) -> str:
    """The bounds an LLM job's proxy is shrunk to keep (``probes.loading.proxy_parameter_cap``):
    its budget and ``LLM_PROBE_OVERRUN_SECONDS``, ``LLM_PROBE_MEMORY_BYTES`` of memory."""
    most = describe_seconds(budget + LLM_PROBE_OVERRUN_SECONDS)
    return f"at most {most} and {LLM_PROBE_MEMORY_BYTES / 2**30:g} GiB, the proxy shrunk to fit"


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
