"""How good are advisor's LLM fine-tuning predictions against published runs?

Three figures, each over ``data/llm-finetune-published.csv`` (docs/SOURCES.md, "LLM
fine-tuning"):

1. tokens per second per GPU: the held-out runs (``use_throughput=holdout``: NVIDIA's NeMo
   AutoModel and Megatron-Bridge rows, single H100s and 8-GPU H100 and B200 nodes, bf16 and
   fp8, never fitted) beside the fitted ones in-sample and leave-one-source-out; how many
   predictions beat the datasheet peak;
2. peak memory per GPU against every published figure the count can be compared with (the
   tensors' peak for torchtune's rows; the allocator's, with ``memory.reserved_bytes``, for the
   rest), and whether each published configuration fits its GPU, the largest-sequence
   boundaries of the Unsloth README included;
3. the engine's speed: a recommendation of an 8B QLoRA job over the whole catalog (the seed
   prices cycled to ``--offerings``, as ``benchmarks/recommend_speed.py``) from a stored probe.

Run: .venv/bin/python benchmarks/llm_validation.py [--json benchmarks/results/llm_validation.json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.estimate import catalog, finetune, memory  # noqa: E402
from advisor.estimate.llm_predict import predictor_for_job  # noqa: E402
from advisor.estimate.parameters import llm_calibration, shipped_calibration  # noqa: E402
from advisor.fitting.llm_fit import (  # noqa: E402
    RunError,
    by_stack,
    errors,
    fit_all,
    leave_one_source_out,
    machine_of,
    summary,
)
from advisor.fitting.llm_published import (  # noqa: E402
    PublishedRun,
    memory_runs,
    read_published,
    throughput_runs,
)
from advisor.workloads import stacks  # noqa: E402
from advisor.workloads.llm_job import job_for  # noqa: E402
from advisor.workloads.llm_memory import footprint  # noqa: E402

GIB = 2**30
MEMORY_TARGET = 0.15
"""Peak memory per GPU within 15% of the published figure (issue 28)."""
SHORTEST_PUBLISHED = 932
"""The shortest sequence the Unsloth table shows fitting (12 GB): an OOM row is checked there."""


def throughput() -> dict[str, Any]:
    calibration = llm_calibration()
    held = errors(calibration, throughput_runs("holdout"))
    fitted = throughput_runs("fit")
    loso = leave_one_source_out(fitted, shipped_calibration())
    return {
        "held_out": summary(held),
        "held_out_single_gpu": summary([e for e in held if e.run.plan.gpus == 1]),
        "held_out_8_gpu": summary([e for e in held if e.run.plan.gpus == 8]),
        "held_out_bf16": summary([e for e in held if e.run.precision == "bf16"]),
        "held_out_fp8": summary([e for e in held if e.run.precision == "fp8"]),
        "held_out_data_or_fsdp_parallel": summary([e for e in held if not e.run.model_parallel]),
        "held_out_tensor_or_pipeline_parallel": summary([e for e in held if e.run.model_parallel]),
        "held_out_several_nodes": summary([e for e in held if e.run.nodes > 1]),
        "held_out_rows": [_row(e) for e in held],
        "in_sample": summary(errors(calibration, fitted)),
        "leave_one_source_out": summary(loso),
    }


def stack_figures() -> dict[str, Any]:
    """Each stack's held-out runs three ways: as their stack runs them (what advisor ships); as
    if they ran Hugging Face's recipe (what one recipe for every stack said before); and with a
    speed of each stack's own fitted to its runs (the trial the shipped fit turned down), with
    that trial's leave-one-source-out errors beside the shipped fit's."""
    calibration = llm_calibration()
    held = throughput_runs("holdout")
    default = stacks.get(stacks.DEFAULT)
    as_default = [replace(run, tune=default.recipe(run.tune)) for run in held]
    fitted = throughput_runs("fit")
    trial = replace(
        fit_all(fitted, shipped_calibration(), per_stack=True),
        log_sigma=calibration.log_sigma,
        stack_runs=calibration.stack_runs,
    )
    relabelled = {id(a): b for a, b in zip(as_default, held, strict=True)}
    return {
        "held_out_by_stack": by_stack(errors(calibration, held)),
        "held_out_by_stack_as_hugging_face": _by_own_stack(
            errors(calibration, as_default), relabelled
        ),
        "trial_speed_per_stack": trial.stack_speed,
        "trial_held_out_by_stack": by_stack(errors(trial, held)),
        "trial_leave_one_source_out": summary(
            leave_one_source_out(fitted, shipped_calibration(), per_stack=True)
        ),
        "shipped_leave_one_source_out": summary(
            leave_one_source_out(fitted, shipped_calibration())
        ),
        "stack_runs_fitted": calibration.stack_runs,
    }


def _by_own_stack(found: list[RunError], own: dict[int, PublishedRun]) -> dict[str, Any]:
    """``by_stack`` of runs predicted under another recipe, grouped by the stack they ran."""
    return by_stack([replace(f, run=own[id(f.run)]) for f in found])


def _row(found: RunError) -> dict[str, Any]:
    run = found.run
    return {
        "source": run.source,
        "line": run.line,
        "run": run.label + (" (tensor/pipeline parallel)" if run.model_parallel else ""),
        "published": run.tokens_per_second,
        "predicted": round(found.predicted),
        "factor": round(math.exp(found.log_error), 3),
    }


def memory_figures() -> dict[str, Any]:
    results: dict[str, list[dict[str, Any]]] = {"fit": [], "holdout": []}
    for use in results:
        for run in memory_runs(use):
            predicted = _allocated(run)
            if run.memory_statistic == "reserved":
                predicted = memory.reserved_bytes(predicted)
            error = predicted / GIB / run.memory_gib - 1
            results[use].append(
                {
                    "source": run.source,
                    "stack": run.tune.stack,
                    "line": run.line,
                    "run": f"{run.label} mb{run.plan.micro_batch}",
                    "statistic": run.memory_statistic,
                    "published_gib": run.memory_gib,
                    "predicted_gib": round(predicted / GIB, 2),
                    "error_pct": round(100 * error, 1),
                }
            )
    by_stack_rows: dict[str, list[dict[str, Any]]] = {}
    for row in results["holdout"]:
        by_stack_rows.setdefault(row["stack"], []).append(row)
    return {
        **{f"{use}_summary": _memory_summary(rows) for use, rows in results.items()},
        "holdout_by_stack": {k: _memory_summary(v) for k, v in sorted(by_stack_rows.items())},
        **{f"{use}_rows": rows for use, rows in results.items()},
        "fits": fits(),
    }


def _allocated(run: PublishedRun) -> float:
    counted = footprint(run.tune, run.precision == "fp8")
    return memory.llm_bytes(
        counted, run.plan.sharding, run.plan.gpus, run.plan.micro_batch, run.tune.shape.sequence
    )


def _memory_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"n_runs": 0}
    errors_ = [abs(r["error_pct"]) / 100 for r in rows]
    return {
        "n_runs": len(rows),
        "within_15pct": sum(e <= MEMORY_TARGET for e in errors_),
        "median_abs_pct": round(100 * statistics.median(errors_), 1),
        "worst_abs_pct": round(100 * max(errors_), 1),
        "median_signed_pct": round(statistics.median(r["error_pct"] for r in rows), 1),
    }


def fits() -> dict[str, Any]:
    """Every published configuration advisor can lay out against its GPU, and the Unsloth
    boundaries (the largest sequence that fits a card)."""
    calibration = llm_calibration()
    checked, wrong, model_parallel = 0, [], 0
    for run in read_published():
        if not run.device or not (run.use_throughput or run.use_memory):
            continue
        model_parallel += run.model_parallel
        machine = machine_of(run, calibration)
        assert machine is not None
        fit = finetune.fit_of(run.tune, run.plan, machine)
        checked += 1
        if fit is not None and not fit.fits:
            wrong.append(
                f"{run.label} mb{run.plan.micro_batch}: {fit.needed_bytes / GIB:.1f} GiB of "
                f"{fit.available_bytes / GIB:.1f}"
            )
    boundaries = [_boundary(run) for run in memory_runs("boundary")]
    return {
        "published_configurations": checked,
        "fit_as_published": checked - len(wrong),
        "judged_not_to_fit": wrong,
        "of_them_tensor_or_pipeline_parallel": model_parallel,
        "boundaries": boundaries,
        "boundaries_right": sum(b["right"] for b in boundaries),
    }


def _boundary(run: PublishedRun) -> dict[str, Any]:
    """An Unsloth row: the published longest sequence fits the card (or, for an OOM row, the
    shortest sequence the table shows elsewhere does not), and the model's own longest."""
    device = catalog.accelerator(run.device) if run.device else None
    capacity = run.capacity_gib or (device.memory_gib if device else 0.0)
    counted = footprint(run.tune)
    available = capacity * GIB * (1 - memory.LLM_RESERVE_FRACTION) - memory.RESERVE_BYTES
    longest = memory.tokens_that_fit(counted, "none", 1, available)
    published = run.stated_sequence
    right = longest >= published if published else longest < SHORTEST_PUBLISHED
    return {
        "run": f"{run.model} {run.tune.method} on {capacity:g} GB",
        "published_longest": published or "out of memory",
        "modelled_longest": longest,
        "right": right,
    }


def speed(offerings: int, runs: int) -> dict[str, Any]:
    """An 8B QLoRA recommendation over ``offerings`` (the engine, as recommend_speed.py)."""
    from advisor.recommend.ranker import recommend
    from advisor.recommend.recommendation import Assumptions, Constraints
    from benchmarks.recommend_speed import RULES
    from pricing.offers import group_offers
    from pricing.spot_risk import shipped_risks
    from tests.seed_catalog import many_rentables

    job = job_for("llama3-8b", method="qlora", tokens=20_000_000)
    groups = group_offers(many_rentables(offerings))
    risks = shipped_risks()

    def once() -> float:
        predictor = predictor_for_job(job, host_seconds=0.005)  # a stored probe's dispatch
        start = time.perf_counter()
        recommend(
            groups, predictor, RULES, workload=job.workload,
            constraints=Constraints(deadline_seconds=6 * 3600),
            assumptions=Assumptions(startup_seconds=100.0, checkpoint_seconds=5.0),
            spot_risks=risks,
        )  # fmt: skip
        return time.perf_counter() - start

    cold = once()
    warm = [once() for _ in range(runs)]
    return {
        "offerings": offerings,
        "groups": len(groups),
        "first_call_ms": round(1000 * cold),
        "median_ms": round(1000 * statistics.median(warm)),
        "max_ms": round(1000 * max(warm)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--offerings", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    figures = {
        "throughput": throughput(),
        "stacks": stack_figures(),
        "memory": memory_figures(),
        "speed": speed(args.offerings, args.runs),
        "date": time.strftime("%Y-%m-%d"),
    }
    text = json.dumps(figures, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
