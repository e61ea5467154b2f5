"""An LLM job's proxy probed on this machine's GPU, against the same job trained for real.

A workstation owner's GPU probe of a fine-tuning job corrects every GPU's time by how far the
device model was from it there (``advisor.estimate.llm_predict.job_residuals``). Whether that
helps depends on whether a Keras probe on a GPU sees what a real fine-tune (transformers and
peft in bf16) does. On a GPU machine, under JAX or PyTorch (no TensorFlow there):

    KERAS_BACKEND=jax python3 benchmarks/gpu/llm_probe_gpu.py --out $OUT/llm-probes.csv [--precision mixed]

probes the jobs of ``JOBS`` (in float32, or with ``--precision mixed`` under ``mixed_bfloat16``,
the jobs' own precision) (each a run of ``benchmarks/gpu/llm_gpu_check.py``'s ``RUNS``, which
times them for real: ``--only 0,1,2``) and writes them in the exchange format. Here, with both
files back:

    python benchmarks/gpu/llm_probe_gpu.py --compare llm-probes.csv llm-gpu.jsonl

prints, per job, the real tokens per second, the device model's prediction alone and the
prediction corrected by the probe.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

JOBS = (
    # model, method, rank, targets, sequence, micro-batch, checkpointing: llm_gpu_check.RUNS[i]
    ("qwen2.5-0.5b", "full", None, None, 2048, 8, False),  # RUNS[0]
    ("qwen2.5-0.5b", "lora", 8, "qv", 2048, 8, False),  # RUNS[1]
    ("qwen2.5-1.5b", "full", None, None, 2048, 4, True),  # RUNS[2]
)
SEQUENCES = 64
"""Sequences a probe's configuration trains (its time is per sequence; the count only sizes it)."""


def job(index: int) -> Any:
    from advisor.workloads.llm_job import job_for

    model, method, rank, targets, sequence, micro_batch, checkpointing = JOBS[index]
    return job_for(
        model, method=method, examples=SEQUENCES, sequence=sequence, packed=False, rank=rank,
        targets=targets, micro_batch=micro_batch, checkpointing=checkpointing,
        fp32_adapters=method != "full",  # llm_gpu_check steps PEFT's fp32 adapters, no autocast
    )  # fmt: skip


def probe_all(out: Path, budget: float, seconds: float, precision: str = "fp32") -> int:
    """Probe every job on this machine's accelerator, one after another until ``seconds``;
    ``mixed``: under Keras' ``mixed_bfloat16`` policy (bf16 products, fp32 weights), the jobs'
    own precision, so that the residual compares bf16 with bf16 (the probe's device says
    ``mixed``, and ``llm_predict.probe_run_seconds`` models its run so)."""
    from dataclasses import replace

    from advisor.workloads.llm_job import probe_name
    from probes import exchange
    from probes.run import probe
    from probes.spec import spec_for

    if precision == "mixed":
        import keras

        keras.config.set_dtype_policy("mixed_bfloat16")
    deadline = time.monotonic() + seconds
    results = []
    for index in range(len(JOBS)):
        if time.monotonic() > deadline:
            print(f"job {index}: not reached (deadline)", flush=True)
            continue
        planned = job(index)
        name = probe_name(planned)
        spec = spec_for(name, samples=SEQUENCES, epochs=1, batch_size=planned.micro_batch)
        try:
            result = probe(spec, budget_seconds=budget, profile_ops=False)
        except Exception as error:  # one job's failure is a line, not the end
            print(f"job {index} {name}: {type(error).__name__}: {error}"[:300], flush=True)
            continue
        result = replace(result, device=replace(result.device, precision=precision))
        results.append(result)
        print(f"job {index} {name}: {result.samples_per_second:.3g} sequences/s "
              f"({result.extrapolated_from or 'stepped whole'})", flush=True)  # fmt: skip
    exchange.write_csv(out, results)
    return 0 if results else 1


def compare(probes_csv: Path, real_jsonl: Path) -> list[dict[str, Any]]:
    """Per job: the real tokens/s of ``llm_gpu_check``'s line, the device model's prediction at
    bf16 on that GPU, and the same corrected by the job's probe there."""
    from advisor.estimate.llm_predict import job_residuals, predictor_for_job
    from advisor.estimate.prediction import Target
    from advisor.workloads.llm_job import probe_name
    from probes import exchange

    probes = exchange.from_rows(exchange.read_csv(probes_csv))
    lines = [json.loads(line) for line in real_jsonl.read_text().splitlines() if line.strip()]
    rows = []
    for index in range(len(JOBS)):
        planned = job(index)
        mine = [p for p in probes if p.config.workload == probe_name(planned)]
        model, method, _, _, sequence, micro_batch, checkpointing = JOBS[index]
        real = next(
            (line for line in lines
             if line.get("run", {}).get("model_id") == model
             and line["run"].get("method") == method
             and line["run"].get("sequence_length") == sequence
             and line["run"].get("batch_per_gpu") == micro_batch
             and line["run"].get("activation_checkpointing") == checkpointing
             and line.get("tokens_per_second_per_gpu")),
            None,
        )  # fmt: skip
        if not mine or real is None:
            continue
        gpu = mine[0].device.accelerator or ""
        tokens = planned.computed_tokens
        alone = predictor_for_job(planned)(Target(gpu, 1))
        fixed = predictor_for_job(planned, residuals=job_residuals(planned, mine))(Target(gpu, 1))
        rows.append({"job": probe_name(planned), "gpu": gpu, "real": real["tokens_per_second_per_gpu"],
                     "model": tokens / alone.seconds, "corrected": tokens / fixed.seconds})  # fmt: skip
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="probe here and write the exchange CSV")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per probe")
    parser.add_argument("--seconds", type=float, default=120.0, help="for all the probes")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("PROBES_CSV", "REAL_JSONL"))
    parser.add_argument(
        "--precision", choices=("fp32", "mixed"), default="fp32",
        help="mixed: probe under mixed_bfloat16, the jobs' own precision",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.compare:
        missing = [str(p) for p in args.compare if not p.is_file()]
        if missing:
            parser.error(f"--compare: no such file {', '.join(missing)}")
        from advisor.errors import AdvisorError

        try:
            rows = compare(*args.compare)
        except (AdvisorError, ValueError, KeyError, TypeError, AttributeError) as error:
            parser.exit(2, f"--compare: not a probe export and llm_gpu_check lines ({error})\n")
        for row in rows:
            print(f"{row['job']} on {row['gpu']}: real {row['real']:,.0f} tokens/s; the device "
                  f"model {row['model']:,.0f} ({row['model'] / row['real']:.2f}x the real rate), "
                  f"corrected by the probe {row['corrected']:,.0f} "
                  f"({row['corrected'] / row['real']:.2f}x)")  # fmt: skip
        return 0
    if args.out is None:
        parser.error("--out FILE (on the GPU machine) or --compare PROBES_CSV REAL_JSONL (here)")
    if not (args.budget > 0 and args.seconds > 0):  # NaN fails both
        parser.error("--budget and --seconds must be positive")
    return probe_all(args.out, args.budget, args.seconds, args.precision)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
