"""The software an LLM is fine-tuned with (``advisor.workloads.stacks``): its recipe, what it
runs on, how it is checked against published runs, and what the answer says of it."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from advisor.errors import UsageError
from advisor.estimate import memory
from advisor.estimate.finetune import layout, machine_for, step_of
from advisor.estimate.llm_predict import predict_job
from advisor.estimate.machine import FA2_SHARE
from advisor.estimate.parameters import llm_calibration
from advisor.estimate.prediction import Target
from advisor.fitting.llm_published import memory_runs, read_published
from advisor.workloads import stacks
from advisor.workloads.llm import METHODS, FineTune
from advisor.workloads.llm_job import job_for
from advisor.workloads.llm_memory import footprint, layer_kept_bytes, logit_memory_bytes
from tests.recommend.test_llm_cli import invoke, stored_llm_probe

SAFE_LAUNCH = re.compile(r"[A-Za-z0-9_ ./={}$()*:-]+")
"""What a launch line may hold: it is written into a SkyPilot task's ``run``, a shell script."""


def test_every_stack_of_the_table_is_whole_and_its_launch_lines_are_plain() -> None:
    table = stacks.stacks()
    assert {"hf", "torchtune", "torchtitan", "nemo", "automodel", "unsloth", "llm-foundry"} <= set(
        table
    )
    for stack in table.values():
        assert set(stack.methods) <= set(METHODS) and stack.methods, stack.id
        assert stack.loss in stacks.LOSSES and set(stack.runs_on) <= {"gpu", "tpu"}, stack.id
        assert stack.nearest in ("", *table) and stack.nearest != stack.id, stack.id
        assert stack.master in ("fp32", "bf16") and 1.0 <= stack.speed < 2.0, stack.id
        assert stack.attention in ("native", "fa2") and stack.kept in ("eager", "te"), stack.id
        assert isinstance(stack.loss_in_forward, bool), stack.id
        for line in (stack.launch_line(8, "lora"), stack.launch_line(8, "full", nodes=4)):
            assert "\n" not in line and SAFE_LAUNCH.fullmatch(line), (stack.id, line)
            assert "{" not in line and "}" not in line.replace("${", ""), line
        assert "$SKYPILOT_NUM_NODES" in stack.launch_nodes, stack.id
        assert "$MASTER_ADDR" in stack.launch_nodes, stack.id
    assert stacks.DEFAULT == "hf"


def test_a_flag_of_the_table_is_yes_or_no_nothing_read_as_no() -> None:
    """The reader takes a misspelt flag for a fault of the shipped table, not for a no."""
    assert stacks._flag(" yes") and not stacks._flag("no")
    for word in ("Yes", "true", "", "y"):
        with pytest.raises(ValueError, match="not yes or no"):
            stacks._flag(word)


def test_a_compiled_model_that_computes_its_own_loss_keeps_three_16_bit_copies_of_a_logit() -> None:
    """Hugging Face's model computes its loss in its forward, so ``model.compile()`` compiles
    the loss with it: AOTAutograd keeps the bf16 logits for the backward pass and makes a zero
    gradient for the logits the forward also returns, 6 bytes a logit with their gradient
    (traced by ``benchmarks/research/compiled_loss_memory.py``), where eager PyTorch keeps 10
    and a loss compiled apart from the model (torchtune's, AutoModel's) keeps the eager count.
    Our compiled H100 run of Qwen2.5 1.5B (17.10 GiB allocated) is within 15% of it; counted
    at 10 bytes a logit it was 24.6% over."""
    job = job_for("qwen2.5-1.5b", tokens=1_000_000, stack="hf", method="full").tune
    assert logit_memory_bytes(job) == 10
    assert logit_memory_bytes(replace(job, compiled=True)) == 6
    for apart in ("torchtune", "automodel", "torchtitan"):
        assert logit_memory_bytes(replace(job, compiled=True, stack=apart)) == 10, apart
    run = next(r for r in memory_runs("holdout") if r.source.startswith("advisor-gpu-check")
               and r.tune.compiled)  # fmt: skip
    assert run.tune.stack == "hf" and run.memory_statistic == "allocated"

    def counted(tune: FineTune) -> float:
        plan = run.plan
        peak = memory.llm_bytes(
            footprint(tune), plan.sharding, plan.gpus, plan.micro_batch, tune.shape.sequence
        )
        return peak / 2**30 / run.memory_gib - 1

    assert abs(counted(run.tune)) < 0.15
    assert counted(replace(run.tune, stack="automodel")) > 0.20  # the loss apart: 10 bytes


def test_a_stack_without_published_runs_names_the_one_that_stands_for_it() -> None:
    fitted = llm_calibration().stack_runs
    assert fitted["hf"] >= 30 and fitted["torchtune"] >= 5 and fitted["nemo"] >= 5
    for name, runs in fitted.items():
        if not runs:
            nearest = stacks.get(name).nearest
            assert nearest and fitted[nearest] > 0, name


def test_the_stack_runs_its_recipe_unless_the_user_said_otherwise() -> None:
    tuned = job_for("llama3-8b", tokens=1_000_000, stack="torchtune").tune
    assert tuned.stack == "torchtune" and tuned.compiled and tuned.chunked_loss
    assert tuned.master == "bf16" and tuned.checkpointing
    plain = job_for("llama3-8b", tokens=1_000_000).tune
    assert plain.stack == "hf" and not plain.compiled and not plain.chunked_loss
    assert plain.checkpointing and plain.master == "fp32"
    nemo = job_for("llama3-8b", method="full", tokens=1_000_000, stack="nemo").tune
    assert not nemo.checkpointing  # Megatron-Bridge's performance recipes recompute nothing
    said = job_for("llama3-8b", tokens=1_000_000, stack="nemo", checkpointing=True).tune
    assert said.checkpointing
    assert job_for("llama3-8b", tokens=1_000_000, stack="Axolotl").tune.stack == "hf"


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"stack": "deepspeed-chat"}, "unknown stack 'deepspeed-chat'; choose one of hf, "),
        ({"stack": "torchtun"}, "did you mean 'torchtune'"),
        ({"stack": "x" * 10_000}, "(10,000 characters)"),
        ({"stack": ""}, "unknown stack ''"),  # said, not taken as the default
        ({"stack": "  "}, "unknown stack '  '"),
        ({"stack": "torchtitan"}, "does not fine-tune with lora: it runs full"),
        ({"stack": "nemo", "method": "qlora"}, "does not fine-tune with qlora"),
        ({"stack": "unsloth", "precision": "fp8"}, "does not train in FP8"),
    ],
)
def test_a_stack_that_cannot_run_the_job_is_one_usage_line(kwargs: dict, says: str) -> None:
    with pytest.raises(UsageError) as caught:
        job_for("llama3-8b", tokens=1_000_000, **kwargs)
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert len(str(caught.value)) < 300


def test_compiled_and_fused_stacks_are_faster_and_the_step_stays_under_the_hardware() -> None:
    target = Target("H100", 8)
    seconds = {}
    for name in ("hf", "torchtune", "nemo", "unsloth", "llm-foundry"):
        method = "full" if name == "llm-foundry" else "lora"
        job = job_for("llama3-8b", method=method, tokens=50_000_000, stack=name)
        found = predict_job(job, target)
        assert found.fits and math.isfinite(found.seconds) and found.seconds >= found.least_seconds
        seconds[name] = found.seconds
    assert seconds["torchtune"] < seconds["hf"] / 1.15  # torch.compile, chunked loss
    assert seconds["unsloth"] < seconds["hf"] / 1.2  # its kernels (a paired comparison)
    assert seconds["nemo"] < seconds["hf"]  # no recompute


def test_flash_attention_2_falls_behind_only_on_the_gpus_newer_than_it() -> None:
    """FlashAttention-2 issues Ampere's instructions: on an A100 it is attention's kernel, on an
    H100 about half the rate of the kernels written for Hopper (``machine.FA2_SHARE``). A long
    sequence, where attention is a large part of the step, shows it; the step never gets more
    than that share slower."""
    calibration = llm_calibration()
    job = job_for("llama3-8b", method="full", tokens=1_000_000, sequence=16384, stack="llm-foundry")
    assert job.tune.attention == "fa2"
    native = replace(job.tune, attention="native")
    plan = layout(8, 1, 8, "full")
    seconds = {}
    for device in ("A100-80GB", "H100"):
        machine = machine_for(device, 8, calibration, "bf16")
        assert machine is not None
        seconds[device] = [
            step_of(t, plan, machine, calibration).seconds for t in (job.tune, native)
        ]
    assert seconds["A100-80GB"][0] == seconds["A100-80GB"][1]
    slower = seconds["H100"][0] / seconds["H100"][1]
    assert 1.05 < slower < 1 / FA2_SHARE
    assert job_for("llama3-8b", tokens=1_000_000, stack="nemo").tune.attention == "native"
    nemo = job_for("llama3-8b", tokens=1_000_000, stack="nemo").tune
    hf = job_for("llama3-8b", tokens=1_000_000, stack="hf").tune
    assert layer_kept_bytes(nemo) == layer_kept_bytes(hf) - 2 * nemo.shape.ffn  # the fused SwiGLU


def test_unsloths_speed_is_the_paired_comparison_it_is_sourced_from() -> None:
    """LLaMA-Factory's benchmark ran Unsloth and Hugging Face with FlashAttention-2 on the same
    A100, model and configuration: 4,007 against 2,954 tokens/s a GPU. The model's two rows,
    each as it ran, keep that ratio (``data/llm-stacks.csv``'s speed is its source)."""
    rows = {run.line: run for run in read_published() if run.source.startswith("llamafactory")}
    hf, unsloth = rows[208], rows[209]
    assert (hf.tune.stack, unsloth.tune.stack) == ("hf", "unsloth")
    calibration = llm_calibration()
    rates = []
    for run in (hf, unsloth):
        machine = machine_for(run.device, 1, calibration, run.precision)
        assert machine is not None
        rates.append(step_of(run.tune, run.plan, machine, calibration).tokens_per_second_per_gpu)
    published = unsloth.tokens_per_second / hf.tokens_per_second
    assert published == pytest.approx(4007 / 2954)
    assert rates[1] / rates[0] == pytest.approx(published, rel=0.05)


def test_a_stack_runs_where_it_runs_and_an_unchecked_one_says_so() -> None:
    job = job_for("llama3-8b", method="full", tokens=20_000_000, stack="torchtune")
    tpu = predict_job(job, Target("tpu-v6e-8", 1))
    assert not math.isfinite(tpu.seconds) and "torchtune" in str(tpu.reason)
    hf = predict_job(replace(job, tune=replace(job.tune, stack="hf")), Target("tpu-v6e-8", 1))
    assert math.isfinite(hf.seconds)
    checked = predict_job(job, Target("H100", 8))
    titan = predict_job(
        job_for("llama3-8b", method="full", tokens=20_000_000, stack="torchtitan"),
        Target("H100", 8),
    )
    assert titan.extrapolated and not checked.extrapolated
    assert titan.log_sigma > checked.log_sigma
    assert any("no published run of it: checked as torchtune" in s for s in titan.steps)


def test_the_explanation_says_what_every_other_stack_would_change() -> None:
    found = predict_job(job_for("llama3-8b", tokens=20_000_000), Target("H100", 1))
    assert found.compared is not None
    said = "\n".join((*found.steps, *found.compared()))
    assert "stack: Hugging Face" in said and "the LLM fit read" in said
    others = re.findall(r"  with ([a-z-]+): (.*)", said)
    assert {name for name, _ in others} == {
        "torchtune",
        "nemo",
        "automodel",
        "unsloth",
        "llm-foundry",
    }
    assert all(re.match(r"(\d[\d.]*x (faster|slower)|about as fast)", text) for _, text in others)
    torchtune = dict(others)["torchtune"]
    assert "faster" in torchtune and "GiB less a GPU" in torchtune  # compiled, chunked loss


def test_the_command_line_plans_says_and_launches_the_stack(tmp_path: Path) -> None:
    stored_llm_probe("llama3-8b", tokens=20_000_000, stack="torchtune")
    code, out, err = invoke(
        "--model", "llama3-8b", "--tokens", "20M", "--stack", "torchtune", "--deadline", "6h"
    )  # fmt: skip
    assert code == 0, err
    assert (
        "Plan: torchtune (compiled recipes) (--stack torchtune), LoRA rank 16, bf16, AdamW; " in out
    )
    code, out, err = invoke(
        "--model", "llama3-8b", "--tokens", "20M", "--stack", "torchtune", "--json"
    )  # fmt: skip
    assert code == 0, err
    assert {o["stack"] for o in json.loads(out)["options"]} == {"torchtune"}
    task = tmp_path / "task.yaml"
    code, _, err = invoke(
        "--model", "llama3-8b", "--tokens", "20M", "--stack", "torchtune", "--deadline", "6h",
        "--emit", "skypilot", str(task),
    )  # fmt: skip
    assert code == 0, err
    body = yaml.safe_load(task.read_text())
    gpus = body["envs"]["ADVISOR_GPUS"]
    assert body["run"].startswith(f"tune run --nproc_per_node {gpus} lora_finetune_distributed ")
    assert body["envs"]["ADVISOR_STACK"] == "torchtune" and body["envs"]["ADVISOR_COMPILE"] == "1"


@pytest.mark.parametrize(
    ("stack", "says"),
    [("bogus", "unknown stack 'bogus'"), ("\x1b[2Jtorchtune", "unknown stack '\\x1b[2Jtorchtune'")],
)
def test_a_bad_stack_on_the_command_line_is_one_line_exit_2(stack: str, says: str) -> None:
    code, out, err = invoke("--model", "llama3-8b", "--tokens", "20M", "--stack", stack)
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error:") and says in lines[0], err


def test_an_fp8_job_is_compared_only_with_stacks_that_train_in_fp8() -> None:
    job = job_for("llama3-8b", tokens=20_000_000, stack="nemo", precision="fp8")
    compared = predict_job(job, Target("H100", 8)).compared
    assert compared is not None
    said = "\n".join(compared())
    compared = set(re.findall(r"  with ([a-z-]+): ", said))
    assert compared == {s.id for s in stacks.stacks().values() if s.fp8 and "lora" in s.methods} - {
        "nemo"
    }
    assert "unsloth" not in compared and "torchtune" not in compared


@pytest.mark.parametrize("name", sorted(stacks.stacks()))
def test_no_stack_beats_the_hardware_and_more_gpus_are_never_slower(name: str) -> None:
    """Each stack's recipe and speed (Unsloth's 1.36, torch.compile's 1.27) stay under the
    datasheet: no step runs its products faster than the unit's peak, and a node of 8 GPUs
    never takes longer than one where both hold the job."""
    software = stacks.get(name)
    method = "lora" if "lora" in software.methods else "full"
    calibration = llm_calibration()
    for device in ("H100", "A100-80GB", "L4"):
        job = job_for("llama3-8b", method=method, tokens=50_000_000, stack=name)
        one, eight = predict_job(job, Target(device, 1)), predict_job(job, Target(device, 8))
        if one.fits and eight.fits and math.isfinite(one.seconds):
            assert eight.seconds <= one.seconds, device
        machine = machine_for(device, 1, calibration, "bf16")
        assert machine is not None
        step = step_of(job.tune, layout(1, 1, 16, "none"), machine, calibration)
        assert step.flops_per_gpu <= machine.peaks.matmul_flops, device
