"""JAX under ``advisor probe``: the jitted training step's calls, its batch, its compiled FLOPs.

No edit to the script: every function ``jax.jit`` wraps is wrapped once more, and
``optax.apply_updates`` (which Flax's ``TrainState.apply_gradients`` calls too) marks the
function being traced when it runs: a jitted function whose trace applied updates is a training
step. Each later call of it (not under another trace) is a step, said once it is done: a call
dispatches its own step first and then waits for the outputs of the step ``IN_FLIGHT`` calls
back, so that a step's time is its device's, not JAX's asynchronous dispatch, while the loop's
Python work (Flax NNX splitting and merging its state, the next batch) overlaps the device as it
does unwatched. Where that step's outputs were all donated to a later one, the later one's are
waited for (it needed them). The last ``IN_FLIGHT`` steps are not said. A step's batch is the leading
dimension of the last positional argument's first array (``train_step(state, batch)``,
``train_step(params, opt_state, x, y)``; a PRNG key is passed over). At the third step the step
is lowered and compiled once more for XLA's ``cost_analysis``: the FLOPs of one step, forward,
backward and update. That step is marked ``counted`` and its time left out.

A loop that neither jits its step nor applies updates through optax marks its steps with
``advisor.probe.step()``. Nothing here imports JAX or optax: each ``patch`` is given its module
once the script has imported it.
"""

from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass
from typing import Any

from advisor.probe.events import emit

COUNTED_STEP = 3
"""The step whose FLOPs XLA is asked for (two before it compile and warm up)."""
IN_FLIGHT = 2
"""Steps dispatched and not yet waited for: the loop runs this far ahead of the device, as JAX's
asynchronous dispatch lets an unwatched one run (further still), so that its Python work
between steps overlaps the device's."""


class _Traces:
    """Updates applied while some function was being traced (a counter the jit wrapper reads)."""

    applied = 0


def patch_optax(optax: Any) -> None:
    """``optax.apply_updates`` counts the updates it applies (at trace time, under ``jit``)."""
    apply = optax.apply_updates
    if getattr(apply, "_advisor", False):
        return

    @functools.wraps(apply)
    def counted(*args: Any, **kwargs: Any) -> Any:
        _Traces.applied += 1
        return apply(*args, **kwargs)

    counted._advisor = True  # type: ignore[attr-defined]
    optax.apply_updates = counted


def patch_jax(jax: Any) -> None:
    """Wrap ``jax.jit``: a jitted function that applied updates while traced reports its calls."""
    jit = jax.jit
    if getattr(jit, "_advisor", False):
        return

    @functools.wraps(jit)
    def reported_jit(*args: Any, **kwargs: Any) -> Any:
        jitted = jit(*args, **kwargs)
        if not callable(jitted):
            return jitted
        return _Step(jax, jitted)

    reported_jit._advisor = True  # type: ignore[attr-defined]
    jax.jit = reported_jit


@dataclass(frozen=True)
class _Pending:
    """A step dispatched and not yet said: its number, its batch and its outputs."""

    number: int
    batch: int | None
    outputs: list[Any]


class _Step:
    """A jitted function, reporting each call once its trace applied updates."""

    def __init__(self, jax: Any, jitted: Any) -> None:
        self._jax, self._jitted = jax, jitted
        self._training = False
        self._steps = 0
        self._pending: deque[_Pending] = deque()
        functools.update_wrapper(self, jitted)

    def __getattr__(self, name: str) -> Any:  # .lower, .trace, .clear_cache, ...
        return getattr(self._jitted, name)

    def __get__(self, instance: Any, owner: Any = None) -> Any:  # a jitted method
        return self if instance is None else functools.partial(self.__call__, instance)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        before = _Traces.applied
        out = self._jitted(*args, **kwargs)
        if _Traces.applied > before:
            self._training = True
        if not self._training or _traced(self._jax, args):
            return out
        self._steps += 1
        if self._steps == 1:
            emit({"event": "backend", "name": "jax", "native": True})
        outputs = self._jax.tree_util.tree_leaves(out)
        self._pending.append(_Pending(self._steps, _batch(args), outputs))
        while len(self._pending) > IN_FLIGHT:
            oldest = self._pending.popleft()
            self._jax.block_until_ready(_readiness(oldest, self._pending))
            counted = oldest.number == COUNTED_STEP
            emit({"event": "step", "batch": oldest.batch, "counted": counted})
        if self._steps == COUNTED_STEP:
            model = _cost(self._jitted, args, kwargs)
            if model is not None and self._pending[-1].batch:
                emit({"event": "plan", "flops_per_sample": model / self._pending[-1].batch})
        return out


def _readiness(step: _Pending, later: deque[_Pending]) -> Any:
    """What to wait for to know ``step`` done: one of its outputs (a computation's outputs are
    ready together); where a later step was donated them all, that step's (it needed them)."""
    for pending in (step, *later):
        alive = next((leaf for leaf in pending.outputs if not _deleted(leaf)), None)
        if alive is not None:
            return alive
    return later[-1].outputs


def _deleted(leaf: Any) -> bool:
    """An output array donated to a later call (or not an array): nothing to wait for."""
    try:
        return bool(leaf.is_deleted())
    except AttributeError:  # not a jax.Array: a Python number passed through
        return True


def _traced(jax: Any, args: tuple[Any, ...]) -> bool:
    """Called inside another function's trace: its arguments are tracers, not arrays."""
    tracer = getattr(getattr(jax, "core", None), "Tracer", None)
    if tracer is None:
        return False
    leaves = jax.tree_util.tree_leaves(args)
    return any(isinstance(leaf, tracer) for leaf in leaves[:64])


def _batch(args: tuple[Any, ...]) -> int | None:
    """The leading dimension of the last positional argument's first array that is not a PRNG
    key: the batch of ``train_step(state, batch)`` and of ``train_step(params, state, x, y)``."""
    for arg in reversed(args):
        for leaf in _leaves(arg):
            shape = getattr(leaf, "shape", None)
            dtype = str(getattr(leaf, "dtype", ""))
            if not shape or "key" in dtype or (dtype == "uint32" and tuple(shape) == (2,)):
                continue
            return int(shape[0])
    return None


def _leaves(value: Any, depth: int = 0) -> list[Any]:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [value]
    if depth >= 4:
        return []
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item, depth + 1)]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item, depth + 1)]
    return []


def _cost(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> float | None:
    """XLA's count of one step's FLOPs (None where the backend does not say)."""
    try:
        analysis = jitted.lower(*args, **kwargs).compile().cost_analysis()
    except Exception:  # a backend or a version without it
        return None
    if isinstance(analysis, list):
        analysis = analysis[0] if analysis else {}
    flops = analysis.get("flops") if isinstance(analysis, dict) else None
    return float(flops) if isinstance(flops, (int, float)) and flops > 0 else None
