"""Values from outside the program on the command line and in the environment: a Keras backend
only the commands that probe read, values of any length cut on the error line, a config nested
thousands deep named, a file name holding an escape reported as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor import locations
from advisor.cli import cli
from tests.inputs import result_csv
from tests.recommend.test_service import stored_mlp_probe

LONG = "x" * 100_000


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("locate",),
        ("models", "--json"),
        ("prices", "list", "--limit", "1", "--json"),
        ("prices", "--json"),
    ],
)
def test_commands_without_a_backend_never_read_keras_backend(args: tuple[str, ...]) -> None:
    code, out, err = invoke(*args, env={"KERAS_BACKEND": "garbage"})
    assert code == 0 and out
    # nothing said of a backend; the shipped prices' own warning (stale until a refresh) aside
    assert [line for line in err.splitlines() if "seed/all prices are stale" not in line] == []


def test_a_recommendation_from_a_stored_probe_works_with_a_bad_keras_backend() -> None:
    stored_mlp_probe()
    code, out, err = invoke("recommend", "--model", "mlp", "--json", env={"KERAS_BACKEND": "jaxx"})
    assert code == 0 and '"workload": "mnist_mlp"' in out
    (warning,) = err.splitlines()
    assert warning.startswith("advisor: warning: unknown Keras backend 'jaxx' in KERAS_BACKEND")


def test_a_probe_refuses_a_bad_keras_backend_before_it_starts() -> None:
    code, _, err = invoke("probe", "--model", "mlp", "--fresh", env={"KERAS_BACKEND": "garbage"})
    assert code == 2
    assert err == (
        "advisor: error: unknown Keras backend 'garbage' in KERAS_BACKEND (expected one of "
        "tensorflow, jax, torch)\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("recommend", "--model", LONG),
        ("probe", "--model", LONG),
        ("recommend", "--model", "mlp", "--accelerator", LONG),
        ("prices", "list", "--provider", LONG),
        ("prices", "list", "--region", LONG),
        ("prices", "show", LONG),
        ("recommend", "--model", "mlp", "--deadline", LONG),
        ("bench", "--model", "mlp", "--cpus", "9" * 100_000, "--dry-run"),
        ("bench", "--model", "mlp", "--gpus", LONG + ":2", "--dry-run"),
    ],
)
def test_a_value_of_100000_characters_is_cut_on_its_error_line(args: tuple[str, ...]) -> None:
    stored_mlp_probe()
    code, _, err = invoke(*args)
    assert code == 2 and "Traceback" not in err
    (line,) = err.splitlines()
    assert line.startswith("advisor: error: ") and len(line) < 600, line[:300]


def test_a_config_value_of_900_kb_is_cut() -> None:
    path = locations.config_path()
    path.parent.mkdir(parents=True)
    path.write_text(f'[prices]\nttl_days = "{"7" * 900_000}"\n')
    code, _, err = invoke("prices")
    assert code == 1
    (line,) = err.splitlines()
    assert "prices.ttl_days must be a finite positive number, not '777" in line
    assert "(900,000 characters)" in line and len(line) < 600


def test_a_config_nested_5000_deep_is_named() -> None:
    path = locations.config_path()
    path.parent.mkdir(parents=True)
    path.write_text("a = " + "[" * 5_000 + "]" * 5_000 + "\n")
    code, _, err = invoke("prices")
    assert code == 1
    assert err == f"advisor: error: cannot read {path}: nested too deeply to read\n"


def test_an_emitted_file_name_with_an_escape_is_reported_as_written(tmp_path: Path) -> None:
    stored_mlp_probe()
    name = tmp_path / "t\x1b[31mred\x07.yaml"
    code, _, err = invoke("recommend", "--model", "mlp", "--emit", "skypilot", str(name))
    assert code == 0 and name.exists()
    (line,) = err.splitlines()
    assert line == f"wrote SkyPilot task {tmp_path}/t\\x1b[31mred\\x07.yaml"


@pytest.mark.parametrize(
    "workload",
    [
        "mnist\x00mlp",
        "mlp",
        "file:xyz",
        "my model",
        "llm:qwen2.5-0.5b:full:all:2048:fp32-adapters",  # full fine-tuning has no adapters
        "llm:qwen2.5-0.5b:lora:r16-all:2048:fp32-adapters:fp32-adapters",
        "llm:qwen2.5-0.5b:lora:r16-all:2048:fp32-adapters:no-checkpointing",  # not its order
    ],
)
def test_an_import_refuses_a_workload_no_command_could_find(tmp_path: Path, workload: str) -> None:
    path = tmp_path / "in.csv"
    path.write_text(result_csv(workload=workload))
    code, _, err = invoke("import", str(path))
    assert code == 2
    (line,) = err.splitlines()
    assert "is neither a zoo workload nor a model file's id" in line and "\x00" not in line
    assert "nothing imported" in line


def test_an_import_of_a_model_file_id_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "in.csv"
    path.write_text(result_csv(workload="file:0123456789abcdef"))
    assert invoke("import", str(path))[0] == 0
