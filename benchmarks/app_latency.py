"""The app's cancel and quit while a probe runs: how long each takes to return.

Real parts: the Textual app driven by its own test pilot (``App.run_test``), probing
``cifar10_cnn`` in a real probe child (TensorFlow importing or measuring when the key comes, one
second after the probe starts). Cancel is timed from ``x`` to the app no longer probing; quit
from ``ctrl+q`` to the app's run returning. Each pass is a fresh app in a fresh ``ADVISOR_HOME``;
the device fingerprint is read once, as a stored probe would have it. Target: both under a second
(the unit test, ``tests/tui/test_tui.py``, checks only that neither waits for the probe; a bound
of a second there failed on a loaded CI machine at 1.13 s). The machine is shared: run nothing
heavy beside it.

    .venv/bin/python benchmarks/app_latency.py [--passes 7] [--out benchmarks/results/app_latency.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.tui.app import make_app  # noqa: E402
from advisor.tui.form import FormState  # noqa: E402


async def _until(pilot, done, seconds: float) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds / 0.02)):
        if done():
            return
        await pilot.pause(0.02)
    raise SystemExit("the app did not get there in time")


async def one_pass() -> dict[str, float]:
    """Cancel then quit one probing app; seconds each took."""
    app = make_app(FormState(model="cifar10_cnn"))
    timings: dict[str, float] = {}
    async with app.run_test(size=(100, 32)) as pilot:
        await _until(pilot, lambda: app.probing, 60)
        await pilot.pause(1.0)
        started = time.monotonic()
        await pilot.press("x")
        await _until(pilot, lambda: not app.probing, 10)
        timings["cancel"] = time.monotonic() - started
        await pilot.press("f")
        await _until(pilot, lambda: app.probing, 60)
        await pilot.pause(1.0)
        started = time.monotonic()
        await pilot.press("ctrl+q")
    timings["quit"] = time.monotonic() - started
    return timings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/app_latency.json")
    args = parser.parse_args()
    passes = []
    for index in range(args.passes):
        with tempfile.TemporaryDirectory() as home:
            os.environ["ADVISOR_HOME"] = home
            timings = asyncio.run(one_pass())
        passes.append({**timings, "load": os.getloadavg()[0]})
        print(f"pass {index + 1}: cancel {timings['cancel']:.3f} s, quit {timings['quit']:.3f} s,"
              f" load {passes[-1]['load']:.1f}", flush=True)  # fmt: skip
    summary = {
        key: {"median": statistics.median(p[key] for p in passes),
              "min": min(p[key] for p in passes), "max": max(p[key] for p in passes)}
        for key in ("cancel", "quit")
    }  # fmt: skip
    for key, figures in summary.items():
        print(
            f"{key}: median {figures['median']:.3f} s, {figures['min']:.3f}-{figures['max']:.3f} s"
        )
    record = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": os.uname().nodename,
              "cpus": os.cpu_count(), "passes": passes, "summary": summary}  # fmt: skip
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
