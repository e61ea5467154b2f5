"""``advisor probe``, ``advisor models`` and ``advisor import`` through the real command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from advisor.store import connect
from probes import history

TINY = ["--model", "mlp", "--samples", "1024", "--validation-samples", "256", "--epochs", "2",
        "--batch-size", "64", "--budget", "4"]  # fmt: skip
KEYS = {"workload", "device", "samples", "epochs", "batch_size", "predicted_seconds",
        "predicted_interval", "startup_seconds", "step_seconds", "samples_per_second",
        "probe_seconds"}  # fmt: skip


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_models_lists_the_zoo_and_the_llms_with_their_methods() -> None:
    code, out, _ = invoke("models", "--json")
    everything = json.loads(out)
    rows = [r for r in everything if r["family"] != "llm"]
    assert code == 0 and len(rows) == 19
    llms = {r["id"]: r for r in everything if r["family"] == "llm"}
    assert {"llama3.1-8b", "llama3.1-70b", "qwen2.5-7b", "mistral-7b", "gemma2-9b"} <= set(llms)
    assert llms["llama3.1-8b"]["methods"] == "full, lora, qlora"
    assert llms["llama3.1-8b"]["parameters"] == 8_030_261_248
    assert "llama3-8b" in llms["llama3.1-8b"]["aliases"]
    code, table, _ = invoke("models")
    assert code == 0 and "LLMs to fine-tune" in table and "qwen2.5-0.5b" in table
    lstm = next(r for r in rows if r["id"] == "imdb_bilstm")
    assert lstm["parameters"] == 2_658_945 and "lstm" in lstm["aliases"]
    gpt2 = next(r for r in rows if r["id"] == "gpt2_large")
    assert gpt2["family"] == "transformer" and gpt2["optimizer"] == "adamw"
    assert {"bert_base", "bert_large", "gpt2_small", "gpt2_medium", "vit_b16"} <= {
        r["id"] for r in rows
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "resnet5"], "did you mean"),
        (["--model", "mlp", "--epochs", "0"], "'--epochs': 0 must be >= 1"),
        (
            ["--model", "nowhere/model.keras", "--samples", "5", "--epochs", "1"],
            "no such model file",
        ),
        (["--model", "mlp", "--budget", "-1"], "'--budget': -1 must be > 0"),
        (["--model", "llama3.1-8b"], "is an LLM: 'advisor recommend --model llama3.1-8b"),
        (["--model", "mlp", "--data-parallel"], "runs on JAX only: add --backend jax"),
        (["--model", "mlp", "--nodes", "2"], "--coordinator must be HOST:PORT"),
        (["--model", "mlp", "--node-rank", "1"], "go with --nodes above 1"),
        (["--model", "mlp", "--coordinator", "h:1"], "go with --nodes above 1"),
        (
            ["--model", "mlp", "--nodes", "2", "--node-rank", "2", "--coordinator", "h:1"],
            "--node-rank must be 0-1, got 2",
        ),
        (
            ["--model", "mlp", "--nodes", "2", "--coordinator", "h:1; rm -rf ~"],
            "--coordinator must be HOST:PORT",
        ),
        (["--model", "mlp", "--nodes", "2000"], "'--nodes': 2000 must be <= 1,024"),
        (["--data-parallel", "--", "python", "t.py"], "--data-parallel and --nodes probe zoo"),
        (
            ["--model", "mlp", "--data-parallel", "--thread-scaling"],
            "--thread-scaling measures one device's threads",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KERAS_BACKEND", raising=False)  # the default backend, TensorFlow
    code, _, err = invoke("probe", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.tf
def test_probe_json_store_reuse_export_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "probe.csv"
    code, out, err = invoke("probe", *TINY, "--json", "--export", str(export))
    assert code == 0, err
    first = json.loads(out)
    assert set(first) >= KEYS and first["cached"] is False and first["workload"] == "mnist_mlp"
    low, high = first["predicted_interval"]
    assert low <= first["predicted_seconds"] <= high

    code, out, _ = invoke("probe", *TINY, "--json")
    again = json.loads(out)
    assert again["cached"] is True and again["predicted_seconds"] == first["predicted_seconds"]

    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "elsewhere"))
    code, out, _ = invoke("import", str(export))
    assert code == 0 and "imported 1" in out
    (imported,) = history.latest(connect(), "mnist_mlp")
    assert imported.predicted_seconds == pytest.approx(first["predicted_seconds"], abs=1e-3)
    code, out, _ = invoke("probe", *TINY, "--json")
    assert json.loads(out)["cached"] is True  # the imported result is this machine's


@pytest.mark.tf
def test_ctrl_c_exits_130_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    env = {**os.environ, "ADVISOR_HOME": str(home), "TF_CPP_MIN_LOG_LEVEL": "3"}
    args = [sys.executable, "-m", "advisor", "probe", "--model", "mlp", "--budget", "30", "--fresh"]
    process = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    time.sleep(6)  # past TensorFlow's import, into the steps
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "cancelled" in err
    assert history.latest(connect(), "mnist_mlp") == []
