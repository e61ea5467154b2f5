"""LLM jobs' first run: each proxy probe's wall time and peak memory against its budget, and the
recommendation's first and second call.

Real parts end to end. Each probe is the probe child the app starts (``python -m probes.child``,
``probes.child.child_command``), a fresh process timed from its start to its exit, its peak
resident memory read by ``os.wait4``: an LLM job of each size (1B, 8B, 13B, 70B), fully
fine-tuned and with QLoRA, at budgets of 5 and 20 s, ``--passes`` times, the jobs interleaved.
Targets: budget + 5 s (``probes.limits.LLM_PROBE_OVERRUN_SECONDS``) and under 4 GiB
(``LLM_PROBE_MEMORY_BYTES``). Then ``advisor recommend`` for the 70B full fine-tune as a user
types it, twice in a fresh ``ADVISOR_HOME``: the first probes and stores, the second reads the
stored probe; and ``advisor probe --budget`` of the 70B jobs as a user runs it (the command's
whole process). The machine is shared: run nothing heavy beside it.

    .venv/bin/python benchmarks/llm_probes.py [--passes 3] [--budgets 5,20]
        [--out benchmarks/results/llm_probes.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor import service  # noqa: E402
from advisor.workloads.llm_job import Options  # noqa: E402
from probes.child import child_command  # noqa: E402
from probes.limits import LLM_PROBE_MEMORY_BYTES, LLM_PROBE_OVERRUN_SECONDS  # noqa: E402

JOBS = [
    (model, method)
    for model in ("mpt-1b", "llama3.1-8b", "llama2-13b", "llama3.1-70b")
    for method in ("full", "qlora")
]
"""An LLM of each size the issue names, fully fine-tuned and with QLoRA (frozen base)."""
RECOMMEND = ("recommend", "--model", "llama3.1-70b", "--method", "full", "--tokens", "20M",
             "--deadline", "8h", "--accelerator", "H100")  # fmt: skip


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds from start to exit, peak resident bytes (Linux reports KiB) and stdout."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, stdin=subprocess.PIPE, text=True)  # fmt: skip
    assert child.stdout is not None and child.stdin is not None
    out = child.stdout.read()  # the child exits when its stdin closes: keep it open until then
    _, _, usage = os.wait4(child.pid, 0)
    child.stdin.close()
    return time.perf_counter() - start, usage.ru_maxrss * 1024, out


def probe_once(model: str, method: str, budget: float, env: dict[str, str]) -> dict[str, object]:
    request = service.Request(model, finetune=Options(method=method, tokens=20_000_000))
    spec = service.spec_of(request)
    seconds, peak, out = timed(child_command(spec, budget), env)
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    result = next((x["result"] for x in lines if "result" in x), None)
    error = next((x["error"] for x in lines if "error" in x), None)
    return {
        "model": model, "method": method, "budget": budget, "wall_seconds": round(seconds, 2),
        "peak_rss_gib": round(peak / 2**30, 3), "error": error,
        "probe_seconds": round(result["probe_seconds"], 2) if result else None,
        "proxy": result["extrapolated_from"] if result else None,
    }  # fmt: skip


def cli_probe(model: str, method: str, budget: float, env: dict[str, str]) -> dict[str, object]:
    """``advisor probe --budget`` of a job's proxy, the whole command as a user runs it."""
    request = service.Request(model, finetune=Options(method=method, tokens=20_000_000))
    name = service.spec_of(request).label
    with tempfile.TemporaryDirectory() as home:
        command = [sys.executable, "-m", "advisor", "probe", "--model", name,
                   "--budget", f"{budget:g}", "--json"]  # fmt: skip
        seconds, peak, out = timed(command, {**env, "ADVISOR_HOME": home})
    return {"model": model, "method": method, "budget": budget, "wall_seconds": round(seconds, 2),
            "peak_rss_gib": round(peak / 2**30, 3), "stored": '"probe_seconds"' in out}  # fmt: skip


def recommend_twice(env: dict[str, str]) -> list[dict[str, object]]:
    """The issue's command, twice in a fresh home: the probe's run, then the stored probe's."""
    rows = []
    with tempfile.TemporaryDirectory() as home:
        for call in ("first", "second"):
            command = [sys.executable, "-m", "advisor", *RECOMMEND, "--json"]
            seconds, peak, out = timed(command, {**env, "ADVISOR_HOME": home})
            rows.append({"call": call, "wall_seconds": round(seconds, 2),
                         "peak_rss_gib": round(peak / 2**30, 3), "answered": '"options"' in out})  # fmt: skip
            print(rows[-1], flush=True)
    return rows


def summary(rows: list[dict[str, object]]) -> dict[str, object]:
    """Medians and the worst of wall time over budget and of peak memory, by budget."""
    by_budget: dict[str, object] = {}
    for budget in sorted({float(str(r["budget"])) for r in rows}):
        some = [r for r in rows if r["budget"] == budget]
        over = [float(str(r["wall_seconds"])) - budget for r in some]
        peaks = [float(str(r["peak_rss_gib"])) for r in some]
        by_budget[f"{budget:g}"] = {
            "probes": len(some), "failed": sum(1 for r in some if r["error"]),
            "wall_median": statistics.median(float(str(r["wall_seconds"])) for r in some),
            "wall_worst": max(float(str(r["wall_seconds"])) for r in some),
            "over_budget_median": round(statistics.median(over), 2),
            "over_budget_worst": round(max(over), 2),
            "within_target": sum(1 for x in over if x <= LLM_PROBE_OVERRUN_SECONDS),
            "peak_rss_gib_median": statistics.median(peaks), "peak_rss_gib_worst": max(peaks),
            "under_memory_bound": sum(1 for p in peaks if p * 2**30 < LLM_PROBE_MEMORY_BYTES),
        }  # fmt: skip
    return by_budget


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--budgets", default="5,20")
    parser.add_argument("--out", default=str(ROOT / "benchmarks/results/llm_probes.json"))
    args = parser.parse_args()
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    budgets = [float(b) for b in args.budgets.split(",")]
    rows = []
    for _ in range(args.passes):
        for budget in budgets:
            for model, method in JOBS:
                rows.append(probe_once(model, method, budget, env))
                print(rows[-1], flush=True)
    commands = []
    for _ in range(args.passes):
        for budget in budgets:
            for method in ("full", "qlora"):
                commands.append(cli_probe("llama3.1-70b", method, budget, env))
                print(commands[-1], flush=True)
    recommended = recommend_twice(env)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="minutes"),
        "load_average": os.getloadavg(), "passes": args.passes,
        "summary": summary(rows), "recommend": recommended, "advisor_probe": commands,
        "probes": rows,
    }  # fmt: skip
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["summary"], indent=1))


if __name__ == "__main__":
    main()
