"""The whole `advisor recommend` command over 100,000 offerings, from a stored probe.

Real parts end to end: a fresh ADVISOR_HOME; the synthetic 100,000-row SkyPilot-format catalog
(``prices_catalog.py``) refreshed through ``pricing.refresh`` from a real HTTP server on
127.0.0.1; a real probe of the workload stored by ``advisor probe``; then ``advisor recommend``
run as a fresh process ``--runs`` times per output format, timed by wall clock (process start to
exit). Also checks that TensorFlow is never imported on that path. Target: <= 300 ms.

    .venv/bin/python benchmarks/recommend_command.py [--runs 9] [--model mlp]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.pricing.server import FixtureServer  # noqa: E402
from tests.price_catalog import write_catalog  # noqa: E402


def advisor(home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ADVISOR_HOME": str(home), "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, check=check,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--model", default="mlp")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        home = root / "home"
        write_catalog(root)
        with FixtureServer(root).running() as server:
            refreshed = advisor(
                home, "prices", "refresh", "--source", "skypilot/aws", "--allow-shrink",
                "--url", f"{server.url}/skypilot",  # the synthetic catalog replaces the seed's
            )  # fmt: skip
        print(refreshed.stderr.strip().splitlines()[-1] if refreshed.stderr.strip() else "")
        listed = advisor(home, "prices", "list", "--json")
        print(f"offerings in the database: {listed.stdout.count('instance_type')}")
        advisor(home, "probe", "--model", args.model, "--budget", "8")
        command = ("recommend", "--model", args.model, "--deadline", "8h")
        for fmt in ("--json", "--table"):
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                advisor(home, *command, fmt)
                times.append(time.perf_counter() - start)
            times.sort()
            print(
                f"advisor {' '.join(command)} {fmt}: median {statistics.median(times) * 1000:.0f} ms"
                f" (min {times[0] * 1000:.0f}, max {times[-1] * 1000:.0f}; {args.runs} runs)"
            )
        env_check = advisor(home, *command, "--json", check=False)
        traced = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "advisor", *command, "--json"],
            cwd=ROOT, env={**os.environ, "ADVISOR_HOME": str(home)},
            capture_output=True, text=True,
        )  # fmt: skip
        heavy = [m for m in ("tensorflow", "keras", "textual") if f" {m}\n" in traced.stderr]
        print(f"exit code {env_check.returncode}; heavy modules imported: {heavy or 'none'}")


if __name__ == "__main__":
    main()
