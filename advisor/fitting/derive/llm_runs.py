"""Add machine-readable columns to ``data/llm-finetune-published.csv`` (in place, idempotent).

The published fine-tuning figures were collected with their configurations as the sources state
them, in words (``fsdp full_shard + CPU offload of params``, ``yes (config default)``). This
script reads those words and writes, beside them, the columns the estimation reads
(``advisor/fitting/llm_published.py``): ``n_*`` (the run as advisor models it) and ``use_*``
(what each row is used for: fitted, held out, memory only, a fit boundary or nothing, with the
reason in ``use_note``). Every rule is here, so each row's reading can be checked against its
words; the choices of what to fit and what to hold out were made before any prediction was
compared with a held-out row (docs/SOURCES.md, "LLM fine-tuning").

Run: .venv/bin/python -m advisor.fitting.derive.llm_runs
"""

from __future__ import annotations

import csv
import re
import sys

from advisor.locations import shipped_data_dir

FILE = shipped_data_dir() / "llm-finetune-published.csv"

THROUGHPUT_FIT = {
    "llm-foundry-mpt-bench",
    "nemo-24.07-perf",
    "answerai-fsdp-qlora-2024-03",
    "torchtune-readme-2024-11-optflags",
    "qwen1-readme-profiling",
}
"""Sources whose tokens per second per GPU the LLM fit reads (docs/SOURCES.md)."""
OWN = "advisor-gpu-check-20261126"
"""Our own runs (``benchmarks/gpu/llm_gpu_check.py`` on one H200, then one H100): held out for speed
and memory."""
THROUGHPUT_HOLDOUT = {
    "nemo-automodel-perf",
    "megatron-bridge-26.06",
    "megatron-bridge-25.11-pretrain",
    "torchtune-readme-2024-09",
    "llamafactory-bench-2023-12",
    OWN,
}
"""Never fitted: NVIDIA's vendor rows (single H100 and 8-GPU nodes, bf16 and fp8, B200), ours;
and since each stack has a speed of its own (2026-11-29), a part of each stack's rows:
torchtune's 2024-09 table, LLaMA-Factory's rows (Hugging Face's and Unsloth's), llm-foundry's
largest model (``FOUNDRY_HOLDOUT``)."""
FOUNDRY_HOLDOUT = "mpt-30b"
"""llm-foundry's rows come from one publisher (MosaicML): its MPT-30B runs are kept out."""
MEMORY_FIT = {"torchtune-readme-2024-11-optflags", "answerai-fsdp-qlora-2024-03"}
"""Sources whose peak memory was looked at while the memory count was written."""
MEMORY_HOLDOUT = {
    "torchtune-readme-2024-09",
    "qwen1-readme-profiling",
    "peft-docs-accelerate",
    "llamafactory-bench-2023-12",
    OWN,
}
"""Peak memory compared only once the count was written."""
BOUNDARY = {"unsloth-readme-ctx-2025-01"}
"""The largest sequence that fits a card: a fits / does-not-fit test."""
MAX_GPUS = 8
"""GPUs of one node: a run on more spreads over several (held out: the scale-out check)."""
DEVICES = {
    "H100": "H100",
    "A100-80GB": "A100-80GB",
    "A100": "A100",
    "RTX4090": "RTX4090",
    "RTX3090": "RTX3090",
    "A6000": "A6000",
    "L4": "L4",
    "B200": "B200",
    "H200": "H200",
    "H100 80GB HBM3": "H100",  # nvidia-smi's name of the SXM card (our own H100 runs)
    "RTX6000-Ada": "RTX6000-Ada",
    "A10G": "A10G",
}

COLUMNS = (
    "use_throughput", "use_memory", "use_note", "n_model", "n_method", "n_rank", "n_targets",
    "n_quant", "n_precision", "n_device", "n_capacity_gib", "n_checkpointing",
    "n_activation_offload", "n_chunked_loss", "n_memory_statistic", "n_optimizer", "n_optimizer_in_backward", "n_master", "n_sharding",
    "n_offload", "n_fp32_adapters", "n_fused_loss", "n_frozen_fp32", "n_compiled", "n_stack",
    "n_attention", "n_fp8_weights",
)  # fmt: skip


def method(row: dict[str, str]) -> str:
    text = row["method"].lower()
    if text.startswith("qlora"):
        return "qlora"
    if text.startswith("lora"):
        return "lora" if "/" not in text else ""
    return "full" if text.startswith("full") else ""


def targets(row: dict[str, str]) -> str:
    """``qv``, ``qkv``, ``attention`` (q, k, v, o) or ``all`` (every linear layer of a block)."""
    text = row["lora_targets"].lower()
    if not text:
        return ""
    if "mlp" in text or "all" in text or "gate" in text or "fc1" in text or "w1" in text:
        return "all"
    if "q_proj,v_proj" in text or text.startswith("unknown"):
        return "qv"
    if "qkv" in text or "q_proj,k_proj,v_proj" in text:
        return "qkv"
    return "all"


def quant(row: dict[str, str]) -> str:
    text = row["quant"].lower()
    if "int4" in text:
        return "int4"
    if "nf4" in text or text.startswith("4-bit"):
        return "nf4"
    return "none" if text in ("", "none") else text


def precision(row: dict[str, str]) -> str:
    return "fp8" if "fp8" in row["precision"].lower() else "bf16"


def checkpointing(row: dict[str, str]) -> str:
    """Activation checkpointing; an unstated one takes the framework's default: on in the
    Hugging Face and torchtune recipes for adapters, off in NVIDIA's performance configs."""
    text = row["activation_checkpointing"].lower()
    if text.startswith("yes"):
        return "yes"
    if text.startswith("no"):
        return "no"
    nvidia = row["source"].startswith(("nemo", "megatron"))
    return "no" if nvidia else "yes"


def optimizer(row: dict[str, str]) -> tuple[str, str]:
    text = row["optimizer"].lower()
    kind = "adamw8bit" if "8bit" in text else "adamw"
    if "paged" in text:
        kind = "paged-" + kind
    in_backward = "optimizer_in_bwd" in text.replace("no optimizer_in_bwd", "")
    return kind, "yes" if in_backward else "no"


PURE_BF16 = {"answerai-fsdp-qlora-2024-03"}
"""Sources that train every weight in bf16 without saying "pure": Answer.AI's ``train.py``
defaults to ``--precision bf16`` (@05ed9f2a; so since b02e69b, 2024-01-25, before the
benchmarks), which casts the model to bf16 with no FSDP mixed-precision policy; PEFT of the
time (before 0.12's ``autocast_adapter_dtype``) cast each adapter to its base layer's dtype
(bf16, also for ``Linear4bit`` with a bf16 ``quant_storage``), and AdamW's states follow their
parameters' dtype."""


def master(row: dict[str, str]) -> str:
    """The trained weights' precision: torchtune, llm-foundry's PURE mode and ``PURE_BF16`` keep
    them in bf16, and so does an optimizer whose state is bf16 (NeMo's SFT recipe: Apex's
    distributed Adam with ``dtype: bf16`` keeps its master copy, its moments and the gradients
    in bf16); mixed precision everywhere else keeps an fp32 master copy. Our own runs train
    bf16 weights in full fine-tuning; peft keeps their adapters in fp32."""
    own_full = row["source"] == OWN and method(row) == "full"
    pure = (
        own_full
        or row["source"].startswith("torchtune")
        or row["source"] in PURE_BF16
        or "pure" in row["precision"].lower()
        or "bf16 state" in row["optimizer"].lower()
    )
    return "bf16" if pure else "fp32"


def fp8_weights(row: dict[str, str]) -> str:
    """The model's weights were built in FP8 (NeMo's ``fp8_params``: Transformer Engine's
    ``fp8_model_init``), their high-precision copy in the optimizer."""
    return "yes" if "fp8_params" in row["precision"].lower() else "no"


FUSED_LOSS = {"llm-foundry-mpt-bench"}
"""Sources whose loss is one fused kernel: llm-foundry's MPT takes flash-attn's cross-entropy
unless its config names another (``loss_fn: fused_crossentropy``, the default in
``llmfoundry/models/mpt/modeling_mpt.py``)."""


def fused_loss(row: dict[str, str]) -> bool:
    """``FUSED_LOSS``'s sources, and Unsloth's rows: its cross-entropy is one Triton kernel over
    the 16-bit logits (``unsloth/kernels/cross_entropy_loss.py``, in its first release)."""
    return row["source"] in FUSED_LOSS or row["framework"].startswith("Unsloth")


def frozen_fp32(row: dict[str, str]) -> str:
    """Frozen weights kept in fp32: PEFT's ``examples/sft`` loads the model in fp32 unless a
    4-bit storage dtype is set (``utils.py`` @5d602fdb: ``dtype = quant_storage_dtype ... else
    torch.float32``) and FSDP keeps the shards so; DeepSpeed with bf16 enabled partitions them in
    bf16 (ZeRO-3's ``zero.Init``)."""
    peft_fsdp = row["source"] == "peft-docs-accelerate" and row["sharding"].startswith("fsdp")
    return "yes" if peft_fsdp and quant(row) == "none" else "no"


def fp32_adapters(row: dict[str, str]) -> str:
    """Adapters whose path runs in fp32: PEFT's fp32 adapters stepped without autocast. Only
    our own runs say so (``benchmarks/gpu/llm_gpu_check.py`` steps a plain loop); every published
    recipe runs its adapters in 16 bits (torchtune, NeMo) or names a Trainer that autocasts."""
    return "yes" if row["source"] == OWN and method(row) in ("lora", "qlora") else "no"


def chunked_loss(row: dict[str, str]) -> str:
    """Cross-entropy over chunks of the logits (torchtune's ``CEWithChunkedOutputLoss``, in its
    Llama 3.1 configs from the summer of 2024; the 3B table says per row)."""
    if row["source"] == "torchtune-readme-2024-09" or "chunked CE=yes" in row["notes"]:
        return "yes"
    return "no"


def compiled(row: dict[str, str]) -> str:
    """The step ran under ``torch.compile``: torchtune's 2024-09 table (its README: "torch.compile
    on"), the rows of its 3B table that say ``compile=yes`` and its 2024-05 QLoRA row ("torch
    compile"), AutoModel's runs whose config sets ``enable_compile: True``, and our own compiled
    runs (``torch.compile`` in their notes). No other source says it compiled its step."""
    said = (
        "torch.compile on" in row["framework"],
        "compile=yes" in row["notes"],
        "enable_compile: True" in row["notes"],
        row["source"] == OWN and "torch.compile" in row["notes"],
    )
    return "yes" if any(said) or "torch compile)" in row["notes"] else "no"


def stack(row: dict[str, str]) -> str:
    """The software the run used (``data/llm-stacks.csv``), from its source's own words: NVIDIA's
    AutoModel rows (FSDP2 on Hugging Face's model code), its NeMo and Megatron-Bridge rows; torchtune's READMEs; MosaicML's llm-foundry;
    Unsloth's kernels where a row names them; every other row ran Hugging Face's model code
    with PEFT (TRL, the Trainer, LLaMA-Factory, Answer.AI's FSDP loop, Qwen's script, ours)."""
    if row["framework"].startswith("Unsloth"):
        return "unsloth"
    for prefix, name in (
        ("nemo-automodel", "automodel"), ("nemo", "nemo"), ("megatron", "nemo"), ("torchtune", "torchtune"),
        ("llm-foundry", "llm-foundry"),
    ):  # fmt: skip
        if row["source"].startswith(prefix):
            return name
    return "hf"


def attention(row: dict[str, str]) -> str:
    """The fused attention kernel the run's step called: ``native``, one written for its GPU's
    generation (Transformer Engine's cuDNN attention under NeMo, Megatron-Bridge and AutoModel;
    PyTorch's SDPA from 2.11 on, whose bundled cuDNN makes cuDNN's its first choice on Hopper,
    as our own runs had), or ``fa2``, FlashAttention-2 (flash-attn 2, llm-foundry's
    ``attn_impl: flash``, Unsloth's, and PyTorch's SDPA before 2.11, whose flash backend is
    FlashAttention-2: every other source ran before it). They differ only on Hopper and later
    (``machine.FA2_SHARE``)."""
    if stack(row) in ("nemo", "automodel") or row["source"] == OWN:
        return "native"
    return "fa2"


def memory_statistic(row: dict[str, str]) -> str:
    """``allocated``: the tensors' peak (torchtune's peak active memory); ``reserved``: what the
    allocator held or nvidia-smi showed (Answer.AI's reserved memory, and every figure whose
    statistic the source does not state: docs/SOURCES.md, "LLM fine-tuning"). Ours read
    ``torch.cuda.max_memory_allocated``."""
    if not row["peak_memory_gib_per_gpu"]:
        return ""
    return "allocated" if row["source"].startswith(("torchtune", OWN)) else "reserved"


def sharding(row: dict[str, str]) -> str:
    text = row["sharding"].lower()
    gpus = int(row["gpus"] or 1)
    if gpus == 1:
        return "none"
    megatron = "megatron" in text or "distributed optimizer" in text
    if megatron and "fsdp" not in text and not re.search(r"tp=[2-9]|pp=[2-9]", text):
        return "zero1"  # Megatron's data parallelism with its distributed optimizer
    if "no_shard" in text or text.startswith("ddp"):
        return "ddp"
    if re.search(r"tp=[2-9]|pp=[2-9]", text):
        return "model"
    return "fsdp"


def offload(row: dict[str, str]) -> str:
    text = (row["sharding"] + " " + row["optimizer"]).lower().replace("no offload", "")
    if "offload" in text:
        return "params"
    if "activation offload" in row["activation_checkpointing"].lower():
        return "activations"
    return "none"


def capacity(row: dict[str, str]) -> str:
    """A card the source does not name: its memory (``unspecified (24 GB VRAM)``), in GiB."""
    if row["memory_cap_gb"]:
        return row["memory_cap_gb"]
    match = re.search(r"(\d+) GB", row["gpu"])
    return match.group(1) if match and row["gpu"].startswith("unspecified") else ""


def uses(row: dict[str, str], normal: dict[str, str]) -> tuple[str, str, str]:
    """(throughput use, memory use, why)."""
    source, gpus = row["source"], int(row["gpus"] or 0)
    notes = []
    throughput = "fit" if source in THROUGHPUT_FIT else ""
    throughput = "holdout" if source in THROUGHPUT_HOLDOUT else throughput
    memory = "fit" if source in MEMORY_FIT else ("holdout" if source in MEMORY_HOLDOUT else "")
    if source in BOUNDARY:
        return "", "boundary", "largest sequence that fits the card (Hugging Face + FA2 column)"
    if not normal["n_method"] or not normal["n_model"]:
        return "", "", "not a run advisor models (an estimate table, or a method it lacks)"
    if "estimate" in row["measured"].lower():
        return "", "", "the author's estimate, not a measurement"
    if row["framework"].startswith("Unsloth"):
        throughput = "holdout"  # its speed is Unsloth's own paired table's (llm-stacks.csv)
    if row["model_id"] == FOUNDRY_HOLDOUT and source == "llm-foundry-mpt-bench":
        throughput = "holdout"
    if not normal["n_device"] and not normal["n_capacity_gib"]:
        notes.append(f"{row['gpu'].split(' (')[0]} is not in data/devices.csv")
        throughput = memory = ""
    if gpus > MAX_GPUS:  # its layout over several nodes is the scale-out check: never fitted
        notes.append(f"{gpus} GPUs: several nodes, held out")
        throughput = "holdout" if throughput else ""
        memory = ""
    if normal["n_offload"] == "params":
        notes.append("weights offloaded to host memory: not modelled")
        throughput = memory = ""
    if source == "torchtune-readme-2024-11-optflags" and row["packing"] == "no":
        notes.append("unpacked: its tokens count labels only, its sequences are shorter")
        throughput = memory = ""
    if source == "torchtune-readme-2024-09":
        if normal["n_device"] == "RTX4090" and normal["n_method"] == "full":
            notes.append("paged 8-bit AdamW spills to host memory on a 24 GB card")
            throughput = memory = ""
        if normal["n_device"] == "A6000":
            notes.append(
                "twice the 4090 row's memory under the same recipe: config unknown; its speed "
                "needs 75-100% of the A6000's dense bf16 peak"
            )
            throughput = memory = ""
    if not row["peak_memory_gib_per_gpu"]:
        memory = ""
    if not row["tokens_per_second_per_gpu"]:
        throughput = ""
    return throughput, memory, "; ".join(notes)


def normalise(row: dict[str, str]) -> dict[str, str]:
    kind, in_backward = optimizer(row)
    model = row["model_id"] if not row["model_id"].startswith("generic") else ""
    normal = {
        "n_model": model,
        "n_method": method(row),
        "n_rank": (re.match(r"\d+", row["lora_rank"]) or [""])[0],
        "n_targets": targets(row),
        "n_quant": quant(row),
        "n_precision": precision(row),
        "n_device": DEVICES.get(row["gpu"].split(" (")[0], ""),
        "n_capacity_gib": capacity(row),
        "n_checkpointing": checkpointing(row),
        "n_activation_offload": "yes" if "activation offload" in row["activation_checkpointing"].lower() else "no",
        "n_chunked_loss": chunked_loss(row),
        "n_memory_statistic": memory_statistic(row),
        "n_optimizer": kind,
        "n_optimizer_in_backward": in_backward,
        "n_master": master(row),
        "n_sharding": sharding(row),
        "n_offload": offload(row),
        "n_fp32_adapters": fp32_adapters(row),
        "n_fused_loss": "yes" if fused_loss(row) else "no",
        "n_frozen_fp32": frozen_fp32(row),
        "n_compiled": compiled(row),
        "n_stack": stack(row),
        "n_attention": attention(row),
        "n_fp8_weights": fp8_weights(row),
    }  # fmt: skip
    if normal["n_offload"] == "activations":
        normal["n_offload"] = "none"
    throughput, memory, note = uses(row, normal)
    return {"use_throughput": throughput, "use_memory": memory, "use_note": note, **normal}


def main() -> int:
    with FILE.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        original = [name for name in reader.fieldnames or () if name not in COLUMNS]
        rows = list(reader)
    out = [{**{k: row[k] for k in original}, **normalise(row)} for row in rows]
    with FILE.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*original, *COLUMNS], lineterminator="\n")
        writer.writeheader()
        writer.writerows(out)
    counts: dict[str, int] = {}
    for row in out:
        for key in ("use_throughput", "use_memory"):
            name = f"{key}={row[key] or '-'}"
            counts[name] = counts.get(name, 0) + 1
    print(f"wrote {FILE} ({len(out)} rows): {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
