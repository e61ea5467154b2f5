"""The events file a script under ``advisor probe`` appends to: one JSON line an event.

Every hook's steps pass through ``emit``: at the process's third step (the script has imported
what it trains with by then) it also says the fine-tuning stack its modules show, once
(``stacks``; nothing for a plain loop)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from advisor.probe import stacks

EVENTS = "ADVISOR_PROBE_EVENTS"
"""The environment variable naming the file the events are appended to."""

_handle: Any = None
"""The events file, opened once and line-buffered: a step pays one short write, not an open.
A forked data-loader worker inherits it empty (each line is flushed as it is written)."""
STACK_STEP = 3
"""The step at which the stack the script's imports show is said."""
_steps = 0
"""Steps this process has reported."""


def probing() -> bool:
    """The process runs under ``advisor probe``."""
    return bool(os.environ.get(EVENTS))


def emit(event: dict[str, Any]) -> None:
    """Append ``event``, stamped with the time, to the events file (nothing outside a probe)."""
    global _handle, _steps
    path = os.environ.get(EVENTS)
    if not path:
        return
    if _handle is None:
        _handle = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - kept open
    event["t"] = time.time()
    _handle.write(json.dumps(event) + "\n")
    if event.get("event") == "step":
        _steps += 1
        if _steps == STACK_STEP:
            _say_stack()


def _say_stack() -> None:
    """The ``stack`` event: the fine-tuning stack the imported modules show, if any."""
    try:
        found = stacks.detect()
    except Exception:  # never stop the user's script
        return
    if found is not None:
        emit({"event": "stack", "stack": found[0], "modules": found[1]})
