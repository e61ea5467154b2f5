"""Wall-clock timing of real ``model.fit`` work, through a Keras callback.

The callback stamps the end of every training step, every validation step and every epoch
boundary with ``time.perf_counter()``; the time between two stamps is what the full run pays
(input pipeline, step, callbacks), not only the compiled step. It also decides when to stop:
as soon as the steady step time is known to the target precision, at the deadline, or on cancel.
"""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from probes import quiet, stats

CHECK_EVERY_SECONDS = 0.2
"""How often the stopping rule is evaluated (it sorts the durations)."""


@dataclass
class Stamps:
    """Everything the callback saw, in ``perf_counter`` seconds."""

    fit_start: float = 0.0
    train_begin: float = 0.0
    """When ``fit`` began training: what came before it is setting up the data."""
    train_ends: list[float] = field(default_factory=list)
    train_epochs: list[int] = field(default_factory=list)
    """Epoch of each training step."""
    epoch_begins: list[float] = field(default_factory=list)
    epoch_ends: list[float] = field(default_factory=list)
    test_begins: list[float] = field(default_factory=list)
    test_ends: list[float] = field(default_factory=list)
    test_batch_ends: list[list[float]] = field(default_factory=list)
    """Per validation pass, the end of each validation step."""
    cpu: dict[str, list[float]] = field(default_factory=dict)
    """Process CPU seconds (``time.process_time``) at the same stamps, by the name of the list
    (``train_ends``, ``epoch_begins``, ``epoch_ends``, ``test_begins``, ``test_ends``); empty
    when not taken. Wall time that passed with no CPU in use is a wait (``probes.teardown``)."""

    def idle(self, name: str, index: int, since: str, since_index: int) -> float:
        """Seconds without CPU between two stamps (0 when CPU times were not taken)."""
        if name not in self.cpu or since not in self.cpu:
            return 0.0
        wall = getattr(self, name)[index] - getattr(self, since)[since_index]
        used = self.cpu[name][index] - self.cpu[since][since_index]
        return max(0.0, wall - used)

    def step_idle(self, i: int) -> float:
        """Seconds without CPU in training step ``i`` (from the previous step's end)."""
        return self.idle("train_ends", i, "train_ends", i - 1) if i > 0 else 0.0

    @property
    def setup_seconds(self) -> float:
        """Seconds ``fit`` spent before its first epoch (0 when not stamped)."""
        return max(0.0, self.train_begin - self.fit_start) if self.train_begin else 0.0

    def durations(self) -> list[float]:
        """Wall time of each training step, from the previous step's end (or the fit's start)."""
        ends = self.train_ends
        return [ends[0] - self.fit_start] + [b - a for a, b in itertools.pairwise(ends)]

    def steady_durations(self, start: int) -> list[float]:
        """Durations from ``start`` on, without the first step of each later epoch (it carries
        the epoch boundary: those are counted as per-epoch overhead)."""
        durations = self.durations()
        keep = [
            d
            for i, d in enumerate(durations)
            if i >= start and (i == 0 or self.train_epochs[i] == self.train_epochs[i - 1])
        ]
        return keep


@dataclass(frozen=True)
class StopRule:
    """When the measuring fit may stop."""

    deadline: float
    """``perf_counter`` time at which to stop whatever the precision."""
    target: float = 0.02
    """Relative 95% half-width to reach."""
    min_steady: int = stats.MIN_STEADY
    min_seconds: float = 0.0
    """Fewest seconds of fitting before precision alone may stop it: stopping as soon as the
    interval is narrow favours calm moments of a shared machine (optional stopping)."""
    reserve_steps: float = 0.0
    """Steps' worth of time to leave before the deadline for the work that follows the fit."""
    reserve_seconds: float = 0.0
    min_steps: int = 3
    """Steps to take before the deadline may stop the fit (one step alone is all tracing)."""
    cancel: threading.Event | None = None
    on_check: Callable[[Stamps, stats.SteadyStats | None], None] | None = None
    """Called at every evaluation of the rule (progress reporting)."""


class Timer(Protocol):
    """What a fit's timing callback holds once the fit returns."""

    stamps: Stamps
    cancelled: bool
    """True when the fit stopped because ``StopRule.cancel`` was set."""


def make_timer(rule: StopRule | None) -> Any:
    """A fresh Keras callback (a ``Timer``) that fills ``stamps`` and applies ``rule``."""
    quiet.prepare_tensorflow()
    import keras

    class Timer(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.stamps = Stamps(fit_start=time.perf_counter())
            self.cancelled = False
            self.steady: stats.SteadyStats | None = None
            self._epoch = 0
            self._last_check = 0.0

        def _stamp(self, name: str) -> float:
            now = time.perf_counter()
            getattr(self.stamps, name).append(now)
            self.stamps.cpu.setdefault(name, []).append(time.process_time())
            return now

        def on_train_begin(self, logs: Any = None) -> None:
            self.stamps.train_begin = time.perf_counter()

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self._epoch = epoch
            self._stamp("epoch_begins")

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            self._stamp("epoch_ends")

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            now = self._stamp("train_ends")
            self.stamps.train_epochs.append(self._epoch)
            if rule is None or now - self._last_check < CHECK_EVERY_SECONDS:
                return
            self._last_check = now
            self._apply(rule, now)

        def on_test_begin(self, logs: Any = None) -> None:
            self._stamp("test_begins")
            self.stamps.test_batch_ends.append([])

        def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
            self.stamps.test_batch_ends[-1].append(time.perf_counter())

        def on_test_end(self, logs: Any = None) -> None:
            self._stamp("test_ends")

        def _apply(self, rule: StopRule, now: float) -> None:
            if rule.cancel is not None and rule.cancel.is_set():
                self.cancelled = True
                self.model.stop_training = True
                return
            start = stats.warmup_end(self.stamps.durations())
            steady = self.stamps.steady_durations(start) if start is not None else []
            self.steady = stats.steady_stats(steady) if len(steady) >= rule.min_steady else None
            if rule.on_check is not None:
                rule.on_check(self.stamps, self.steady)
            long_enough = now - self.stamps.fit_start >= rule.min_seconds
            narrow = self.steady is not None and self.steady.relative_half_width <= rule.target
            precise = narrow and long_enough
            recent = self.stamps.durations()[-stats.WINDOW :]
            step = self.steady.mean if self.steady is not None else statistics.median(recent)
            reserve = rule.reserve_seconds + rule.reserve_steps * step
            late = now + reserve >= rule.deadline and len(self.stamps.train_ends) >= rule.min_steps
            if precise or late:
                self.model.stop_training = True

    return Timer()
