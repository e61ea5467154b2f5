"""LLM fine-tuning on a target: layout, memory, the step from the device model, the prediction."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest

from advisor.estimate import catalog, finetune, memory
from advisor.estimate.layout import Layout
from advisor.estimate.llm_predict import predict_job, predictor_for_job
from advisor.estimate.parameters import PRIOR, llm_calibration
from advisor.estimate.prediction import Target
from advisor.fitting import llm_fit
from advisor.fitting.llm_published import read_published, throughput_runs
from advisor.workloads import llm
from advisor.workloads.llm_job import job_for
from advisor.workloads.llm_memory import footprint, layer_kept_bytes

CALIBRATION = llm_calibration()
GIB = 2**30


def _machine(name: str, count: int = 1, precision: str = "bf16"):  # type: ignore[no-untyped-def]
    machine = finetune.machine_for(name, count, CALIBRATION, precision)
    assert machine is not None
    return machine


def test_a_model_that_fits_one_gpu_is_not_sharded() -> None:
    job = job_for("llama3-8b", method="qlora", tokens=20_000_000)
    _, plan, fit = finetune.choose_layout(job.tune, _machine("H100", 8), 8, 16)
    assert fit is not None and fit.fits and not plan.sharded
    assert plan.micro_batch == finetune.MAX_AUTO_MICRO_BATCH and plan.global_batch == 64


def test_70b_full_fine_tuning_needs_an_8_gpu_node() -> None:
    """Mixed-precision AdamW holds 18 bytes a weight: 1.27 TB for Llama 3.1 70B, 159 GB a GPU
    across eight. A B200 node holds it; an H100 node holds pure bf16 weights and 8-bit AdamW
    (6 bytes a weight, torchtune's low-memory recipe); four H100s hold neither."""
    job = job_for("llama3.1-70b", method="full", tokens=20_000_000)
    b200 = predict_job(job, Target("B200", 8))
    assert b200.fits and b200.reason is None and math.isfinite(b200.seconds)
    assert "FSDP" in b200.kernel_path and "8-bit" not in b200.kernel_path
    assert ("ADVISOR_SHARDING", "fsdp") in b200.environment
    h100 = predict_job(job, Target("H100", 8))
    assert h100.fits and "bf16 weights, 8-bit AdamW" in h100.kernel_path
    assert ("ADVISOR_OPTIMIZER", "adamw8bit") in h100.environment
    four = predict_job(job, Target("H100", 4))
    assert not four.fits and four.reason is not None
    assert "with FSDP across 4 GPUs" in four.reason and "75.5 GiB" in four.reason
    assert not predict_job(job, Target("B200", 1)).fits


def test_a_stack_that_keeps_every_activation_recomputes_before_it_changes_the_optimizer() -> None:
    """NeMo keeps every activation by default. Its 70B full fine-tune over two H100 nodes fits
    no layout so, and NeMo's users turn recompute on (it changes no arithmetic): the plan does
    too, and says so, before it reaches for 8-bit AdamW. A user who turned off the recompute
    their stack does by default (Hugging Face's) is taken at their word."""
    two_nodes = Target("H100", 8, nodes=2, network_gbps=3200)
    nemo = job_for("llama3.1-70b", method="full", tokens=20_000_000, stack="nemo")
    assert not nemo.tune.checkpointing
    planned = predict_job(nemo, two_nodes)
    assert planned.fits and "activation recompute" in planned.fallback
    assert "8-bit" not in planned.fallback and "8-bit" not in planned.kernel_path
    said = dict(planned.environment)
    assert said["ADVISOR_CHECKPOINTING"] == "1" and said["ADVISOR_OPTIMIZER"] == "adamw"
    assert any("activation recompute" in line for line in planned.steps)
    chosen = finetune.choose_layout(
        nemo.tune, _machine_of(two_nodes), 16, 16, calibration=CALIBRATION
    )
    assert chosen[0] == replace(nemo.tune, checkpointing=True)
    four_nodes = predict_job(nemo, Target("H100", 8, nodes=4, network_gbps=3200))
    assert four_nodes.fits and four_nodes.fallback == ""  # 32 GPUs hold it as it is
    told = job_for(
        "llama3.1-70b", method="full", tokens=20_000_000, stack="hf", checkpointing=False
    )
    assert finetune.recomputed(told.tune) is None
    assert finetune.recipes(told.tune) == [told.tune, finetune.low_memory(told.tune)]
    assert "activation recompute" not in predict_job(told, two_nodes).fallback


def _machine_of(target: Target):  # type: ignore[no-untyped-def]
    machine = finetune.machine_for(
        target.accelerator, target.accelerator_count, CALIBRATION, "bf16",
        nodes=target.nodes, network_bytes_s=target.network_gbps * 1e9 / 8,
    )  # fmt: skip
    assert machine is not None
    return machine


def test_a_gpu_too_small_names_the_largest_batch_or_sequence_that_fits() -> None:
    tune = job_for("llama3-8b", method="qlora", tokens=10**6, sequence=8192).tune
    counted = footprint(tune)
    fit = memory.llm_check(counted, _machine("RTX4090"), "none", 1, 8, 8192)
    assert fit is not None and not fit.fits and fit.largest_batch is not None
    assert 1 <= fit.largest_batch < 8
    assert f"batch {fit.largest_batch} or smaller would fit" in fit.reason(8)
    long = job_for("llama3-8b", method="qlora", tokens=10**6, sequence=65_536).tune
    fit = memory.llm_check(footprint(long), _machine("L4"), "none", 1, 1, 65_536)
    assert fit is not None and not fit.fits and fit.largest_batch is None
    assert fit.largest_sequence is not None and 2048 < fit.largest_sequence < 65_536
    assert "sequences of" in fit.reason(1)
    assert (
        memory.llm_bytes(footprint(long), "none", 1, 1, fit.largest_sequence) <= fit.available_bytes
    )


def _torchtune_3b(
    compiled: bool = True, chunked_loss: bool = True, optimizer_in_backward: bool = False
) -> llm.FineTune:
    """torchtune's Llama 3.2 3B full fine-tune of its optimisation table: 2 sequences of 4,096
    tokens, pure bf16, chunked loss, checkpointing, compiled."""
    return llm.FineTune(
        replace(llm.get("llama3.2-3b").shape, sequence=4096),
        "full",
        master="bf16",
        optimizer_in_backward=optimizer_in_backward,
        chunked_loss=chunked_loss,
        compiled=compiled,
    )


def test_a_compiled_step_peaks_at_one_phase_an_eager_step_counts_both() -> None:
    """The logits die in the loss's backward pass before any layer is recomputed, and each
    layer's gradients are born as its kept input dies: a compiled step peaks at the larger of
    the phases, below the eager count of everything at once."""
    tokens = 2 * 4096
    compiled = footprint(_torchtune_3b())
    eager = footprint(_torchtune_3b(compiled=False))
    peak = memory.llm_bytes(compiled, "none", 1, 2, 4096)
    assert peak < memory.llm_bytes(eager, "none", 1, 2, 4096)
    # without the optimizer in the backward pass the gradients' phase is the peak: every
    # weight, both AdamW slots and every gradient, with one layer recomputed beside them
    static = memory.llm_static_bytes(compiled, "none", 1)
    assert peak == pytest.approx(static + tokens * compiled.recomputed_per_token)
    # with it, no gradient buffer: the loss is the peak, with the output projection's gradient
    in_backward = footprint(_torchtune_3b(optimizer_in_backward=True))
    at_loss = memory.llm_static_bytes(in_backward, "none", 1) + in_backward.output_gradient
    at_loss += tokens * (in_backward.kept_per_token + in_backward.loss_per_token)
    assert memory.llm_bytes(in_backward, "none", 1, 2, 4096) == pytest.approx(at_loss)


def test_the_output_projections_gradient_is_counted_at_the_loss() -> None:
    """A trained output projection (Llama 3.2 3B's is its tied token table, 128,256 x 3,072)
    has its gradient built at the loss; a chunked loss adds each chunk's contribution into the
    sum, so two are alive at once. Adapters leave the projection frozen."""
    projection = 128_256 * 3072 * 2  # bf16
    assert footprint(_torchtune_3b()).output_gradient == 2 * projection
    assert footprint(_torchtune_3b(chunked_loss=False)).output_gradient == projection
    lora = footprint(replace(_torchtune_3b(), method="lora"))
    assert lora.output_gradient == 0


@pytest.mark.parametrize("compiled", [True, False])
def test_the_most_tokens_that_fit_are_the_boundary(compiled: bool) -> None:
    counted = footprint(_torchtune_3b(compiled=compiled, optimizer_in_backward=True))
    available = 20 * GIB
    tokens = memory.tokens_that_fit(counted, "none", 1, available)
    assert tokens > 0
    assert memory.llm_bytes(counted, "none", 1, 1, tokens) <= available
    assert memory.llm_bytes(counted, "none", 1, 1, tokens + 1) > available
    assert memory.tokens_that_fit(counted, "none", 1, GIB) == 0  # not even the weights


def test_nemos_sft_recipe_keeps_its_optimizer_in_bf16_and_its_weights_in_fp8() -> None:
    """NeMo 24.07's 70B full fine-tune over 16 H100s (tensor 4 x pipeline 4 x 20 virtual, no
    data parallel, no recompute) fits as NVIDIA's launcher ran it: its SFT recipe keeps Apex's
    distributed Adam in bf16 (master copy, moments and gradients: 8 bytes a weight) and builds
    the weights in FP8 with their FP8 transpose (2 more), 10 bytes a weight where mixed
    precision's 18 needed 90.7 GiB of a card's 75.5 (docs/SOURCES.md, "LLM fine-tuning")."""
    run = next(r for r in read_published() if r.label == "llama2-70b full 4096 tok 16xH100 fp8")
    assert (run.tune.master, run.tune.fp8_weights, run.plan.virtual) == ("bf16", True, 20)
    machine = llm_fit.machine_of(run, llm_calibration())
    assert machine is not None
    fit = finetune.fit_of(run.tune, run.plan, machine)
    mixed = finetune.fit_of(replace(run.tune, master="fp32", fp8_weights=False), run.plan, machine)
    assert fit is not None and mixed is not None
    assert fit.fits and not mixed.fits
    share = footprint(run.tune, fp8=True).split(run.plan.tensor, run.plan.pipeline)
    states = share.weights + share.compute_copy + share.gradients + share.optimizer
    weights = run.tune.trainable_parameters() / (run.plan.tensor * run.plan.pipeline)
    assert states == pytest.approx(10 * weights)


def test_transformer_engine_layers_keep_less_and_an_interleaved_pipeline_more() -> None:
    """Megatron-Bridge's 70B full fine-tune over 32 H100s (tensor 4 x pipeline 4, five virtual
    stages, FP8, no recompute) fits as it ran: Transformer Engine's layers keep 6 d_ff bytes
    of a SwiGLU, not eager PyTorch's 8, and in FP8 their linear inputs in 8 bits; the
    interleaved pipeline's first stage keeps 1 + 3/20 times a plain one's activations."""
    run = next(r for r in read_published() if r.label == "llama3.1-70b full 4096 tok 32xH100 fp8")
    assert run.tune.stack == "nemo" and run.plan.virtual == 5
    eager_tune = replace(run.tune, stack="hf")  # the same recipe, as eager PyTorch keeps it
    machine = llm_fit.machine_of(run, llm_calibration())
    assert machine is not None
    fit = finetune.fit_of(run.tune, run.plan, machine)
    eager = finetune.fit_of(eager_tune, run.plan, machine)
    plain = finetune.fit_of(run.tune, replace(run.plan, virtual=1), machine)
    assert fit is not None and eager is not None and plain is not None
    assert fit.fits and not eager.fits
    shape = run.tune.shape
    per_token = {  # a layer's kept bytes a token: eager, TE in bf16, TE in FP8
        "eager": 8 * shape.hidden + 4 * shape.query_width + 4 * shape.kv_width + 8 * shape.ffn,
        "te": 8 * shape.hidden + 4 * shape.query_width + 4 * shape.kv_width + 6 * shape.ffn,
        "te fp8": 6 * shape.hidden + 5 * shape.query_width + 4 * shape.kv_width + 5 * shape.ffn,
    }
    assert layer_kept_bytes(eager_tune, fp8=True) == per_token["eager"]
    assert layer_kept_bytes(run.tune) == per_token["te"]
    assert layer_kept_bytes(run.tune, fp8=True) == per_token["te fp8"]
    tokens = run.plan.micro_batch * shape.sequence
    kept = shape.layers * per_token["te fp8"] * tokens / run.plan.tensor
    moved = fit.needed_bytes - plain.needed_bytes
    assert moved == pytest.approx(kept * (3 / 20), rel=1e-6)


def test_every_published_run_fits_its_gpus() -> None:
    """The runs happened: each published configuration advisor can lay out fits its GPU in the
    model, the tensor and pipeline parallel ones as published (their share of the model). The
    tightest, llm-foundry's MPT-3B at 8,192 tokens, three micro-batches and no checkpointing,
    fits because its loss is flash-attn's fused kernel (no fp32 copy of the logits): counted as
    an unfused loss it is 1.7% past what a card leaves."""
    checked, misjudged, split = 0, [], 0
    for run in read_published():
        if not run.device or not (run.use_throughput or run.use_memory):
            continue
        machine = llm_fit.machine_of(run, CALIBRATION)
        assert machine is not None
        split += run.model_parallel
        fit = finetune.fit_of(run.tune, run.plan, machine)
        assert fit is not None, run.label
        checked += 1
        assert fit.needed_bytes <= 1.02 * fit.available_bytes, run.label
        if not fit.fits:
            misjudged.append(run.label)
        if run.label.startswith("mpt-3b full 8192") and run.plan.micro_batch == 3:
            unfused = finetune.fit_of(replace(run.tune, fused_loss=False), run.plan, machine)
            assert unfused is not None and not unfused.fits
    assert checked >= 150 and split >= 8 and misjudged == []


def test_no_step_beats_the_hardware() -> None:
    for run in throughput_runs("fit") + throughput_runs("holdout"):
        machine = _machine(run.device, run.plan.gpus, run.precision)
        step = finetune.step_of(run.tune, run.plan, machine, CALIBRATION)
        assert step.seconds >= step.least > 0
        assert step.flops_per_gpu <= machine.peaks.matmul_flops


@pytest.mark.parametrize("name", sorted(llm.models()))
def test_no_llm_job_beats_any_gpu_of_the_catalog(name: str) -> None:
    """Every LLM of the zoo, each method, on one GPU, on a node of eight and on four such nodes
    of every catalog GPU, in bf16 and fp8: wherever the job fits, it takes no less than the
    roofline's least time, and its GPUs run its FLOPs (recomputation included) at most at the
    datasheet peak of the fastest unit that precision may use."""
    checked = 0
    for spec in catalog.accelerators().values():
        if spec.kind != "gpu":
            continue
        for method, (count, nodes), precision in itertools.product(
            ("full", "lora", "qlora"), ((1, 1), (8, 1), (8, 4)), ("bf16", "fp8")
        ):
            job = job_for(name, method=method, tokens=10**6, precision=precision)
            target = Target(spec.name, count, nodes=nodes, network_gbps=400.0)
            prediction = predict_job(job, target)
            if not prediction.fits or not math.isfinite(prediction.seconds):
                continue
            where = (spec.name, count, nodes, method, precision)
            assert prediction.seconds >= prediction.least_seconds > 0, where
            flops = job.computed_tokens * job.tune.flops_per_token()
            units = (spec.fp32_tflops, spec.tf32_tflops, spec.half_tflops, spec.fp8_tflops)
            assert flops / prediction.seconds / (count * nodes) <= max(units) * 1e12, where
            checked += 1
    assert checked >= 40


def test_fp32_adapters_slow_a_step_by_their_traffic_and_16_bit_ones_are_as_fitted() -> None:
    """An fp32 adapter path adds its casts and fp32 tensors' traffic to the step: for Llama 3.1
    8B with adapters on every projection, 2 x 4,096 tokens on an H200 (our own run: 8,913
    tokens/s measured against 13,466 predicted before, data/llm-finetune-published.csv line
    241), the added traffic is what the step runs longer; adapters on q and v add a sixth of it."""
    machine = _machine("H200")
    plan = Layout(1, 2, 2)
    tune = job_for("llama3-8b", examples=10, sequence=4096, checkpointing=False).tune
    fp32 = replace(tune, fp32_adapters=True)
    assert finetune.adapter_traffic(tune) == 0.0
    plain = finetune.step_of(tune, plan, machine, CALIBRATION)
    slow = finetune.step_of(fp32, plan, machine, CALIBRATION)
    assert 1.3 < slow.seconds / plain.seconds < 1.8
    assert slow.flops == plain.flops
    qv = replace(fp32, targets="qv")
    assert 0.1 < finetune.adapter_traffic(qv) / finetune.adapter_traffic(fp32) < 0.25
    full = job_for("llama3-8b", method="full", examples=10, sequence=4096).tune
    assert finetune.adapter_traffic(full) == 0.0
    # in fp32 every adapter path is fp32 already: the flag changes nothing
    job = job_for("llama3-8b", examples=64, sequence=4096, checkpointing=False)
    flagged = replace(job, tune=replace(job.tune, fp32_adapters=True))
    for precision, same in (("fp32", True), ("bf16", False)):
        plain = predict_job(replace(job, precision=precision), Target("H200", 1)).seconds
        asked = predict_job(replace(flagged, precision=precision), Target("H200", 1)).seconds
        assert (plain == asked) is same


def test_qlora_is_slower_than_lora_and_faster_per_dollar_of_memory() -> None:
    lora = job_for("llama3-8b", method="lora", tokens=20_000_000)
    qlora = job_for("llama3-8b", method="qlora", tokens=20_000_000)
    target = Target("A100-80GB", 1)
    assert predict_job(qlora, target).seconds > predict_job(lora, target).seconds
    assert footprint(qlora.tune).weights < 0.4 * footprint(lora.tune).weights


def test_more_tokens_and_epochs_take_proportionally_longer() -> None:
    target = Target("H100", 1)
    base = predict_job(job_for("qwen2.5-7b", tokens=10_000_000), target).seconds
    double = predict_job(job_for("qwen2.5-7b", tokens=20_000_000), target).seconds
    epochs = predict_job(job_for("qwen2.5-7b", tokens=10_000_000, epochs=3), target).seconds
    assert double == pytest.approx(2 * base, rel=0.01)
    assert epochs == pytest.approx(3 * base, rel=0.01)


def test_fp8_is_faster_where_the_gpu_has_fp8_units_only() -> None:
    bf16 = job_for("llama3-8b", method="full", tokens=10**7)
    fp8 = job_for("llama3-8b", method="full", tokens=10**7, precision="fp8")
    assert (
        predict_job(fp8, Target("H100", 8)).seconds < predict_job(bf16, Target("H100", 8)).seconds
    )
    a100 = Target("A100-80GB", 8)
    assert predict_job(fp8, a100).seconds == pytest.approx(predict_job(bf16, a100).seconds)


def test_bf16_on_a_gpu_without_it_runs_fp16_and_qlora_needs_a_gpu() -> None:
    job = job_for("llama3-8b", method="qlora", tokens=10**6)
    assert "fp16" in predict_job(job, Target("T4", 1)).kernel_path
    # fp8 there too: no FP8 and no bf16 units mean fp16, not fp32 at a sixth of the speed
    asked = {p: predict_job(job_for("qwen2.5-0.5b", method="lora", tokens=2 * 10**6, precision=p),
                            Target("V100", 1)) for p in ("bf16", "fp8")}  # fmt: skip
    assert "fp16" in asked["fp8"].kernel_path
    assert asked["fp8"].seconds == pytest.approx(asked["bf16"].seconds)
    tpu = predict_job(job, Target("tpu-v5litepod-8", 1))
    assert tpu.reason is not None and "NVIDIA GPUs" in tpu.reason
    unknown = predictor_for_job(job)(Target("Z9000", 1))
    assert unknown.reason is not None and "not in the device catalog" in unknown.reason


def test_the_prediction_explains_itself() -> None:
    prediction = predict_job(
        job_for("llama3-8b", method="qlora", tokens=20_000_000), Target("L4", 1)
    )
    text = "\n".join(prediction.steps)
    assert "tokens/s per GPU" in text and "optimizer steps" in text and "peak" in text
    assert prediction.log_sigma >= CALIBRATION.log_sigma["llm"]


def test_the_shipped_llm_fit_beats_its_priors_in_sample() -> None:
    runs = throughput_runs("fit")
    prior = llm_fit.loss(llm_fit.replace(CALIBRATION, **_priors()), runs)
    assert llm_fit.loss(CALIBRATION, runs) < prior
    assert {r.run.source for r in llm_fit.errors(CALIBRATION, runs)} == {
        "llm-foundry-mpt-bench", "nemo-24.07-perf", "answerai-fsdp-qlora-2024-03",
        "torchtune-readme-2024-11-optflags", "qwen1-readme-profiling",
    }  # fmt: skip
    held = throughput_runs("holdout")
    shared = {run.source for run in runs} & {run.source for run in held}
    # a publisher of fitted runs keeps out its largest model (llm-foundry) or its run over
    # several nodes (NeMo's 16 GPUs), never fitted
    assert shared == {"llm-foundry-mpt-bench", "nemo-24.07-perf"}
    kept_out = {(run.source, run.model, run.plan.gpus) for run in held if run.source in shared}
    assert {(source, model) for source, model, _ in kept_out} == {
        ("llm-foundry-mpt-bench", "mpt-30b"), ("nemo-24.07-perf", "llama2-70b")
    }  # fmt: skip
    assert "mpt-30b" not in {run.model for run in runs if run.source in shared}
    assert all(gpus > 8 for source, _, gpus in kept_out if source == "nemo-24.07-perf")


def _priors() -> dict[str, float]:
    return {name: getattr(PRIOR, name) for name in llm.METHODS and llm_fit.LLM_PARAMETERS}


def test_a_probe_of_the_job_on_a_gpu_corrects_every_gpus_time() -> None:
    """A workstation's A6000 ran the job's proxy 1.5x slower per sequence than the device model
    says at the precision it ran (fp32): every GPU's time moves by 1.5x, its spread widens, and
    the A6000's own matches the measurement; a TPU and probes of another job or on a CPU are
    left alone. (The probe is built here: no GPU runs in the test suite.)"""
    import dataclasses

    from advisor.estimate.llm_predict import job_residuals, probe_run_seconds
    from advisor.estimate.parameters import llm_calibration
    from advisor.workloads.llm_job import probe_name
    from probes.result import WorkloadConfig
    from tests.estimate.test_probes import LOCAL_CPU, probe

    job = job_for("qwen2.5-0.5b", method="lora", tokens=4_000_000)
    config = WorkloadConfig(probe_name(job), 200, 0, 1, 4)  # the probe's own sizes
    a6000 = dataclasses.replace(LOCAL_CPU, accelerator="A6000", accelerator_memory_gib=48.0)
    on_gpu = dataclasses.replace(probe("mnist_mlp", 0.1, device=a6000), config=config)
    modelled = probe_run_seconds(on_gpu, llm_calibration())
    assert modelled is not None
    on_gpu = dataclasses.replace(on_gpu, predicted_seconds=1.5 * modelled)
    other_job = dataclasses.replace(
        on_gpu,
        config=dataclasses.replace(
            config, workload=probe_name(job_for("qwen2.5-1.5b", tokens=10**6))
        ),
    )
    on_cpu = dataclasses.replace(on_gpu, device=LOCAL_CPU)
    found = job_residuals(job, [on_gpu, other_job, on_cpu])
    assert set(found) == {"gpu"} and found["gpu"].ratio == pytest.approx(1.5, rel=1e-6)
    assert found["gpu"].devices == ("A6000",)
    plain, fixed = predictor_for_job(job), predictor_for_job(job, residuals=found)
    for target in (Target("H100", 1), Target("A100-80GB", 8), Target("L4", 1)):
        before, after = plain(target), fixed(target)
        assert after.seconds == pytest.approx(1.5 * before.seconds, rel=1e-6)
        assert after.log_sigma >= before.log_sigma
        assert "corrected by the measurement on A6000" in after.steps[-1]
    mine = Target("A6000", 1)  # bf16 there: the measurement's factor, not its fp32 time
    assert fixed(mine).seconds == pytest.approx(1.5 * plain(mine).seconds, rel=1e-6)
    tpu = Target("tpu-v5litepod-8", 1)
    assert fixed(tpu).seconds == pytest.approx(plain(tpu).seconds)


def test_the_gpu_probe_check_compares_the_model_and_its_correction_with_a_real_run(
    tmp_path: object,
) -> None:
    """``benchmarks/gpu/llm_probe_gpu.py --compare`` (run as its user runs it): a probe of its first
    job on an H200 that ran twice the device model's time moves the prediction to half the
    model's rate; the real run is the line of ``llm_gpu_check`` for the same job."""
    import dataclasses
    import json
    import re
    import subprocess
    import sys
    from pathlib import Path

    from advisor.estimate.llm_predict import probe_run_seconds
    from advisor.estimate.parameters import llm_calibration
    from advisor.workloads.llm_job import job_for, probe_name
    from probes import exchange
    from probes.result import WorkloadConfig
    from tests.estimate.test_probes import LOCAL_CPU, probe

    folder = Path(str(tmp_path))
    first = job_for("qwen2.5-0.5b", method="full", examples=64, sequence=2048, packed=False,
                    micro_batch=8, checkpointing=False, fp32_adapters=False)  # fmt: skip
    name = probe_name(first)  # the script's JOBS[0]
    h200 = dataclasses.replace(LOCAL_CPU, accelerator="H200", accelerator_memory_gib=141.0)
    measured = dataclasses.replace(
        probe("mnist_mlp", 0.1, device=h200), config=WorkloadConfig(name, 64, 0, 1, 8)
    )
    modelled = probe_run_seconds(measured, llm_calibration())
    assert modelled is not None
    seconds = 2 * modelled
    measured = dataclasses.replace(
        measured, predicted_seconds=seconds, predicted_interval=(0.9 * seconds, 1.1 * seconds)
    )
    exchange.write_csv(folder / "probes.csv", [measured])
    run = {"model_id": "qwen2.5-0.5b", "method": "full", "sequence_length": 2048,
           "batch_per_gpu": 8, "activation_checkpointing": False}  # fmt: skip
    line = {"run": run, "tokens_per_second_per_gpu": 86724.6}
    (folder / "real.jsonl").write_text(json.dumps(line) + "\n")
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu" / "llm_probe_gpu.py"
    done = subprocess.run(
        [sys.executable, str(script), "--compare", str(folder / "probes.csv"),
         str(folder / "real.jsonl")], capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (said,) = done.stdout.splitlines()
    assert said.startswith(f"{name} on H200: real 86,725 tokens/s"), said
    model, corrected = (
        float(re.search(rf"{words} ([\d,]+)", said).group(1).replace(",", ""))  # type: ignore[union-attr]
        for words in ("the device model", "corrected by the probe")
    )
    assert corrected == pytest.approx(model / 2, rel=0.01)


def test_a_gpu_probe_is_modelled_as_it_ran_under_its_own_framework_without_recompute() -> None:
    """The run a probe made, not the job's: on an H100 (2026-11-26) a Keras probe under JAX ran
    0.5B full fine-tuning's proxy in fp32 at TF32 speed, 3x faster than the strict FP32 that
    PyTorch runs a float32 product as, and a checkpointed job's proxy without recomputing its
    layers (Keras does not), as it steps a QLoRA job's base unquantised; modelled the job's way,
    its residual moved every GPU 2.7-3.3x too fast (docs/BENCHMARKS.md, "The H100 session")."""
    import dataclasses

    from advisor.estimate.llm_predict import probe_run_seconds
    from advisor.estimate.parameters import llm_calibration
    from advisor.workloads.llm_job import probe_name
    from probes.result import WorkloadConfig
    from tests.estimate.test_probes import LOCAL_CPU, probe

    calibration = llm_calibration()
    h100 = dataclasses.replace(LOCAL_CPU, accelerator="H100", accelerator_memory_gib=79.6)

    def probed(job: object, backend: str, precision: str = "fp32") -> float:
        version = {"jax": "0.11.2", "torch": "2.11.0"}[backend]
        device = dataclasses.replace(h100, backend=backend, tensorflow=version, precision=precision)
        config = WorkloadConfig(probe_name(job), 64, 0, 1, 4)  # type: ignore[arg-type]
        result = dataclasses.replace(probe("mnist_mlp", 0.1, device=device), config=config)
        seconds = probe_run_seconds(result, calibration)
        assert seconds is not None
        return seconds

    full = job_for("qwen2.5-1.5b", tokens=10**6, checkpointing=True)
    assert probed(full, "jax") < probed(full, "torch") / 3  # TF32 against strict FP32
    assert probed(full, "jax", "mixed") < probed(full, "jax") / 1.5  # llm_probe_gpu --precision
    unchecked = job_for("qwen2.5-1.5b", tokens=10**6, checkpointing=False)
    assert probed(full, "jax") == pytest.approx(probed(unchecked, "jax"))
    qlora = job_for("qwen2.5-1.5b", method="qlora", tokens=10**6, checkpointing=False)
    lora = job_for("qwen2.5-1.5b", method="lora", tokens=10**6, checkpointing=False)
    assert probed(qlora, "jax") == pytest.approx(probed(lora, "jax"))  # Keras steps no 4-bit base
    checkpointed = predict_job(dataclasses.replace(full, precision="bf16"), Target("H100", 1))
    plain = predict_job(dataclasses.replace(unchecked, precision="bf16"), Target("H100", 1))
    assert checkpointed.seconds > 1.2 * plain.seconds  # the job itself recomputes
    config = WorkloadConfig(probe_name(full), 64, 0, 1, 4)
    on_cpu = dataclasses.replace(probe("mnist_mlp", 0.1, device=LOCAL_CPU), config=config)
    assert probe_run_seconds(on_cpu, calibration) is None  # a CPU probe measures no GPU


def test_a_gpu_probe_that_beats_its_hardware_corrects_no_gpu_past_the_roofline() -> None:
    """An imported probe claiming the job in a thousandth of the device model's time (a broken
    or hostile export) moves every GPU only down to what its datasheet peaks allow."""
    import dataclasses

    from advisor.estimate.llm_predict import job_residuals, probe_run_seconds
    from advisor.estimate.parameters import llm_calibration
    from advisor.workloads.llm_job import probe_name
    from probes.result import WorkloadConfig
    from tests.estimate.test_probes import LOCAL_CPU, probe

    job = job_for("qwen2.5-7b", method="lora", tokens=4_000_000)
    config = WorkloadConfig(probe_name(job), 200, 0, 1, 4)
    a6000 = dataclasses.replace(LOCAL_CPU, accelerator="A6000", accelerator_memory_gib=48.0)
    impossible = dataclasses.replace(probe("mnist_mlp", 0.1, device=a6000), config=config)
    modelled = probe_run_seconds(impossible, llm_calibration())
    assert modelled is not None
    claimed = modelled / 1000
    impossible = dataclasses.replace(
        impossible, predicted_seconds=claimed, predicted_interval=(0.9 * claimed, 1.1 * claimed)
    )
    found = job_residuals(job, [impossible])
    assert found["gpu"].ratio < 0.01
    for target in (Target("H100", 1), Target("A100-80GB", 8)):
        plain = predict_job(job, target)
        fixed = predictor_for_job(job, residuals=found)(target)
        assert 0 < plain.least_seconds < plain.seconds
        assert fixed.seconds == pytest.approx(plain.least_seconds)
        assert "held at the hardware bound" in fixed.steps[-1]


def test_a_compiled_step_runs_its_device_work_faster_and_keeps_less() -> None:
    """``torch.compile`` ran torchtune's Llama 3.2 3B step 1.27x faster and our own Qwen2.5 1.5B
    step on an H100 1.27x faster at 27% less peak memory: the device part of a compiled step is
    the eager one's over ``COMPILED_SPEEDUP`` (the host's dispatch is not), and it peaks at one
    phase, below the eager sum."""
    import dataclasses

    from advisor.estimate.finetune import COMPILED_SPEEDUP, layout, machine_for, step_of
    from advisor.estimate.memory import llm_bytes
    from advisor.estimate.parameters import llm_calibration
    from advisor.workloads.llm_memory import footprint

    calibration = llm_calibration()
    job = job_for("qwen2.5-1.5b", examples=64, sequence=2048, micro_batch=4, checkpointing=True)
    machine = machine_for("H100", 1, calibration, "bf16")
    assert machine is not None
    plan = layout(1, 4, 4, "none")
    eager = step_of(job.tune, plan, machine, calibration)
    tune = dataclasses.replace(job.tune, compiled=True)
    compiled = step_of(tune, plan, machine, calibration)
    assert compiled.device == pytest.approx(eager.device / COMPILED_SPEEDUP)
    assert compiled.host == pytest.approx(eager.host)
    assert compiled.seconds < eager.seconds / 1.15
    peak = {t.compiled: llm_bytes(footprint(t), "none", 1, 4, 2048) for t in (job.tune, tune)}
    assert peak[True] < peak[False]
