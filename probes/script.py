"""A user's own training command, probed: run it for the budget, read its steps, stop it.

``advisor probe --name NAME -- python train.py ...`` runs the command in a process group of its
own, as the user, with ``probes/script_site`` leading ``PYTHONPATH`` so that ``advisor.probe``
reports every Keras ``fit`` step (or the script's own ``advisor.probe.step()`` calls) to an
events file. The probe reads the events as they come, stops the command once its steady step
time is known to +-2% or the budget is spent (SIGINT, then SIGTERM, then SIGKILL to the whole
group, 2 s apart), and leaves nothing running. A command that ends without a step, or never
reaches one within the budget, is one error line with its last output lines.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from advisor.errors import AdvisorError, Cancelled, UsageError
from advisor.workloads import stacks
from probes import stats
from probes.result import Architecture, Fingerprint, ProbeResult, WorkloadConfig

SITE = Path(__file__).resolve().parent / "script_site"
ROOT = Path(__file__).resolve().parents[1]
POLL_SECONDS = 0.1
GRACE_SECONDS = 2.0
"""Between SIGINT and SIGTERM, and between SIGTERM and SIGKILL."""
TARGET_HALF_WIDTH = 0.02
"""The steady step time is known when its 95% interval is within this share of its mean."""
MIN_SHARE = 0.3
"""Share of the budget a probe runs at least, however soon its steps are steady."""
TAIL_LINES = 5
"""Last lines of the command's output said with an error."""
RECENT_STEPS = 4096
"""Steps a steadiness check reads, the latest: a check every poll stays bounded at any rate."""
PREFIX = "script:"
"""A script probe's workload id is this and its name (``script:cifar``)."""
STACK_MODULES = 5
"""Module names a ``stack`` event's evidence keeps, at most."""
MAX_OPERATORS = 10_000_000
"""Operators a step may say it ran, at most (``probes.validity``'s bound on its kernels)."""
MAX_OPERATOR_SECONDS = 0.01
"""One operator's host seconds a script may say, at most: a tiny one takes microseconds."""


@dataclass
class Events:
    """What the command reported, in order of arrival."""

    steps: list[float] = field(default_factory=list)
    """Wall-clock time of each training step's end."""
    counted: set[float] = field(default_factory=set)
    """The ends of steps slowed by counting their FLOPs (PyTorch's): their time is left out."""
    waits: dict[float, float] = field(default_factory=dict)
    """Seconds a step waited for its data (a PyTorch ``DataLoader``'s), by the step's end."""
    micro: list[int] = field(default_factory=list)
    """Batches each optimizer step took (more than one: gradient accumulation)."""
    batches: list[int] = field(default_factory=list)
    epochs: list[float] = field(default_factory=list)
    """Wall-clock time of each epoch's end."""
    plan: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    loader_batches: int = 0
    """Batches an epoch of the data loader that fed the first step (PyTorch's), 0: not said."""
    backend: str = ""
    native: bool = False
    """The backend was driven by the script's own loop (PyTorch's or JAX's hooks), not Keras."""
    precision: str = ""
    """What the counted step ran in (``float32``, ``autocast bfloat16``), where it was read."""
    stack: str = ""
    """The fine-tuning stack the script's imports showed (a stack id of ``advisor.workloads.stacks``), "": none."""
    stack_modules: list[str] = field(default_factory=list)
    """The imported modules that showed it."""
    operators: int = 0
    """The operators the counted step ran (PyTorch's; 0: not counted)."""
    operator_seconds: float = 0.0
    """What one operator cost the host here (0: not timed)."""

    def add(self, event: dict[str, Any]) -> None:
        kind, at = event.get("event"), event.get("t")
        if not isinstance(at, (int, float)) or isinstance(at, bool) or not math.isfinite(at):
            return  # not one of ours: advisor.probe stamps every event
        if kind == "step":
            self._step(at, event)
        elif kind == "epoch":
            self.epochs.append(at)
        elif kind == "plan":
            counts = {k: event.get(k) for k in ("epochs", "steps", "batch")}
            self.plan.update({k: v for k, v in counts.items() if _whole(v)})
            flops = event.get("flops_per_sample")
            if isinstance(flops, (int, float)) and not isinstance(flops, bool) and 0 < flops < 1e18:
                self.plan["flops_per_sample"] = float(flops)
        elif kind == "loader" and _whole(event.get("batches")):
            self.loader_batches = event["batches"]
        elif kind == "model":
            self.model = {k: event.get(k) for k in ("architecture", "parameters")}
            self.precision = _word(event.get("precision"))
            self._operators(event.get("operators"), event.get("operator_seconds"))
        elif kind == "backend":
            self.backend = _word(event.get("name"))
            self.native = event.get("native") is True
        elif kind == "stack":
            self._stack(event)

    def _operators(self, count: object, seconds: object) -> None:
        """The counted step's operators and one's host seconds, where both are sane."""
        if not isinstance(count, int) or isinstance(count, bool) or not 0 < count <= MAX_OPERATORS:
            return
        if not isinstance(seconds, float) or not 0 < seconds < MAX_OPERATOR_SECONDS:
            return  # NaN fails the comparison too
        self.operators, self.operator_seconds = count, seconds

    def _stack(self, event: dict[str, Any]) -> None:
        stack = event.get("stack")
        if not isinstance(stack, str) or stack not in stacks.stacks():
            return  # not a stack advisor names: the whole event is left out
        modules = event.get("modules")
        names = [_module(name) for name in modules[:64]] if isinstance(modules, list) else []
        self.stack = stack
        self.stack_modules = [name for name in names if name][:STACK_MODULES]

    def _step(self, at: float, event: dict[str, Any]) -> None:
        self.steps.append(at)
        if _whole(event.get("batch")):
            self.batches.append(event["batch"])
        if _whole(event.get("micro")):
            self.micro.append(event["micro"])
        wait = event.get("wait")
        if isinstance(wait, float) and math.isfinite(wait) and wait >= 0:
            self.waits[at] = wait
        if event.get("counted") is True:
            self.counted.add(at)

    def steps_between(self, crossing: bool) -> list[tuple[float, float]]:
        """Each step's start and end (the one before it's end), its FLOPs uncounted, with an
        epoch's end between them (``crossing``) or not."""
        return [(a, b) for a, b in itertools.pairwise(self.steps)
                if b > a and b not in self.counted
                and any(a < end <= b for end in self.epochs) == crossing]  # fmt: skip

    @property
    def steps_an_epoch(self) -> int | None:
        """As the script planned them, else its data loader's batches an epoch over the batches
        a step took (gradient accumulation); None where neither was said."""
        if self.plan.get("steps"):
            return int(self.plan["steps"])
        if self.loader_batches and self.micro:
            return -(-self.loader_batches // int(statistics.median_low(self.micro)))
        return None

    @property
    def durations(self) -> list[float]:
        """Each step's time from the end of the one before it, an epoch boundary's gap aside."""
        return [b - a for a, b in self.steps_between(crossing=False)]

    @property
    def boundaries(self) -> list[float]:
        """The gaps between two steps with an epoch's end between them (validation, callbacks)."""
        return [b - a for a, b in self.steps_between(crossing=True)]


def _word(value: object) -> str:
    """A short name a script reported (a backend, a precision), or "" for anything else."""
    text = value if isinstance(value, str) else ""
    return text if len(text) <= 32 and text.replace(" ", "").isalnum() else ""


def _module(value: object) -> str:
    """A module's dotted name a script reported (``megatron.core``), or "" for anything else."""
    text = value if isinstance(value, str) else ""
    parts = text.split(".") if len(text) <= 64 and text.isascii() else [""]
    return text if all(part.isidentifier() for part in parts) else ""


def _whole(value: object) -> bool:
    """A count a script may state: a whole number from 1 to a billion."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10**9


@dataclass(frozen=True)
class ScriptRun:
    """A probed command: when it started, what it reported, how it ended."""

    started: float
    events: Events
    ended_by_probe: bool
    returncode: int | None
    output_tail: tuple[str, ...]
    seconds: float


def run_command(
    command: Sequence[str],
    budget: float,
    epochs: int | None = None,
    cancel: threading.Event | None = None,
) -> ScriptRun:
    """Run ``command`` until its steady step time is known or ``budget`` seconds pass
    (``epochs``: the run's, where the user said them); ``cancel`` stops it and raises
    ``Cancelled``, the command and everything it started gone."""
    if not command:
        raise UsageError("no command to probe: advisor probe --name NAME -- python train.py ...")
    with tempfile.TemporaryDirectory(prefix="advisor-script-") as folder:
        events_path, output_path = Path(folder) / "events.jsonl", Path(folder) / "output.log"
        events_path.touch()
        env = {**os.environ, "ADVISOR_PROBE_EVENTS": str(events_path),
               "ADVISOR_PROBE_ROOT": str(ROOT),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(SITE), os.environ.get("PYTHONPATH")]))}  # fmt: skip
        started = time.time()
        with output_path.open("wb") as output:
            try:
                process = subprocess.Popen(
                    list(command), env=env, stdin=subprocess.DEVNULL, stdout=output,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip
            except OSError as error:
                raise UsageError(f"cannot run {command[0]!r}: {error.strerror}") from None
            try:
                with _stopped_when_terminated():
                    events, ended = _watch(process, events_path, started, budget, epochs, cancel)
            finally:
                _stop(process)
        tail = _tail(output_path)
    return ScriptRun(started, events, ended, process.returncode, tuple(tail), time.time() - started)


@contextlib.contextmanager
def _stopped_when_terminated() -> Iterator[None]:
    """SIGTERM or SIGHUP to advisor (``kill``, a closed terminal, a job's time limit) raises
    ``Cancelled`` while the command runs, so that it is stopped with everything it started:
    Python's default for them ends advisor at once and left the user's training running its
    whole length. Only the main thread may set handlers; elsewhere (the app's worker) nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Cancelled(f"probe stopped by {signal.Signals(signum).name}; nothing was stored")

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _tail(path: Path, size: int = 16_384) -> list[str]:
    """The last lines of the command's output, read from its end however much it wrote."""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - size))
        return handle.read().decode("utf-8", "replace").splitlines()[-TAIL_LINES:]


def _watch(
    process: subprocess.Popen[bytes],
    path: Path,
    started: float,
    budget: float,
    epochs: int | None,
    cancel: threading.Event | None,
) -> tuple[Events, bool]:
    """Read events until the process ends, the steps are steady or the budget is spent; True
    when the probe ends the command (steady or out of time), False when it ended by itself."""
    events, offset = Events(), 0
    while True:
        if cancel is not None and cancel.is_set():
            raise Cancelled("probe cancelled; nothing was stored")
        offset = _read(path, offset, events)
        elapsed = time.time() - started
        if process.poll() is not None:
            _read(path, offset, events)
            return events, False
        if _done(events, elapsed, budget, epochs):
            return events, True
        time.sleep(POLL_SECONDS)


def _read(path: Path, offset: int, events: Events) -> int:
    """Events appended since ``offset`` (a line still being written waits for the next read)."""
    with path.open("rb") as handle:
        handle.seek(offset)
        chunk = handle.read()
    complete = chunk[: chunk.rfind(b"\n") + 1]
    for line in complete.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # the script wrote something of its own there: not ours
        if isinstance(event, dict):
            events.add(event)
    return offset + len(complete)


def _done(events: Events, elapsed: float, budget: float, epochs: int | None = None) -> bool:
    """The budget is spent, or the steps are steady and two epoch boundaries were seen (the
    first one pays for compiling the validation pass once): or cannot be within the budget,
    or the run has one epoch (as the user or the script said; not said: perhaps more)."""
    if elapsed >= budget:
        return True
    recent = events.durations[-RECENT_STEPS:]
    if elapsed < MIN_SHARE * budget or not _steady(recent):
        return False
    per_epoch, planned = events.steps_an_epoch, epochs or events.plan.get("epochs")
    if len(events.epochs) >= 2 or planned == 1 or not per_epoch:
        return True
    step = statistics.median(recent)
    to_second = (2 * int(per_epoch) - len(events.steps)) * step
    return elapsed + to_second > budget


def _steady(durations: Sequence[float]) -> bool:
    start = stats.warmup_end(durations)
    if start is None or len(durations) - start < stats.MIN_STEADY:
        return False
    return stats.steady_stats(durations[start:]).relative_half_width <= TARGET_HALF_WIDTH


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGINT, SIGTERM, SIGKILL to the command's whole process group until it is gone (its data
    loader workers and other children included)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break  # the group is gone
        try:
            process.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            continue
        if not _group_alive(process.pid):
            break
    process.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def check_run(run: ScriptRun, budget: float) -> None:
    """Refuse a run that says nothing of its steps, in one line with its last output."""
    said = " | ".join(line.strip() for line in run.output_tail if line.strip())[-400:]
    last = f"; its last output: {said}" if said else ""
    if len(run.events.steps) < 2 and not run.ended_by_probe:
        raise AdvisorError(
            f"the command ended (exit {run.returncode}) before two training steps{last}"
        )
    if len(run.events.steps) < 2:
        raise AdvisorError(
            f"no two training steps within the budget ({budget:g} s): does the script train with "
            f"Keras fit, or call advisor.probe.step()? Is it waiting for input{last}"
        )


@dataclass(frozen=True)
class Sizes:
    """The whole run: what the user said, else what the script planned; and which it was."""

    epochs: int
    steps: int
    """Optimizer steps an epoch."""
    batch: int
    said: str
    """Where the sizes came from, in words."""


def sizes_of(
    events: Events, *, epochs: int | None, samples: int | None, batch_size: int | None
) -> Sizes:
    """The run's epochs, steps an epoch and batch: ``epochs``, ``samples`` and ``batch_size`` as
    given, else as the script's ``fit`` (or ``advisor.probe.plan``) planned them, else as its
    steps and its data loader showed them (the batch a step took; the loader's batches an epoch
    over the batches a step takes)."""
    seen = int(statistics.median_high(events.batches)) if events.batches else None
    batch = batch_size or events.plan.get("batch") or seen
    if not batch:
        raise UsageError(
            "the script did not say its batch: give --batch-size, or advisor.probe.step(batch=N)"
        )
    said = []
    if epochs or events.plan.get("epochs"):
        said.append("epochs as given" if epochs else "epochs as the script planned them")
    else:
        said.append("1 epoch: the script did not say (give --epochs)")
    steps = events.steps_an_epoch
    if samples:
        steps = -(-samples // batch)
        said.append("samples as given")
    elif steps and events.plan.get("steps"):
        said.append("steps an epoch as the script planned them")
    elif steps:
        said.append("steps an epoch from its data loader")
    else:
        raise UsageError(
            "the script did not say how many steps an epoch takes: give --samples "
            "(or advisor.probe.plan(steps=N) in the script)"
        )
    return Sizes(
        int(epochs or events.plan.get("epochs") or 1), int(steps), int(batch), ", ".join(said)
    )


@dataclass(frozen=True)
class Probed:
    """A command's probe, the sizes of its whole run and what else its steps showed."""

    result: ProbeResult
    sizes: Sizes
    observed: dict[str, Any]


def _later_waits(events: Events) -> list[tuple[float, float]]:
    """The later half of the steps that said their wait for data: (step seconds, wait)."""
    pairs = [(b - a, events.waits[b]) for a, b in events.steps_between(crossing=False)
             if b in events.waits]  # fmt: skip
    return pairs[len(pairs) // 2 :]


def steady_wait(events: Events) -> float:
    """Seconds a later step waited for its data, the mean (0 where no wait was reported)."""
    later = _later_waits(events)
    return sum(w for _, w in later) / len(later) if later else 0.0


def observed(events: Events) -> dict[str, Any]:
    """What the later steps showed beyond their time, where the hooks saw it: the share of a
    step spent waiting for data (``data_wait_share``; near 1: input-bound), the batches an
    optimizer step took (``batches_a_step``, gradient accumulation), the precision, and the
    fine-tuning stack the script's imports showed (``stack``, a stack id of ``advisor.workloads.stacks``) with those
    imports (``stack_evidence``)."""
    found: dict[str, Any] = {}
    later = _later_waits(events)
    if later:
        found["data_wait_share"] = round(
            min(1.0, sum(w for _, w in later) / sum(d for d, _ in later)), 3
        )
    if events.micro:
        found["batches_a_step"] = int(statistics.median(events.micro))
    if events.precision:
        found["precision"] = events.precision
    if events.stack:
        found["stack"] = events.stack
        if events.stack_modules:
            found["stack_evidence"] = ", ".join(events.stack_modules)
    return found


def stack_line(found: dict[str, Any]) -> str | None:
    """``stack: Hugging Face (its imports: transformers, peft)`` for what ``observed`` found,
    None where it found no stack."""
    software = stacks.stacks().get(str(found.get("stack")))
    if software is None:
        return None
    evidence = found.get("stack_evidence")
    line = f"stack: {software.title}" + (f" (its imports: {evidence})" if evidence else "")
    return f"{line}; plan an LLM job on it with --stack {software.id}"


def result_of(
    run: ScriptRun,
    name: str,
    sizes: Sizes,
    device: Fingerprint,
    architecture: Architecture | None,
) -> ProbeResult:
    """A probe result of the command's steady steps, predicting its whole run here: the time to
    its first step (start-up, data loading, compilation: ``startup_seconds``), then every step at
    the steady mean and each epoch's boundary (validation, callbacks) at the median gap
    measured, when one was (``predicted_seconds``)."""
    durations = run.events.durations
    start = stats.warmup_end(durations)
    steady = durations[start:] if start is not None else durations[len(durations) // 2 :]
    measured = stats.steady_stats(steady)
    first = run.events.steps[0] - run.started
    steps = sizes.epochs * sizes.steps
    boundary, once = _boundary(run.events.boundaries, measured.mean)
    relative = min(measured.relative_half_width, 1.0)
    repeating = (steps - 1) * measured.mean + sizes.epochs * boundary
    spread = (steps - 1) * measured.mean * relative
    if run.events.backend:
        device = replace(device, backend=run.events.backend)
    return ProbeResult(
        config=WorkloadConfig(
            PREFIX + name, sizes.steps * sizes.batch, 0, sizes.epochs, sizes.batch
        ),
        device=device,
        step_seconds=measured.mean,
        step_interval=measured.interval if relative < 1.0 else (measured.mean, measured.mean),
        validation_step_seconds=0.0,
        epoch_overhead_seconds=boundary,
        startup_seconds=first + once,
        predicted_seconds=repeating,
        predicted_interval=(repeating - spread, repeating + spread),
        samples_per_second=sizes.batch / measured.mean,
        probe_seconds=run.seconds,
        flops_per_sample=(
            architecture.train_flops_per_sample if architecture else _stated(run.events.plan)
        ),
        parameters=int(run.events.model.get("parameters") or 0),
        peak_host_bytes=0,
        input_wait_seconds=steady_wait(run.events),
        dispatch_seconds=run.events.operators * run.events.operator_seconds,
        device_kernels=run.events.operators,
        architecture=architecture,
        keras=not run.events.native,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _stated(plan: dict[str, Any]) -> float:
    """The training FLOPs of a sample the script stated (``advisor.probe.plan``), else 0."""
    value = plan.get("flops_per_sample")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e18:
        return float(value)
    return 0.0


def _boundary(gaps: Sequence[float], step: float) -> tuple[float, float]:
    """What each epoch's boundary adds to a step (validation, callbacks) and what the first one
    paid once (compiling the validation pass), from the gaps between steps across boundaries."""
    if not gaps:
        return 0.0, 0.0
    later = statistics.median(gaps[1:]) if len(gaps) > 1 else gaps[0]
    return max(0.0, later - step), max(0.0, gaps[0] - later)


def architecture_of(counted: object) -> Architecture | None:
    """What the model's layers say of its work, as the hook counted them on the built model in
    the script's process (``probes.architecture``); None where it could not."""
    if not isinstance(counted, dict):
        return None
    try:
        return Architecture.from_dict(counted)
    except (TypeError, ValueError, KeyError):
        return None
