"""A user's own script, probed here, against its published training times on a GPU.

transformers/examples publish how long their scripts train: ``run_glue.py`` (BERT-base, nine
GLUE tasks, on one Titan RTX in fp32 and with ``--fp16``) and ``run_xnli.py`` (multilingual
BERT-base, on one V100 16GB); cifar10-fast's ``dawn.py`` (ResNet-9 on CIFAR-10 in fp16, its
author's V100 and Lambda's V100, Titan RTX, RTX 2080 Ti and GTX 1080 Ti), all in
``data/script-runs-published.csv`` with their sources. Each script is probed as a user probes it
(``advisor probe --name NAME --budget B -- python benchmarks/scripts/hf_run_glue.py ...``, a
process of its own, a fresh ``ADVISOR_HOME``), then its step on the published GPU is predicted
(``predict()``, the published precision) and times the run's steps (epochs x batches). Nothing
of it is fitted: every row is held out.
Passes interleave the two scripts; the figures are the median prediction of the passes.
``--measured FILE`` adds the real runs ``benchmarks/gpu/script_runs.py`` wrote on a GPU (the
scripts' own timing of their training loops, today's software), held against the same probes.

    .venv/bin/python benchmarks/script_cross_device.py [--passes 3] [--budget 90]
        [--measured script-runs.jsonl ...] [--out benchmarks/results/script_cross_device.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor import service  # noqa: E402
from advisor.estimate.predict import predict  # noqa: E402
from advisor.estimate.prediction import Target  # noqa: E402

PUBLISHED = ROOT / "data" / "script-runs-published.csv"
SCRIPTS = ROOT / "benchmarks" / "scripts"
COMMANDS = {
    "run_glue.py": ["hf_run_glue.py", "--samples", "3668", "--epochs", "5"],  # MRPC, as its README runs it
    "run_xnli.py": ["hf_run_glue.py", "--multilingual", "--samples", "392702", "--epochs", "2",
                    "--learning-rate", "5e-5"],
    "dawn.py": ["resnet9_cifar.py", "--epochs", "24"],
}  # fmt: skip
"""The script each published one is probed as, and its arguments (``hf_run_glue.py`` stands for
both of transformers', ``resnet9_cifar.py`` for cifar10-fast's)."""


def probe_here(script: str, budget: float) -> dict[str, Any]:
    """Probe ``script``'s command in a fresh home; its step here and on each published GPU."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "ADVISOR_HOME": home}
        command = [str(ROOT / ".venv/bin/advisor"), "probe", "--name", Path(script).stem, "--budget",
                   str(budget), "--json", "--", sys.executable, str(SCRIPTS / COMMANDS[script][0]),
                   *COMMANDS[script][1:]]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            raise SystemExit(f"{script}: the probe failed: {done.stderr.strip()[-400:]}")
        os.environ["ADVISOR_HOME"] = home
        probe = service.stored_script_probe(Path(script).stem)
        assert probe is not None
        steps = {}
        for device, precision in {(r["device"], r["precision"]) for r in rows(script)}:
            prediction = predict(probe, Target(device, 1), precision=precision)
            steps[f"{device} {precision}"] = prediction.step_seconds
        return {"step_here": probe.step_seconds, "probe_seconds": probe.probe_seconds,
                "flops_per_sample": probe.flops_per_sample, "steps": steps}  # fmt: skip


MEASURED: list[dict[str, str]] = []
"""Real runs on a GPU (``measured_rows``), scored beside the published ones."""


def rows(script: str | None = None) -> list[dict[str, str]]:
    with PUBLISHED.open() as f:
        found = [*csv.DictReader(f), *MEASURED]
    return [r for r in found if script is None or r["script"] == script]


def measured_rows(path: Path) -> list[dict[str, str]]:
    """``benchmarks/gpu/script_runs.py``'s lines as rows of the published table: the GPU its
    first line names (``data/devices.csv``'s name), each run's reported training time and steps
    (a run that failed, or a GPU the catalog lacks, is left out and said)."""
    from advisor.fitting.derive.llm_runs import DEVICES

    try:
        lines = [json.loads(text) for text in path.read_text().splitlines() if text.strip()]
        where = lines[0]["machine"]
        device = DEVICES.get(str(where["gpu"]).removeprefix("NVIDIA ").strip(), "")
        source = f"advisor-script-runs-{str(where['date']).replace('-', '')}"
        software = f"torch {where['torch']}, transformers {where['transformers']}"
    except (OSError, ValueError, IndexError, KeyError, TypeError) as error:
        print(f"{path}: not script_runs.py's lines ({error})", file=sys.stderr)
        raise SystemExit(2) from None
    found = []
    for number, line in enumerate(lines[1:], start=2):
        fault = _fault(line, set(COMMANDS))
        if fault or "error" in line or not device:
            said = fault or line.get("error") or f"{where['gpu']} is not in the catalog"
            print(f"{path.name}: line {number} left out: {str(said)[:200]}")
            continue
        found.append({
            "source": source, "script": line["script"], "task": "measured", "device": device,
            "precision": line["precision"], "steps": str(line["steps"]), "software": software,
            "published_seconds": f"{line['train_seconds']:.3f}",
        })  # fmt: skip
    return found


def _fault(line: dict[str, Any], scripts: set[str]) -> str:
    """What makes a run's line unusable: a script or precision this benchmark does not probe, a
    training time or step count that is not a positive finite number."""
    if line.get("script") not in scripts or line.get("precision") not in ("fp32", "mixed"):
        return "an unknown script or precision"
    if "error" in line:
        return ""
    seconds, steps = line.get("train_seconds"), line.get("steps")
    if not isinstance(seconds, int | float) or not math.isfinite(seconds) or seconds <= 0:
        return f"training seconds {seconds!r}"
    if not isinstance(steps, int) or isinstance(steps, bool) or steps <= 0:
        return f"steps {steps!r}"
    return ""


def score(passes: list[dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each published row against the median of its passes' predictions."""
    scored = []
    for row in rows():
        key = f"{row['device']} {row['precision']}"
        step = statistics.median(p[row["script"]]["steps"][key] for p in passes)
        if row.get("steps"):  # a real run says how many it took
            steps = int(row["steps"])
        else:  # (dawn.py's samples are the 97 whole batches it trains an epoch, the last dropped)
            epochs, batches = int(row["epochs"]), int(row["train_samples"]) / int(row["batch_size"])
            steps = epochs * math.ceil(batches)
        predicted = step * steps
        published = float(row["published_seconds"])
        scored.append({**row, "steps": steps, "predicted_step": step, "predicted": predicted,
                       "published_step": published / steps, "factor": predicted / published})  # fmt: skip
    return scored


def summary(scored: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[float]] = {}
    for row in scored:
        measured = row["task"] == "measured"  # "all" is the published rows
        group = f"{row['script']} {row['device']} {row['precision']}"
        for key in ("measured", f"{group} measured") if measured else ("all", group):
            groups.setdefault(key, []).append(row["factor"])
    return {
        key: {"rows": len(f), "median_factor": statistics.median(max(x, 1 / x) for x in f),
              "worst_factor": max(max(x, 1 / x) for x in f),
              "median_signed_pct": 100 * (statistics.median(f) - 1)}
        for key, f in groups.items()
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--budget", type=float, default=90.0)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/script_cross_device.json"
    )
    parser.add_argument("--measured", type=Path, nargs="*", default=[], help="script_runs.py lines")
    args = parser.parse_args()
    for path in args.measured:
        MEASURED.extend(measured_rows(path))
    passes = []
    for index in range(args.passes):
        passes.append({script: probe_here(script, args.budget) for script in COMMANDS})
        steps = {s: f"{p['step_here']:.2f} s" for s, p in passes[-1].items()}
        print(f"pass {index + 1}: steps here {steps}, load {os.getloadavg()[0]:.1f}", flush=True)
    scored = score(passes)
    for row in scored:
        print(f"  {row['script']:12} {row['task']:5} {row['device']:8} {row['precision']:5} "
              f"published {row['published_seconds']:>6} s predicted {row['predicted']:8.0f} s "
              f"(step {row['predicted_step'] * 1e3:6.1f} ms vs {row['published_step'] * 1e3:6.1f})"
              f"  {row['factor']:.2f}x")  # fmt: skip
    figures = summary(scored)
    for key, f in figures.items():
        print(f"{key:32} {f['rows']:3} rows  median {f['median_factor']:.3f}x  worst "
              f"{f['worst_factor']:.3f}x  signed {f['median_signed_pct']:+.1f}%")  # fmt: skip
    record = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "machine": os.uname().nodename,
              "cpus": os.cpu_count(), "budget": args.budget, "passes": passes,
              "rows": scored, "figures": figures}  # fmt: skip
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
