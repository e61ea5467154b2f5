"""``advisor recommend`` for an LLM fine-tuning job: its options, their bad values, the ranked
result over the shipped seed prices and the SkyPilot task with the node's plan."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from advisor import service
from advisor.cli import cli
from advisor.errors import AdvisorError
from advisor.workloads.llm_job import Options
from pricing import database
from probes import history
from probes.device import fingerprint
from probes.result import ProbeResult
from probes.spec import ProbeSpec
from tests.bench.test_bench import overhead_hours

JOB = ["--model", "llama3-8b", "--method", "qlora", "--tokens", "20M"]


def stored_llm_probe(model: str, **options: object) -> ProbeResult:
    """A probe of the job's proxy as this machine measured one (a 2-vCPU run's figures), stored
    so that no test here runs TensorFlow."""
    request = service.Request(model=model, finetune=Options(**options))  # type: ignore[arg-type]
    config = service.spec_of(request).config
    result = ProbeResult(
        config=config, device=fingerprint(), step_seconds=526.0, step_interval=(500.0, 550.0),
        validation_step_seconds=0.0, epoch_overhead_seconds=0.0, startup_seconds=2.0,
        predicted_seconds=526.0 * config.samples, predicted_interval=(5e5, 6e6),
        samples_per_second=1 / 526.0, probe_seconds=19.3, flops_per_sample=9.5e13,
        parameters=8_030_261_248, peak_host_bytes=3_000_000_000, dispatch_seconds=0.0004,
        extrapolated=True, extrapolated_from="batches 1, 2 of a proxy: 1 of 32 layers",
        batch_scaling={1: 0.3, 2: 0.5}, created_at="2026-11-25T22:00:00+00:00",
    )  # fmt: skip
    history.save(database.connect(), result)
    return result


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["recommend", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "llama3-8b", "--method", "dora", "--tokens", "1M"], "'--method'"),
        (["--model", "llama3-8b", "--tokens", "0"], "0 is not from 1 to"),
        (["--model", "llama3-8b", "--tokens", "lots"], "is not a count like 20M"),
        (["--model", "llama3-8b", "--tokens", "nan"], "is not a count"),
        (["--model", "llama3-8b", "--tokens", "-5M"], "-5M is not"),
        (["--model", "llama3-8b", "--tokens", "1e40"], "1e40 is not from 1 to 1,000,000,000,000"),
        (["--model", "llama3-8b", "--tokens", "1e30"], "1e30 is not from"),
        (["--model", "llama3-8b", "--tokens", "9" * 40], "too long"),
        (["--model", "llama3-8b", "--examples", "0"], "0 is not from 1 to"),
        (["--model", "llama3-8b", "--tokens", "1M", "--examples", "500"], "give one"),
        (["--model", "llama3-8b", "--tokens", "1M", "--seq-len", "8"], "--seq-len must be"),
        (["--model", "gemma2-9b", "--tokens", "1M", "--seq-len", "16384"], "gemma2-9b's context"),
        (["--model", "llama3-8b", "--tokens", "1M", "--lora-rank", "0"], "'--lora-rank'"),
        (["--model", "llama3-8b", "--tokens", "1M", "--lora-rank", "5000"], "'--lora-rank'"),
        (["--model", "llama3-8b", "--tokens", "1M", "--lora-targets", "mlp"], "'--lora-targets'"),
        (
            ["--model", "llama3-8b", "--method", "full", "--tokens", "1M", "--lora-rank", "8"],
            "apply to --method lora or qlora",
        ),
        (["--model", "llama3-8b"], "--tokens (20M) or --examples"),
        (["--model", "llama3-8b", "--examples", "5000", "--packing"], "packing needs --tokens"),
        (["--model", "llama3-8b", "--tokens", "1M", "--no-packing"], "needs --examples"),
        (["--model", "llama3-8b", "--tokens", "1M", "--samples", "100"], "--samples is for"),
        (["--model", "llama3-8b", "--tokens", "1M", "--precision", "fp4"], "'--precision'"),
        (["--model", "llama3-8b", "--tokens", "1M", "--batch-size", "0"], "'--batch-size'"),
        (["--model", "llama3-8b", "--tokens", "1M", "--epochs", "0"], "'--epochs'"),
        (
            ["--model", "llama3-8b", "--method", "full", "--tokens", "1M", "--fp32-adapters"],
            "--fp32-adapters applies to --method lora or qlora",
        ),
        (["--model", "lstm", "--fp32-adapters"], "--fp32-adapters applies to an LLM"),
        (["--model", "lstm", "--tokens", "1M"], "--tokens applies to an LLM"),
        (["--model", "resnet50", "--method", "lora"], "--method applies to an LLM"),
        (["--model", "llama3-9b", "--tokens", "1M"], "did you mean"),
        (["--model", "qwen2.5-7", "--deadline", "1h"], "did you mean"),
    ],
)
def test_bad_llm_options_are_one_line_exit_2(args: list[str], says: str) -> None:
    code, out, err = invoke(*args)
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error:"), err
    assert says in lines[0]


def test_an_8b_qlora_job_is_ranked_over_the_seed_prices() -> None:
    stored_llm_probe("llama3-8b", method="qlora", tokens=20_000_000)
    stored_llm_probe("llama3-8b", tokens=20_000_000)
    code, out, err = invoke(*JOB, "--deadline", "6h", "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["workload"] == "llama3.1-8b-qlora"
    options = payload["options"]
    assert options and all(o["accelerator"] for o in options)
    assert options[0]["meets_deadline"]
    assert "4-bit QLoRA (bitsandbytes) runs on NVIDIA GPUs" in " ".join(payload["excluded"])
    code, out, err = invoke("--model", "llama3-8b", "--tokens", "20M", "--json")
    assert code == 0, err
    assert "on CPUs by the device model" in " ".join(json.loads(out)["excluded"])


def test_a_70b_full_fine_tune_emits_an_8_gpu_node(tmp_path: Path) -> None:
    stored_llm_probe("llama3.1-70b", method="full", tokens=20_000_000)
    task = tmp_path / "task.yaml"
    code, _, err = invoke(
        "--model", "llama3.1-70b", "--method", "full", "--tokens", "20M", "--deadline", "2d",
        "--emit", "skypilot", str(task),
    )  # fmt: skip
    assert code == 0, err
    body = yaml.safe_load(task.read_text())
    assert body["resources"]["accelerators"].endswith(":8")
    assert body["envs"]["ADVISOR_GPUS"] == "8" and body["envs"]["ADVISOR_SHARDING"] == "fsdp"
    assert body["envs"]["ADVISOR_METHOD"] == "full"
    assert body["run"].startswith("accelerate launch --num_processes 8 train.py")
    assert body["envs"]["ADVISOR_STACK"] == "hf" and body["envs"]["ADVISOR_COMPILE"] == "0"
    assert "FSDP" in task.read_text().splitlines()[1]


def test_a_70b_full_fine_tune_on_nemo_over_nodes_emits_its_tensor_and_pipeline_split(
    tmp_path: Path,
) -> None:
    """The fastest plan within the budget is a cluster: the answer says the split, the task has
    its nodes, the split in its variables and NeMo's launch line passing it on."""
    stored_llm_probe("llama3.1-70b", method="full", tokens=20_000_000, stack="nemo")
    task = tmp_path / "task.yaml"
    code, out, err = invoke(
        "--model", "llama3.1-70b", "--method", "full", "--tokens", "20M", "--stack", "nemo",
        "--accelerator", "H100", "--objective", "fastest", "--budget", "2000",
        "--emit", "skypilot", str(task),
    )  # fmt: skip
    assert code == 0, err
    body = yaml.safe_load(task.read_text())
    envs = body["envs"]
    assert body["num_nodes"] > 1
    assert int(envs["ADVISOR_GPUS"]) == 8 * body["num_nodes"]
    tensor, pipeline = int(envs["ADVISOR_TENSOR_PARALLEL"]), int(envs["ADVISOR_PIPELINE_PARALLEL"])
    assert tensor * pipeline > 1 and int(envs["ADVISOR_GPUS"]) % (tensor * pipeline) == 0
    assert "model.tensor_model_parallel_size=$ADVISOR_TENSOR_PARALLEL" in body["run"]
    assert f"tensor {tensor} x pipeline {pipeline}" in task.read_text().splitlines()[1]
    plan = next(line for line in out.splitlines() if line.startswith("Plan:"))
    assert f"tensor {tensor} x pipeline {pipeline} x data " in plan
    code, out, err = invoke(
        "--model", "llama3.1-70b", "--method", "full", "--tokens", "20M", "--stack", "nemo",
        "--accelerator", "H100", "--objective", "fastest", "--budget", "2000", "--json",
    )  # fmt: skip
    assert code == 0, err
    best = json.loads(out)["options"][0]
    layout = best["layout"]
    assert layout["gpus"] == 8 * best["nodes"] and layout["sharding"] == "zero1"
    assert (layout["tensor_parallel"], layout["pipeline_parallel"]) == (tensor, pipeline)
    # a pipeline has at least as many micro-batches a step as stages, or stages stand idle
    assert layout["accumulation"] >= pipeline


def test_the_explanation_walks_through_the_step() -> None:
    stored_llm_probe("llama3-8b", method="qlora", tokens=20_000_000)
    code, out, err = invoke(*JOB, "--deadline", "6h", "--explain", "--top", "1")
    assert code == 0, err
    assert "tokens/s per GPU" in out and "optimizer steps" in out and "peak" in out
    assert "the host's dispatch measured here" in out and "Device scaling (the device model)" in out


def test_a_proxy_that_cannot_be_probed_here_leaves_the_device_model_alone() -> None:
    """What the probe gives an LLM's GPU prediction is the host's dispatch: when the proxy
    cannot run here (too big for this machine's memory), the job is ranked without it, and
    that is stored with its reason: the next call does not spend the same seconds to fail
    again, ``fresh`` tries again, and a probe that then succeeds replaces the fallback."""
    tried: list[str] = []

    def runner(spec: ProbeSpec) -> ProbeResult:
        tried.append(spec.label)
        raise AdvisorError("the proxy does not fit in memory: needs about 15 GiB, 12 available")

    request = service.Request(
        model="llama3.1-70b", finetune=Options(method="full", tokens=20_000_000)
    )
    rec = service.recommend(request, runner=runner)
    assert rec.options and any("could not be probed here" in line for line in rec.context)
    assert (
        history.find(database.connect(), service.spec_of(request).config, fingerprint().key) is None
    )
    again = service.recommend(request, runner=runner)  # the stored fallback: no second try
    assert len(tried) == 1 and again.options
    said = next(line for line in again.context if "could not be probed here" in line)
    assert "needs about 15 GiB" in said and "--fresh tries again" in said
    service.recommend(request, runner=runner, fresh=True)
    assert len(tried) == 2
    stored = stored_llm_probe("llama3.1-70b", method="full", tokens=20_000_000)
    assert service.stored_fallback(request) is None  # a probe stored later replaces it
    assert service.stored_probe(request) == stored


def test_a_proxy_probe_that_cannot_be_stored_is_stored_as_a_fallback() -> None:
    """A probe whose result is refused by the store (insane figures) is a fallback too."""
    options = Options(method="qlora", tokens=20_000_000)
    request = service.Request(model="llama3.1-70b", finetune=options)
    probed = stored_llm_probe("llama3.1-70b", method="qlora", tokens=20_000_000)
    database.connect().execute("DELETE FROM probe_results")

    def runner(spec: ProbeSpec) -> ProbeResult:
        return dataclasses.replace(probed, step_interval=(1.0, math.inf))

    rec = service.recommend(request, runner=runner)
    assert rec.options and service.stored_probe(request) is None
    fallback = service.stored_fallback(request)
    assert fallback is not None and "step_interval" in fallback.reason


def test_a_fallback_is_stored_only_for_an_llm_job(tmp_path: Path) -> None:
    """A zoo workload that cannot be probed is an error, as before: nothing to rank without it,
    nothing stored."""

    def runner(spec: ProbeSpec) -> ProbeResult:
        raise AdvisorError("mnist_mlp does not fit in memory")

    request = service.Request(model="mnist_mlp")
    with pytest.raises(AdvisorError, match="does not fit"):
        service.recommend(request, runner=runner)
    assert service.stored_fallback(request) is None


def test_the_probe_spec_of_an_llm_job_is_its_proxy() -> None:
    request = service.Request(model="qwen2.5-0.5b", finetune=Options(tokens=1_000_000))
    spec = service.spec_of(request)
    assert spec.config.workload == "llm:qwen2.5-0.5b:lora:r16-all:2048"
    assert spec.config.samples == -(-1_000_000 // 2048) and spec.workload is not None
    assert spec.workload.adapters is not None and spec.workload.transformer is not None


def test_a_gpu_probe_of_the_job_imported_from_a_workstation_corrects_the_gpu_times() -> None:
    """A probe of the same job taken on an A6000 (stored as ``advisor import`` stores it: a
    device of its own) that ran 2x slower than the device model moves every GPU option's
    training time by 2x and says so; nothing here runs TensorFlow or a GPU."""
    import dataclasses

    from advisor.estimate.llm_predict import probe_run_seconds, startup_seconds
    from advisor.estimate.parameters import llm_calibration
    from advisor.workloads.llm_job import job_of_probe

    job_args = ["--model", "qwen2.5-0.5b", "--method", "lora", "--tokens", "4M", "--top", "500"]
    job_args += ["--json"]
    local = stored_llm_probe("qwen2.5-0.5b", method="lora", tokens=4_000_000)
    code, out, err = invoke(*job_args)
    assert code == 0, err
    before = {_key(o): o["training_hours"] - overhead_hours(o) for o in json.loads(out)["options"]}
    config = local.config  # the proxy's sizes, as the probe ran them
    probed = job_of_probe(config.workload, config.samples, config.epochs, config.batch_size)
    workstation = dataclasses.replace(
        local.device, accelerator="A6000", accelerator_memory_gib=48.0, cpu_model="AMD Ryzen 9"
    )
    on_gpu = dataclasses.replace(local, device=workstation)
    modelled = probe_run_seconds(on_gpu, llm_calibration())  # the run the probe made there
    assert modelled is not None
    history.save(
        database.connect(),
        dataclasses.replace(
            on_gpu,
            predicted_seconds=2 * modelled,
            predicted_interval=(1.8 * modelled, 2.2 * modelled),
        ),
    )
    code, out, err = invoke(*job_args)
    assert code == 0, err
    after = {_key(o): o["training_hours"] - overhead_hours(o) for o in json.loads(out)["options"]}
    shared = [key for key in after if key in before]
    gpus = [k for k in shared if not str(k[2]).startswith("tpu") and k[3] == "on_demand"]
    tpus = [key for key in shared if str(key[2]).startswith("tpu")]
    assert len(gpus) > 10 and tpus  # a TPU is another kind: no GPU measurement moves it
    start = startup_seconds(probed) / 3600  # in each option's hours, not corrected (spot
    # options add checkpoints that grow with the time: on-demand ones only)
    doubled = pytest.approx  # hours are rounded to 4 decimals: 0.36 s
    assert all(
        after[k] - start == doubled(2 * (before[k] - start), rel=0.01, abs=2e-4) for k in gpus
    )
    assert all(after[k] == pytest.approx(before[k], rel=0.02) for k in tpus)
    code, out, err = invoke(*job_args[:-1], "--explain", "--top", "1")
    assert code == 0, err
    assert "corrected by the measurement on A6000" in out


def _key(option: dict[str, object]) -> tuple[object, ...]:
    return (option["provider"], option["region"], option["instance_type"], option["pricing"])


def test_a_job_no_matching_offering_can_run_says_so_not_that_nothing_matched() -> None:
    """An LLM job on CPUs only: every offering matches the filter and none can run it. The
    answer says that (not "No offering matches these filters."), and --explain says why for
    each."""
    stored_llm_probe("llama3-8b", tokens=20_000_000)
    code, out, err = invoke("--model", "llama3-8b", "--tokens", "20M", "--cpu-only")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("None of the ") and "matching offerings can run this job" in first
    code, out, err = invoke("--model", "llama3-8b", "--tokens", "20M", "--cpu-only", "--explain")
    assert code == 0, err
    assert out.count("Left out: ") > 1 and "LLM fine-tuning is planned on GPUs and TPUs" in out


def test_the_answer_says_the_plan_and_warns_of_what_runs_other_than_asked() -> None:
    """The precision, optimizer and layout are said in the answer, and a precision the machine
    lacks or a smaller recipe is a note, not a silence (before: in --explain and the YAML only)."""
    stored_llm_probe("llama3.1-70b", method="full", tokens=20_000_000)
    code, out, err = invoke(
        "--model", "llama3.1-70b", "--method", "full", "--tokens", "20M", "--deadline", "2d",
        "--accelerator", "A100", "--precision", "fp8",
    )  # fmt: skip
    assert code == 0, err
    plan = next(line for line in out.splitlines() if line.startswith("Plan: "))
    assert "full fine-tuning, bf16, " in plan and " GPUs, FSDP, micro-batch " in plan
    note = next(line for line in out.splitlines() if line.startswith("Note: "))
    assert note.startswith("Note: fp8 asked: no fp8 units on A100, bf16 runs")
    code, out, err = invoke(
        "--model", "llama3.1-70b", "--method", "full", "--tokens", "20M", "--deadline", "2d",
        "--accelerator", "H100", "--precision", "fp8", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert "Note: " not in out  # fp8 runs as asked on H100s


def test_a_zoo_job_warns_of_a_precision_its_machine_lacks() -> None:
    code, out, err = invoke("--model", "mlp", "--deadline", "8h", "--precision", "fp8",
                            "--accelerator", "T4")  # fmt: skip
    assert code == 0, err
    assert "Note: fp8 asked: no fp8 units on T4, fp32 runs." in out
