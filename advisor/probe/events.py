"""The events file a script under ``advisor probe`` appends to: one JSON line an event."""

from __future__ import annotations

import json
import os
import time
from typing import Any

EVENTS = "ADVISOR_PROBE_EVENTS"
"""The environment variable naming the file the events are appended to."""

_handle: Any = None
"""The events file, opened once and line-buffered: a step pays one short write, not an open.
A forked data-loader worker inherits it empty (each line is flushed as it is written)."""


def probing() -> bool:
    """The process runs under ``advisor probe``."""
    return bool(os.environ.get(EVENTS))


def emit(event: dict[str, Any]) -> None:
    """Append ``event``, stamped with the time, to the events file (nothing outside a probe)."""
    global _handle
    path = os.environ.get(EVENTS)
    if not path:
        return
    if _handle is None:
        _handle = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - kept open
    event["t"] = time.time()
    _handle.write(json.dumps(event) + "\n")
