"""benchmarks/gpu/script_runs.py: user scripts trained for real on a GPU session's machine, the
measured half of the scripts' cross-device target. Rehearsed here on the CPU at tiny sizes, in a
process of its own as a GPU session runs it: each run's line carries the script's own timing of
its training loop and its steps, the first line the machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu" / "script_runs.py"


def test_a_rehearsed_run_reports_its_training_loop_and_steps(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--rehearse", "--only", "0", "--out", str(out)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    machine, run = (json.loads(line) for line in out.read_text().splitlines())
    assert machine["machine"]["gpu"] == "cpu" and machine["machine"]["torch"]
    assert (run["script"], run["precision"]) == ("dawn.py", "mixed")
    assert "--half" in run["command"] and "error" not in run
    assert run["steps"] == 2  # 1,024 images in batches of 512, one epoch
    assert 0 < run["train_seconds"] < run["wall_seconds"]
