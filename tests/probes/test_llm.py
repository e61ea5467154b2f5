"""LLM shapes and what a fine-tuning method does with them: parameters, FLOPs, memory."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.errors import UsageError
from probes import llm, llm_memory
from probes.llm import FineTune

GIB = 2**30


@pytest.mark.parametrize("model", sorted(llm.models()))
def test_parameter_counts_are_the_published_ones(model: str) -> None:
    """data/llm-architectures.csv: counts checked against the published totals (keras-hub's
    preset metadata, the Qwen2.5 blog's table, llm-foundry's configs)."""
    found = llm.get(model)
    assert found.shape.parameters() == found.published_parameters > 0


def test_models_are_found_by_id_alias_or_repository() -> None:
    assert llm.get("llama3-8b").id == "llama3.1-8b"
    assert llm.get("Meta-Llama/Llama-3.1-70B").id == "llama3.1-70b"
    assert llm.get("Qwen2.5-0.5B").id == "qwen2.5-0.5b"
    assert llm.find("resnet50") is None
    with pytest.raises(UsageError, match="did you mean"):
        llm.get("llama3-9b")


def test_shapes_carry_what_the_configs_say() -> None:
    gemma = llm.get("gemma2-9b").shape
    assert (gemma.query_width, gemma.kv_width, gemma.norms, gemma.tied) == (4096, 2048, 4, True)
    qwen = llm.get("qwen2.5-7b").shape
    assert qwen.qkv_bias and qwen.gated and not qwen.tied and qwen.kv_width == 512
    mpt = llm.get("mpt-7b").shape
    assert not mpt.gated and mpt.ffn == 4 * mpt.hidden


def test_adapter_counts_are_what_peft_prints() -> None:
    """PEFT's print_trainable_parameters for Llama 3 8B: r=8 on q_proj, v_proj: 3,407,872;
    r=16 on every linear layer of the blocks: 41,943,040."""
    shape = llm.get("llama3.1-8b").shape
    assert FineTune(shape, "lora", 8, "qv").trainable_parameters() == 3_407_872
    assert FineTune(shape, "lora", 16, "all").trainable_parameters() == 41_943_040
    assert FineTune(shape, "full").trainable_parameters() == shape.parameters()
    assert FineTune(shape, "qlora").frozen_parameters() == shape.parameters()


def test_flops_per_token_by_method() -> None:
    """Full: 6N plus attention; frozen weights get no weight gradients (4N); checkpointing runs
    the layers' forward again; attention grows with the sequence."""
    shape = replace(llm.get("llama3.1-8b").shape, sequence=4096)
    full = FineTune(shape, "full", checkpointing=False)
    n = full.projection_parameters() + 128_256 * 4096  # the matrices, not the norms
    assert n == pytest.approx(shape.flop_parameters(), rel=1e-4)
    assert full.flops_per_token() == pytest.approx(6 * n + full.attention_flops_per_token())
    lora = FineTune(shape, "lora", 16, "all", checkpointing=False)
    adapters = 6 * lora.adapter_parameters()
    assert lora.flops_per_token() == pytest.approx(
        4 * n + adapters + lora.attention_flops_per_token()
    )
    recomputed = FineTune(shape, "lora", 16, "all", checkpointing=True)
    extra = 2 * full.projection_parameters() + adapters / 3
    assert recomputed.flops_per_token() - lora.flops_per_token() == pytest.approx(
        extra + 2 * 4096 * shape.query_width * shape.layers
    )
    # causal FlashAttention: 2 T d per layer forward, 2.5x that backward
    assert full.attention_flops_per_token() == pytest.approx(3.5 * 2 * 4096 * 4096 * 32)
    short = FineTune(replace(shape, sequence=1024), "full", checkpointing=False)
    assert short.attention_flops_per_token() == pytest.approx(full.attention_flops_per_token() / 4)
    # QLoRA counts LoRA's FLOPs and moves its 4-bit weights each pass
    qlora = FineTune(shape, "qlora", 16, "all", checkpointing=True)
    assert qlora.flops_per_token() == recomputed.flops_per_token()
    assert qlora.dequant_bytes() == pytest.approx(3 * 2.5625 * full.projection_parameters())
    assert lora.dequant_bytes() == 0


def test_memory_footprint_by_method() -> None:
    shape = llm.get("llama3.1-8b").shape
    full = llm_memory.footprint(FineTune(shape, "full"))
    p = shape.parameters()
    # mixed precision AdamW: fp32 weights, gradients, two slots, and the 16-bit copy
    assert (full.weights, full.gradients, full.optimizer, full.compute_copy) == (
        4 * p, 4 * p, 8 * p, 2 * p,
    )  # fmt: skip
    pure = llm_memory.footprint(
        FineTune(shape, "full", master="bf16", optimizer="adamw8bit", optimizer_in_backward=True)
    )
    assert (pure.weights, pure.gradients, pure.optimizer, pure.compute_copy) == (2 * p, 0, 2 * p, 0)
    lora = llm_memory.footprint(FineTune(shape, "lora"))
    assert lora.weights == pytest.approx(2 * p, rel=0.02) and lora.compute_copy == 0
    qlora = llm_memory.footprint(FineTune(shape, "qlora"))
    # 4-bit projections, 16-bit token table and output projection: ~5.6 GiB for Llama 3.1 8B
    assert 5.3 * GIB < qlora.weights < 6.0 * GIB
    assert qlora.optimizer == 8 * FineTune(shape, "qlora").adapter_parameters()


def test_checkpointing_keeps_layer_inputs_only() -> None:
    shape = llm.get("llama3.1-8b").shape
    kept = llm_memory.footprint(FineTune(shape, "lora", checkpointing=False)).kept_per_token
    checkpointed = llm_memory.footprint(FineTune(shape, "lora"))
    assert checkpointed.kept_per_token == 32 * 2 * 4096
    assert kept == 32 * llm_memory.layer_activation_bytes(FineTune(shape))
    assert kept > 20 * checkpointed.kept_per_token
    chunked = llm_memory.footprint(FineTune(shape, "lora", chunked_loss=True))
    assert checkpointed.working_per_token - chunked.working_per_token == 8 * 128_256


def test_methods_are_checked() -> None:
    llm.check_method("qlora")
    with pytest.raises(UsageError, match="full, lora, qlora"):
        llm.check_method("dora")
