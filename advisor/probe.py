"""Inside a user's training script under ``advisor probe -- COMMAND``: what its steps report.

``advisor probe`` runs the script with ``ADVISOR_PROBE_EVENTS`` naming a file and this module
installed by ``sitecustomize`` (``probes/script_site``): every Keras ``Model.fit`` then reports
its plan (epochs, steps an epoch, batch), each training step's end, each epoch's end and, after
its first step, the model's configuration and parameter count, one JSON line each, with no edit
to the script. A loop Keras does not run marks its steps itself::

    import advisor.probe as ap
    for batch in loader:
        train_step(batch)
        ap.step(batch=len(batch))

Outside a probe (no ``ADVISOR_PROBE_EVENTS``) every call here does nothing. This module imports
nothing but the standard library: it runs in the user's process, under the user's interpreter.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import time
from typing import Any

EVENTS = "ADVISOR_PROBE_EVENTS"
"""The environment variable naming the file the events are appended to."""


def step(batch: int | None = None) -> None:
    """One training step has ended (``batch``: the samples it computed, when known)."""
    _emit({"event": "step", "batch": batch})


def plan(
    *,
    epochs: int | None = None,
    steps: int | None = None,
    batch: int | None = None,
    flops_per_sample: float | None = None,
) -> None:
    """The run's size as the script knows it: epochs, optimizer steps an epoch, batch; and the
    training FLOPs of one sample (forward and backward), which let other devices be predicted."""
    _emit({"event": "plan", "epochs": epochs, "steps": steps, "batch": batch,
           "flops_per_sample": flops_per_sample})  # fmt: skip


_handle: Any = None
"""The events file, opened once and line-buffered: a step pays one short write, not an open."""


def _emit(event: dict[str, Any]) -> None:
    global _handle
    path = os.environ.get(EVENTS)
    if not path:
        return
    if _handle is None:
        _handle = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - kept open
    event["t"] = time.time()
    _handle.write(json.dumps(event) + "\n")


def install() -> None:
    """Report Keras's ``fit`` once Keras is imported (nothing when no probe is running)."""
    if os.environ.get(EVENTS) and not any(isinstance(f, _KerasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _KerasFinder())
        if "keras" in sys.modules:
            _patch(sys.modules["keras"])


class _KerasFinder(importlib.abc.MetaPathFinder):
    """Finds ``keras`` as Python would, and patches it once its module has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "keras":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _patch(keras: Any) -> None:
    model = keras.Model
    if getattr(model.fit, "_advisor", False):
        return
    fit = model.fit

    def reported_fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        callbacks = list(kwargs.pop("callbacks", None) or [])
        kwargs["callbacks"] = [*callbacks, _callback(keras, _batch_of(args, kwargs))]
        return fit(self, *args, **kwargs)

    reported_fit._advisor = True  # type: ignore[attr-defined]
    model.fit = reported_fit


def _batch_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The batch ``fit`` was given: ``batch_size`` for arrays (Keras's 32 by default), else the
    static batch dimension of a dataset's first component, when it has one."""
    x = args[0] if args else kwargs.get("x")
    spec = getattr(x, "element_spec", None)
    if spec is not None:
        first = spec[0] if isinstance(spec, (tuple, list)) else spec
        shape = getattr(first, "shape", None)
        size = shape[0] if shape is not None and len(shape) else None
        return int(size) if size is not None else _batched(x)
    if hasattr(x, "__len__") and not isinstance(x, dict):
        return int(kwargs.get("batch_size") or (args[2] if len(args) > 2 else None) or 32)
    return None


def _batched(dataset: Any) -> int | None:
    """The batch a ``tf.data`` pipeline's ``batch`` stage makes (its last batch may be short, so
    the element's shape does not say it), found through the stages after it."""
    for _ in range(64):
        size = getattr(dataset, "_batch_size", None)
        if size is not None:
            try:
                return int(size)
            except (TypeError, ValueError):
                return int(size.numpy()) if hasattr(size, "numpy") else None
        dataset = getattr(dataset, "_input_dataset", None)
        if dataset is None:
            return None
    return None


def _callback(keras: Any, batch: int | None) -> Any:
    class Reporter(keras.callbacks.Callback):
        described = False

        def on_train_begin(self, logs: Any = None) -> None:
            params = self.params or {}
            plan(epochs=params.get("epochs"), steps=params.get("steps"), batch=batch)
            _emit({"event": "backend", "name": keras.backend.backend()})

        def on_train_batch_end(self, index: int, logs: Any = None) -> None:
            step(batch)
            if not self.described:
                self.described = True
                _describe(self.model)

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            _emit({"event": "epoch"})

    return Reporter()


def _describe(model: Any) -> None:
    """The model's size and what its layers say of its work (``probes.architecture``, counted
    here, on the built model, where advisor's own modules can be imported; None otherwise)."""
    try:
        from dataclasses import asdict

        from probes import architecture

        counted: dict[str, Any] | None = asdict(architecture.read(model))
    except Exception:  # a model or an interpreter that cannot say
        counted = None
    _emit({"event": "model", "architecture": counted, "parameters": int(model.count_params())})
