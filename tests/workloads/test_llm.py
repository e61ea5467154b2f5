"""LLM shapes and what a fine-tuning method does with them: parameters, FLOPs, memory."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.errors import UsageError
from advisor.workloads import llm, llm_job, llm_memory, transformers
from advisor.workloads.llm import FineTune
from advisor.workloads.llm_job import job_for
from probes.spec import spec_for

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


def test_fp32_adapters_keep_an_fp32_copy_of_each_adapted_input() -> None:
    """Without checkpointing, a token keeps 4 bytes an input element of every adapted
    projection beside the 16-bit activations: q, k, v, gate and up read the hidden state (4,096
    wide in Llama 3.1 8B), o the attention's output (4,096), down the feed-forward's (14,336)."""
    shape = llm.get("llama3.1-8b").shape
    plain = llm_memory.footprint(FineTune(shape, "lora", checkpointing=False))
    fp32 = llm_memory.footprint(FineTune(shape, "lora", checkpointing=False, fp32_adapters=True))
    assert FineTune(shape, "lora").adapted_widths() == (6 * 4096 + 14_336, 43_008)
    assert fp32.kept_per_token - plain.kept_per_token == 32 * 4 * (6 * 4096 + 14_336)
    only_qv = FineTune(shape, "lora", targets="qv", checkpointing=False, fp32_adapters=True)
    assert llm_memory.footprint(only_qv).kept_per_token - plain.kept_per_token == 32 * 4 * 8192
    assert FineTune(shape, "full").adapted_widths() == (0, 0)


def test_frozen_weights_loaded_in_fp32_take_twice_the_memory_and_gather_in_16_bits() -> None:
    """PEFT's example loads Llama 2 70B in fp32 for LoRA under FSDP's bf16 mixed precision: its
    frozen weights hold 4 bytes each, but FSDP gathers them in 16 bits. Under QLoRA only the
    weights left unquantised (token table, output projection, norms) would be fp32."""
    shape = llm.get("llama2-70b").shape
    bf16 = llm_memory.footprint(FineTune(shape, "lora", rank=8))
    fp32 = llm_memory.footprint(FineTune(shape, "lora", rank=8, frozen_fp32=True))
    frozen = FineTune(shape, "lora").frozen_parameters()
    assert fp32.weights - bf16.weights == 2 * frozen
    assert fp32.gathered == bf16.gathered
    qlora = FineTune(shape, "qlora", frozen_fp32=True)
    unquantised = qlora.frozen_parameters() - qlora.projection_parameters()
    extra = (
        llm_memory.footprint(qlora).weights - llm_memory.footprint(FineTune(shape, "qlora")).weights
    )
    assert extra == 2 * unquantised


def test_methods_are_checked() -> None:
    llm.check_method("qlora")
    with pytest.raises(UsageError, match="full, lora, qlora"):
        llm.check_method("dora")


def test_a_probe_name_stands_for_its_job() -> None:
    """The probe store's key names what the proxy steps, and a child process rebuilds the job
    from it (``probes.spec.spec_for``)."""
    job = job_for("llama3-8b", method="qlora", tokens=20_000_000, rank=32, targets="attention")
    name = llm_job.probe_name(job)
    assert name == "llm:llama3.1-8b:qlora:r32-attention:2048"
    again = llm_job.job_of_probe(name, job.sequences, 1, 1)
    assert again.tune == job.tune and again.sequences == job.sequences
    off = job_for("qwen2.5-7b", method="full", examples=100, checkpointing=False, sequence=512)
    assert llm_job.job_of_probe(llm_job.probe_name(off), 100, 2, 4).tune == off.tune
    fp32 = job_for("qwen2.5-0.5b", examples=100, checkpointing=False, fp32_adapters=True)
    assert llm_job.probe_name(fp32).endswith(":no-checkpointing:fp32-adapters")
    assert llm_job.job_of_probe(llm_job.probe_name(fp32), 100, 1, 1).tune == fp32.tune
    spec = spec_for(name, samples=job.sequences, epochs=1, batch_size=1)
    assert spec.workload is not None and spec.workload.adapters == (32, ("q", "k", "v", "o"))
    assert spec.workload.transformer == job.tune.shape and spec.workload.synthetic_input
    assert spec.workload.train_flops_per_sample == job.tune.flops_per_token() * 2048
    with pytest.raises(UsageError):
        llm_job.job_of_probe("llm:llama3.1-8b", 1, 1, 1)


def test_a_proxy_keeps_the_real_width_and_shrinks_to_one_layer() -> None:
    shape = llm.get("llama3.1-70b").shape
    proxy = transformers.probe_shape(shape, 2e11)
    assert (proxy.layers, proxy.hidden, proxy.ffn, proxy.kv_width) == (1, 8192, 28_672, 1024)
    assert proxy.vocabulary == transformers.PROXY_VOCABULARY
    assert proxy.sequence == transformers.LLM_MIN_SEQUENCE
    small = transformers.probe_shape(llm.get("qwen2.5-0.5b").shape, 5e10)
    assert small.layers == 2 and small.hidden == 896


@pytest.mark.parametrize("model", ["llama3.1-70b", "llama2-13b", "qwen2.5-7b", "llama3.1-8b"])
def test_a_proxy_too_big_for_the_budget_or_the_memory_is_narrowed(model: str) -> None:
    """Fewer layers and tokens first, then half the width at a time, whole heads as wide as
    the real ones, until two samples fit the FLOP budget and the weights the cap; a proxy
    that cannot halve again (odd heads) stops there, and says how wide it is."""
    full = llm.get(model).shape
    for budget, most in ((2e10, None), (1e15, 30_000_000), (2e9, 10**9)):
        proxy = transformers.probe_shape(full, budget, most)
        assert proxy.layers <= transformers.PROXY_LAYERS
        fits = 2 * proxy.train_flops_per_sample() <= budget and (
            most is None or proxy.parameters() <= most
        )
        assert fits or not proxy.can_narrow()
        assert proxy.hidden < full.hidden and full.hidden % proxy.hidden == 0
        assert proxy.query_width // proxy.heads == full.query_width // full.heads
        assert proxy.heads % (proxy.kv_heads or proxy.heads) == 0
        assert f"{proxy.hidden} of {full.hidden} wide" in transformers.describe_proxy(proxy, full)
    if model == "llama3.1-70b":  # 855M weights a layer at its width, 14 GiB with AdamW
        assert transformers.probe_shape(full, 5e10).hidden == 4096
        assert transformers.probe_shape(full, 2e11, 134_217_728).parameters() <= 134_217_728


def test_counts_of_jobs_as_people_state_them() -> None:
    assert llm_job.parse_count("20M", "--tokens") == 20_000_000
    assert llm_job.parse_count("1.5b", "--tokens") == 1_500_000_000
    assert llm_job.parse_count("20_000", "--examples") == 20_000
    assert llm_job.count_value("nan") is None and llm_job.count_value("-3") == -3
    with pytest.raises(UsageError, match="at least 1"):
        llm_job.parse_count("0", "--tokens")
    packed = job_for("llama3-8b", tokens=20_000_000, sequence=4096)
    assert packed.sequences == -(-20_000_000 // 4096) and packed.packed
    padded = job_for("llama3-8b", examples=5000, tokens=2_000_000, packed=False)
    assert padded.sequences == 5000 and padded.computed_tokens == 5000 * 2048


@pytest.mark.tf
def test_keras_builds_causal_lms_to_the_count_and_trains_only_adapters() -> None:
    """Grouped-query attention, gated or plain feed-forward, Gemma's four norms, tied or not:
    exactly the counted weights; LoRA trains only its factors."""
    import keras
    import numpy as np

    from advisor.workloads.transformers import CAUSAL_LM, Shape
    from probes.loading import parameter_count
    from probes.transformer_layers import add_adapters, build_transformer

    shapes = [
        Shape(CAUSAL_LM, 2, 32, 4, 16, 50, kv_heads=2, intermediate=48, gated=True, tied=False),
        Shape(CAUSAL_LM, 1, 32, 4, 16, 50, kv_heads=4, head_dim=16, intermediate=48, gated=True,
              norms=4),
        Shape(CAUSAL_LM, 2, 32, 4, 16, 50),
        Shape(CAUSAL_LM, 1, 64, 8, 16, 50, kv_heads=2, intermediate=96, gated=True,
              tied=False).narrowed(),  # a proxy narrowed to fit: heads as wide as the real ones
    ]  # fmt: skip
    for shape in shapes:
        model = build_transformer(shape, name="tiny")
        assert parameter_count(model) == shape.parameters()
        add_adapters(model, 4, ("q", "v", "up"))
        trained = {w.path.split("/")[-1] for w in model.trainable_weights}
        assert trained == {"lora_kernel_a", "lora_kernel_b"}
        model.compile(
            optimizer="adamw", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        )
        x = np.random.default_rng(0).integers(0, 50, (4, 16)).astype("int32")
        history = model.fit(x, x, batch_size=2, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][0])
        keras.backend.clear_session()
