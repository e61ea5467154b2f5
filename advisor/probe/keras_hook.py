"""Keras under ``advisor probe``: ``Model.fit`` reports its plan, steps, epochs and layers.

A callback added to every ``fit`` (on any backend) reports the plan (epochs, steps an epoch,
the batch: ``batch_size`` for arrays, a dataset's batch), each training step's end, each
epoch's end, the backend and, after the first step, the model's layers as
``probes.architecture`` counts them. Nothing here imports Keras: ``patch`` is given it."""

from __future__ import annotations

from typing import Any

from advisor.probe.events import emit


def patch(keras: Any) -> None:
    """Add the reporting callback to every ``keras.Model.fit`` (once, however often called)."""
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
            emit({"event": "plan", "epochs": params.get("epochs"), "steps": params.get("steps"),
                  "batch": batch})  # fmt: skip
            emit({"event": "backend", "name": keras.backend.backend()})

        def on_train_batch_end(self, index: int, logs: Any = None) -> None:
            emit({"event": "step", "batch": batch})
            if not self.described:
                self.described = True
                _describe(self.model)

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            emit({"event": "epoch"})

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
    emit({"event": "model", "architecture": counted, "parameters": int(model.count_params())})
