"""Training frameworks over PyTorch under ``advisor probe``: the run's length as they hold it.

PyTorch's own hooks (``torch_hook``) see a ``Trainer``'s steps and data, not how long it will
train: Hugging Face's ``Trainer.train`` says its ``num_train_epochs`` (or ``max_steps``),
Lightning's ``Trainer.fit`` its ``max_epochs`` (or ``max_steps``). A stop at ``max_steps`` is
said as one epoch of that many steps. Nothing here imports a framework: each ``patch`` is given
its module once the script has imported it."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from advisor.probe.events import emit


def patch_transformers(module: Any) -> None:
    """Hugging Face's ``transformers.trainer``: ``Trainer.train`` says its epochs."""

    def planned(trainer: Any) -> tuple[Any, Any]:
        args = trainer.args
        return args.num_train_epochs, args.max_steps

    _announce(module.Trainer, "train", planned)


def patch_lightning(module: Any) -> None:
    """Lightning's ``trainer.trainer`` (``lightning.pytorch`` or ``pytorch_lightning``):
    ``Trainer.fit`` says its epochs (Lightning's 1,000 where neither limit is set)."""

    def planned(trainer: Any) -> tuple[Any, Any]:
        return trainer.max_epochs if trainer.max_epochs is not None else 1000, trainer.max_steps

    _announce(module.Trainer, "fit", planned)


def _announce(trainer: type, method: str, planned: Callable[[Any], tuple[Any, Any]]) -> None:
    """Wrap ``trainer.method`` to report ``planned(trainer)`` (epochs, max steps) first."""
    run = getattr(trainer, method)
    if getattr(run, "_advisor", False):
        return

    @functools.wraps(run)
    def announced(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            epochs, steps = planned(self)
            if isinstance(steps, int) and steps > 0:
                emit({"event": "plan", "epochs": 1, "steps": steps})
            elif isinstance(epochs, (int, float)) and epochs > 0:
                emit({"event": "plan", "epochs": math.ceil(epochs)})
        except Exception:  # a version that holds them elsewhere: the user says them
            pass
        return run(self, *args, **kwargs)

    announced._advisor = True  # type: ignore[attr-defined]
    setattr(trainer, method, announced)
