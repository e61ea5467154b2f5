"""Fine-tuning throughput and peak memory measured on this machine's GPU: our own LLM source.

One command on a CUDA machine with PyTorch, transformers and peft (the device images have them;
no weights and no internet needed: each model is built from its published configuration in
``data/llm-architectures.csv`` with random weights, which changes no FLOP and no byte):

    python3 benchmarks/gpu/llm_gpu_check.py --out results/llm-gpu.jsonl      # < 4 min on an H200
    python3 benchmarks/gpu/llm_gpu_check.py --rehearse --out /tmp/llm.jsonl   # tiny widths, on a CPU

For every configuration in ``RUNS`` it trains packed random-token sequences with Hugging Face
transformers (``attn_implementation="sdpa"``), peft's LoRA where the method is LoRA, torch's fused
AdamW, and writes one JSON line: tokens per second per GPU (the median of the timed optimizer
steps after the warm-up ones; every token of the packed batch counted, as torchtune logs it), peak
memory allocated and reserved (GiB), or the error that stopped it (out of memory is a result:
"does not fit"). ``--rows LINES.jsonl`` prints the lines as rows of
``data/llm-finetune-published.csv`` (source ``advisor-gpu-check-DATE``, held out of every fit):

    python3 benchmarks/gpu/llm_gpu_check.py --rows benchmarks/results/llm-gpu-h200-20261126.jsonl
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Run:
    model_id: str
    method: str
    """``full`` or ``lora``."""
    sequence_length: int
    batch_per_gpu: int
    activation_checkpointing: bool
    lora_rank: int = 0
    lora_targets: str = ""
    """Comma-separated module names, peft's spelling (``q_proj,v_proj``)."""
    compiled: bool = False
    """The model's forward (its loss included) under ``torch.compile``: beside the same run
    eager, whether a compiled step keeps less than an eager one (``FineTune.compiled``)."""


ALL = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"
"""Every linear layer of a block: peft's "all-linear" targets, torchtune's full set."""
RUNS = (
    Run("qwen2.5-0.5b", "full", 2048, 8, False),
    Run("qwen2.5-0.5b", "lora", 2048, 8, False, 8, "q_proj,v_proj"),
    Run("qwen2.5-1.5b", "full", 2048, 4, True),
    Run("qwen2.5-1.5b", "lora", 2048, 4, False, 16, ALL),
    Run("llama3.1-8b", "lora", 2048, 2, True, 8, "q_proj,v_proj"),
    Run("llama3.1-8b", "lora", 4096, 2, False, 16, ALL),
    Run("llama3.1-8b", "full", 2048, 2, True),
    Run("qwen2.5-7b", "lora", 2048, 4, True, 8, "q_proj,v_proj"),
    Run("llama3.1-8b", "lora", 8192, 1, True, 16, ALL),
    Run("qwen2.5-7b", "full", 4096, 1, True),
    Run("qwen2.5-0.5b", "full", 4096, 4, True),
    # 11, 12: runs 2 and 4 compiled (not in the GPU session scripts' default selection)
    Run("qwen2.5-1.5b", "full", 2048, 4, True, compiled=True),
    Run("llama3.1-8b", "lora", 2048, 2, True, 8, "q_proj,v_proj", compiled=True),
)
WARMUP, TIMED = 3, 8
FP32_ADAPTERS = (
    "peft keeps the adapters in fp32 and no autocast ran: strict-fp32 adapter products and an "
    "fp32 copy of every adapted input (kept for the backward pass without checkpointing), which "
    "advisor does not model"
)


def architecture(model_id: str, rehearse: bool) -> dict[str, str]:
    with (ROOT / "data" / "llm-architectures.csv").open() as handle:
        row = next(r for r in csv.DictReader(handle) if r["model_id"] == model_id)
    if rehearse:  # the same code at widths a CPU trains in seconds
        row = {**row, "hidden_size": "64", "num_layers": "2", "num_attention_heads": "4",
               "num_kv_heads": "2", "head_dim": "16", "intermediate_size": "128", "vocab_size": "512"}  # fmt: skip
    return row


def build(run: Run, rehearse: bool) -> tuple[Any, Any, int, str]:
    """The model on the GPU in bf16, LoRA applied where asked, and its optimizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    arch = architecture(run.model_id, rehearse)
    common = dict(
        hidden_size=int(arch["hidden_size"]), num_hidden_layers=int(arch["num_layers"]),
        num_attention_heads=int(arch["num_attention_heads"]),
        num_key_value_heads=int(arch["num_kv_heads"]), head_dim=int(arch["head_dim"]),
        intermediate_size=int(arch["intermediate_size"]), vocab_size=int(arch["vocab_size"]),
        tie_word_embeddings=arch["tied_embeddings"] == "yes", max_position_embeddings=32768,
        attn_implementation="sdpa", use_cache=False,
    )  # fmt: skip
    qwen = run.model_id.startswith("qwen")
    config = Qwen2Config(**common) if qwen else LlamaConfig(**common)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.set_default_dtype(torch.bfloat16)
    with torch.device(device):
        model = (Qwen2ForCausalLM if qwen else LlamaForCausalLM)(config)
    torch.set_default_dtype(torch.float32)
    if run.activation_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if run.method == "lora":
        from peft import LoraConfig, get_peft_model

        lora = LoraConfig(r=run.lora_rank, lora_alpha=2 * run.lora_rank, lora_dropout=0.0,
                          target_modules=run.lora_targets.split(","), task_type="CAUSAL_LM")  # fmt: skip
        model = get_peft_model(model, lora)
        if run.activation_checkpointing:
            model.enable_input_require_grads()
    if run.compiled:
        model.compile()
    trainable = [p for p in model.parameters() if p.requires_grad]
    fused = device == "cuda"
    optimizer = torch.optim.AdamW(trainable, lr=1e-5, fused=fused)
    return model, optimizer, sum(p.numel() for p in trainable), device


def measure(run: Run, rehearse: bool) -> dict[str, object]:
    import torch

    model, optimizer, trainable, device = build(run, rehearse)
    vocab = model.config.vocab_size
    tokens = torch.randint(0, vocab, (run.batch_per_gpu, run.sequence_length), device=device)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    seconds = []
    for step in range(WARMUP + TIMED):
        started = time.perf_counter()
        loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if device == "cuda":
            torch.cuda.synchronize()
        if step >= WARMUP:
            seconds.append(time.perf_counter() - started)
    per_step = statistics.median(seconds)
    gib = 1024**3
    return {
        "tokens_per_second_per_gpu": run.batch_per_gpu * run.sequence_length / per_step,
        "step_seconds": seconds, "trainable_params": trainable,
        "peak_allocated_gib": torch.cuda.max_memory_allocated() / gib if device == "cuda" else None,
        "peak_reserved_gib": torch.cuda.max_memory_reserved() / gib if device == "cuda" else None,
        "attention": getattr(model.config, "_attn_implementation", "?"),
    }  # fmt: skip


def environment() -> dict[str, object]:
    import torch
    import transformers

    try:
        import peft

        peft_version = peft.__version__
    except ImportError:
        peft_version = None
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"gpu": gpu, "torch": torch.__version__, "transformers": transformers.__version__,
            "peft": peft_version, "date": time.strftime("%Y-%m-%d", time.gmtime())}  # fmt: skip


def published_rows(lines: Path) -> list[dict[str, str]]:
    """The measured lines of ``lines`` as rows of the published-runs file: the configuration in
    the source's words and in the model's (``n_*``); every figure held out (``holdout``)."""
    with (ROOT / "data" / "llm-finetune-published.csv").open() as handle:
        columns = next(csv.reader(handle))
    parsed = [json.loads(text) for text in lines.read_text().splitlines() if text.strip()]
    rows, where = [], {}
    for line in parsed:
        if "environment" in line:
            where = line["environment"]
            continue
        if "error" in line:
            continue
        run = Run(**line["run"])
        gpu = where["gpu"].replace("NVIDIA ", "")
        software = (
            f"transformers {where['transformers']} + peft {where['peft']}, torch {where['torch']}"
        )
        targets = {"q_proj,v_proj": "qv", ALL: "all"}.get(run.lora_targets, "")
        tokens = f"{line['tokens_per_second_per_gpu']:.0f}"
        memory = f"{line['peak_allocated_gib']:.2f}"
        adapters = "fp32 adapters (peft's autocast_adapter_dtype)" if run.method == "lora" else ""
        row = dict.fromkeys(columns, "")
        row.update({
            "source": f"advisor-gpu-check-{where['date'].replace('-', '')}",
            "model_id": run.model_id, "method": run.method,
            "lora_rank": str(run.lora_rank or ""), "lora_alpha": str(2 * run.lora_rank or ""),
            "lora_targets": run.lora_targets, "quant": "none", "precision": "bf16", "gpus": "1",
            "gpu": gpu, "sequence_length": str(run.sequence_length),
            "batch_per_gpu": str(run.batch_per_gpu), "grad_accum": "1",
            "global_batch": str(run.batch_per_gpu), "packing": "yes (random tokens, full sequences)",
            "activation_checkpointing": "yes" if run.activation_checkpointing else "no",
            "optimizer": "torch AdamW fused, states in the trained weights' dtype",
            "sharding": "none", "tokens_per_second_per_gpu": tokens,
            "peak_memory_gib_per_gpu": memory, "framework": software,
            "notes": f"benchmarks/gpu/llm_gpu_check.py on one {where['gpu']} ({where['date']}): "
                     f"random weights from data/llm-architectures.csv, sdpa attention, bf16 weights"
                     f"{', torch.compile' if run.compiled else ''}"
                     f"{', ' + adapters if adapters else ''}; median of {TIMED} steps after {WARMUP}; "
                     f"memory is torch.cuda.max_memory_allocated",
            "tokens_per_second_total": tokens, "memory_unit": "GiB",
            "reported_figure": f"{memory} GiB | {tokens} tok/s",
            "measured": "measured (median step)", "trust": "high (our own run)",
            "use_throughput": "holdout", "use_memory": "holdout", "use_note": FP32_ADAPTERS
            if run.method == "lora" else "",
            "n_model": run.model_id, "n_method": run.method, "n_rank": str(run.lora_rank or ""),
            "n_targets": targets, "n_quant": "none", "n_precision": "bf16", "n_device": gpu,
            "n_checkpointing": "yes" if run.activation_checkpointing else "no",
            "n_activation_offload": "no", "n_chunked_loss": "no", "n_memory_statistic": "allocated",
            "n_optimizer": "adamw", "n_optimizer_in_backward": "no",
            "n_master": "fp32" if run.method == "lora" else "bf16", "n_sharding": "none",
            "n_offload": "none", "n_compiled": "yes" if run.compiled else "no",
        })  # fmt: skip
        rows.append(row)
    return rows


def main(argv: list[str]) -> int:
    if argv[:1] == ["--rows"]:
        try:
            rows = published_rows(Path(argv[1]))
        except (IndexError, OSError, ValueError, KeyError, TypeError) as exc:
            print(f"llm_gpu_check: cannot read the lines: {type(exc).__name__}: {exc}"[:300],
                  file=sys.stderr)  # fmt: skip
            return 2
        if not rows:
            print("llm_gpu_check: no measured run in the lines", file=sys.stderr)
            return 2
        writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writerows(rows)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rehearse", action="store_true", help="tiny widths, no GPU needed")
    parser.add_argument("--only", help="comma-separated indices into RUNS")
    args = parser.parse_args(argv)
    try:
        runs = [RUNS[int(i)] for i in args.only.split(",")] if args.only else list(RUNS)
    except (ValueError, IndexError):
        parser.error(f"--only takes indices 0-{len(RUNS) - 1}, comma-separated")
    import torch

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as out:
        out.write(json.dumps({"environment": environment()}) + "\n")
        for run in runs:
            line: dict[str, object] = {"run": asdict(run)}
            try:
                line.update(measure(run, args.rehearse))
            except torch.OutOfMemoryError as exc:
                line["error"] = "out of memory: " + str(exc).splitlines()[0][:200]
            except Exception as exc:  # one configuration's failure is a line, not the end
                line["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            out.write(json.dumps(line) + "\n")
            out.flush()
            print(json.dumps({k: v for k, v in line.items() if k != "step_seconds"}), flush=True)
            gc.collect()  # the last model's memory back before the next one is built
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
