"""A probe in a process of its own, for callers that must never import TensorFlow (the app).

``run_in_child(spec, progress=..., cancel=...)`` starts ``python -m probes.child``, which probes
``spec`` and writes one JSON object per line on its stdout: ``{"progress": ...}`` while it
measures, then ``{"result": ...}`` or ``{"error": "one line"}``. The caller's process keeps its
screen clean (TensorFlow's own output goes to a temporary file) and its exit quick; cancelling
kills the child at once. The child exits by itself when its parent goes away (stdin closes).
Nothing here stores anything: the caller stores the result it gets back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from typing import Any

from advisor.errors import AdvisorError, Cancelled
from probes import quiet
from probes.fitting import ProbeProgress, Progress
from probes.history import from_json
from probes.result import ProbeResult
from probes.spec import ProbeSpec, spec_for

POLL_SECONDS = 0.05
"""How often the watcher looks at the cancel flag."""


def spec_arguments(spec: ProbeSpec) -> dict[str, Any]:
    """What ``spec_for`` needs to rebuild ``spec`` in another process."""
    c = spec.config
    return {
        "model": str(spec.path) if spec.path is not None else spec.label,
        "epochs": c.epochs,
        "batch_size": c.batch_size,
        "samples": c.samples,
        "validation_samples": c.validation_samples,
    }


BUDGET_SECONDS = 20.0
"""The probe's budget when none is given (``advisor probe``'s default)."""


def child_command(spec: ProbeSpec, budget_seconds: float = BUDGET_SECONDS) -> list[str]:
    """The command line of the child that probes ``spec`` within ``budget_seconds``."""
    arguments = {**spec_arguments(spec), "budget_seconds": budget_seconds}
    return [sys.executable, "-m", "probes.child", json.dumps(arguments)]


def run_in_child(
    spec: ProbeSpec,
    *,
    budget_seconds: float = BUDGET_SECONDS,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ProbeResult:
    """Probe ``spec`` in a child process; raises ``Cancelled`` (the child killed) or
    ``AdvisorError`` (the child's error, or its crash) and stores nothing."""
    cancel = cancel or threading.Event()
    command = child_command(spec, budget_seconds)
    with tempfile.TemporaryFile() as log:
        child = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        watcher = threading.Thread(target=_watch, args=(child, cancel), daemon=True)
        watcher.start()
        result: ProbeResult | None = None
        error: str | None = None
        assert child.stdout is not None
        for line in child.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                continue  # a stray print: not ours
            if "progress" in message and progress is not None:
                raw = message["progress"]
                progress(ProbeProgress(**{**raw, "recent": tuple(raw["recent"])}))
            elif "result" in message:
                result = from_json(json.dumps(message["result"]))
            elif "error" in message:
                error = str(message["error"])
        code = child.wait()
        if child.stdin is not None:
            child.stdin.close()
        if cancel.is_set():
            raise Cancelled("probe cancelled; nothing was stored")
        if result is not None:
            return result
        if error is not None:
            raise AdvisorError(error)
        log.seek(0)
        tail = [x for x in log.read().decode(errors="replace").splitlines() if x.strip()]
        last = f": {tail[-1].strip()}" if tail else ""
        raise AdvisorError(f"the probe stopped unexpectedly (exit {code}){last}")


def _watch(child: subprocess.Popen[str], cancel: threading.Event) -> None:
    """Kill the child as soon as ``cancel`` is set (TensorFlow cannot be interrupted politely)."""
    while child.poll() is None:
        if cancel.wait(POLL_SECONDS):
            child.kill()
            return


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


def _orphan_guard() -> None:
    """End this process when the parent closes stdin (or dies)."""
    sys.stdin.read()
    os._exit(1)


def _age_seconds() -> float:
    """How long ago this process started (Linux: ``/proc``; else 0): the probe's budget counts
    from the child's start, Python's and TensorFlow's imports in it, as its parent waits."""
    try:
        with open("/proc/uptime") as uptime, open("/proc/self/stat") as stat:
            now = float(uptime.read().split()[0])
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22: start time
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(0.0, now - ticks / os.sysconf("SC_CLK_TCK"))


def main(argv: list[str]) -> int:
    quiet.prepare()
    threading.Thread(target=_orphan_guard, daemon=True).start()
    try:
        arguments = json.loads(argv[0])
        spec = spec_for(
            arguments["model"],
            epochs=arguments.get("epochs"),
            batch_size=arguments.get("batch_size"),
            samples=arguments.get("samples"),
            validation_samples=arguments.get("validation_samples"),
        )
        from probes.run import probe

        result = probe(
            spec,
            budget_seconds=float(arguments.get("budget_seconds", BUDGET_SECONDS)),
            started=time.perf_counter() - _age_seconds(),
            progress=lambda event: _send({"progress": asdict(event)}),
        )
    except AdvisorError as exc:
        _send({"error": str(exc)})
        return 1
    except Exception as exc:  # the parent shows one line, never a traceback
        _send({"error": f"{type(exc).__name__}: {exc}".splitlines()[0]})
        return 1
    _send({"result": asdict(result)})
    return 0


if __name__ == "__main__":
    # os._exit: skip TensorFlow's slow tear-down, the parent has what it needs
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
