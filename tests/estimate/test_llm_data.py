"""The published fine-tuning runs: every machine-readable column is what the normaliser reads
from the row's own words, so a hand edit of a reading (or a source the rules do not know) fails
here instead of silently changing what is fitted or held out."""

from __future__ import annotations

import csv

from advisor.fitting.derive.llm_runs import COLUMNS, FILE, normalise, optimizer


def test_the_shipped_readings_are_the_normalisers() -> None:
    with FILE.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) > 200
    differ = [
        (line, name, row[name], wanted)
        for line, row in enumerate(rows, start=2)
        for name, wanted in normalise(row).items()
        if row[name] != wanted
    ]
    assert differ == []
    assert set(COLUMNS) <= set(rows[0])


def test_our_own_runs_are_held_out_and_say_how_they_ran() -> None:
    with FILE.open(newline="", encoding="utf-8") as handle:
        ours = [r for r in csv.DictReader(handle) if r["source"] == "advisor-gpu-check-20261126"]
    assert len(ours) == 16  # 11 on an H200, 5 on an H100 (nvidia-smi: "H100 80GB HBM3")
    assert all(r["use_throughput"] == "holdout" and r["use_memory"] == "holdout" for r in ours)
    assert sorted(r["n_device"] for r in ours) == ["H100"] * 5 + ["H200"] * 11
    assert all(r["n_memory_statistic"] == "allocated" for r in ours)
    compiled = [r for r in ours if r["n_compiled"] == "yes"]
    assert len(compiled) == 1 and "torch.compile" in compiled[0]["notes"]
    lora = [r for r in ours if r["n_method"] == "lora"]
    assert lora and all(r["n_fp32_adapters"] == "yes" and r["n_master"] == "fp32" for r in lora)
    assert all(r["n_master"] == "bf16" for r in ours if r["n_method"] == "full")


def test_a_negated_optimizer_in_backward_is_read_as_no() -> None:
    """torchtune's 3B table: "LoRA and QLoRA ... do not use optimizer_in_bwd"."""
    assert optimizer({"optimizer": "torch AdamW + optimizer_in_bwd"}) == ("adamw", "yes")
    assert optimizer({"optimizer": "AdamW (no optimizer_in_bwd per README)"}) == ("adamw", "no")
    assert optimizer({"optimizer": "bitsandbytes PagedAdamW8bit"}) == ("paged-adamw8bit", "no")


def test_answerai_rows_train_in_pure_bf16() -> None:
    with FILE.open(newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["source"] == "answerai-fsdp-qlora-2024-03"]
    assert len(rows) > 20
    assert {r["n_master"] for r in rows} == {"bf16"}


def test_each_row_names_the_attention_kernel_its_software_ran() -> None:
    """FlashAttention-2 (llm-foundry's flash-attn, SDPA before PyTorch 2.11) or the kernels
    written for the GPU (Transformer Engine's under NeMo and AutoModel; SDPA under PyTorch 2.11,
    which our own runs had)."""
    with FILE.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    kernels: dict[str, set[str]] = {}
    for row in rows:
        kernels.setdefault(row["n_stack"], set()).add(row["n_attention"])
    assert kernels["llm-foundry"] == {"fa2"} and kernels["torchtune"] == {"fa2"}
    assert kernels["nemo"] == {"native"} and kernels["automodel"] == {"native"}
    ours = {r["n_attention"] for r in rows if r["source"] == "advisor-gpu-check-20261126"}
    assert ours == {"native"}
