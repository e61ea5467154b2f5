"""`advisor recommend` end to end on the real parts: the seed price database, a stored probe of
this machine, the estimation layer and the ranking (no TensorFlow: the probe is stored)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor import service
from advisor.cli import cli
from advisor.recommend.recommendation import Constraints
from pricing import database
from probes import history
from probes.device import fingerprint
from probes.result import ProbeResult, WorkloadConfig

MLP = WorkloadConfig("mnist_mlp", 60_000, 10_000, 20, 128)
CONTRACT = {
    "rank", "provider", "region", "instance_type", "accelerator", "accelerator_count", "pricing",
    "usd_per_hour", "predicted_hours", "predicted_hours_p90", "cost_usd", "cost_usd_p90",
    "p_meet_deadline", "meets_deadline",
}  # fmt: skip


def stored_mlp_probe() -> ProbeResult:
    """A probe of mnist_mlp as this machine measures it (figures of a real 2-vCPU run)."""
    result = ProbeResult(
        config=MLP, device=fingerprint(), step_seconds=0.0062, step_interval=(0.0061, 0.0063),
        validation_step_seconds=0.0021, epoch_overhead_seconds=0.05, startup_seconds=1.2,
        predicted_seconds=66.0, predicted_interval=(63.0, 69.0), samples_per_second=20_645.0,
        probe_seconds=9.0, flops_per_sample=4.0e6, parameters=669_706,
        peak_host_bytes=600_000_000, op_split={"matmul_conv": 0.55, "elementwise": 0.2,
        "overhead": 0.25}, batch_scaling={128: 0.0062}, created_at="2026-11-21T05:00:00+00:00",
    )  # fmt: skip
    history.save(database.connect(), result)
    return result


def recommend_json(*args: str) -> dict:
    outcome = CliRunner().invoke(cli, ["recommend", "--model", "mlp", *args, "--json"])
    assert outcome.exit_code == 0, outcome.output
    payload: dict = json.loads(outcome.output)
    return payload


def test_json_contract_from_a_stored_probe() -> None:
    stored_mlp_probe()
    payload = recommend_json("--deadline", "8h")
    assert payload["workload"] == "mnist_mlp"
    assert payload["deadline_hours"] == 8
    assert payload["objective"] == "cheapest"
    options = payload["options"]
    assert options and all(set(o) >= CONTRACT for o in options)
    assert [o["rank"] for o in options] == list(range(1, len(options) + 1))
    feasible = [o for o in options if o["meets_deadline"]]
    assert feasible == options[: len(feasible)]  # feasible first
    # cheapest first: the expected cost, an hour of waiting at the default $1 (rounded in JSON)
    weighed = [
        o["expected_cost_usd"] + (o["expected_wait_hours"] or 0) + (o["expected_delay_hours"] or 0)
        for o in feasible
    ]
    assert all(b >= a - 1e-3 for a, b in itertools.pairwise(weighed))
    assert all(o["p_meet_deadline"] >= 0.9 for o in feasible)
    fastest = payload["fastest"]
    assert all(fastest["predicted_hours"] <= o["predicted_hours"] for o in options)


def test_the_stored_probe_is_reused_and_tensorflow_never_imported(
    advisor_home: Path,
) -> None:
    stored_mlp_probe()
    code = (
        "import sys, json\n"
        "from advisor.cli import cli\n"
        "try:\n"
        "    cli.main(['recommend', '--model', 'mlp', '--deadline', '2h', '--json'])\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "      ('tensorflow', 'keras', 'textual'))))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**__import__("os").environ, "ADVISOR_HOME": str(advisor_home)},
    )  # fmt: skip
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []


def test_an_impossible_deadline_says_what_would_be_feasible() -> None:
    stored_mlp_probe()
    payload = recommend_json("--deadline", "1s")
    assert not any(o["meets_deadline"] for o in payload["options"])
    assert payload["feasible"] is False
    assert payload["feasible_deadline_hours"] > 1 / 3600
    assert payload["fastest"] is not None
    table = CliRunner().invoke(cli, ["recommend", "--model", "mlp", "--deadline", "1s"])
    assert table.exit_code == 0
    assert "deadline" in table.output.lower()


def test_filters_reach_the_price_database() -> None:
    stored_mlp_probe()
    payload = recommend_json("--deadline", "8h", "--accelerator", "t4", "--no-spot")
    assert payload["options"]
    assert {o["accelerator"] for o in payload["options"]} == {"T4"}
    assert {o["pricing"] for o in payload["options"]} == {"on_demand"}
    unknown = CliRunner().invoke(cli, ["recommend", "-m", "mlp", "--deadline", "8h",
                                       "--accelerator", "T5"])  # fmt: skip
    assert unknown.exit_code == 2
    assert "did you mean" in unknown.output


def test_rank_uses_the_given_probe_without_probing() -> None:
    probe = stored_mlp_probe()
    request = service.Request("mlp", constraints=Constraints(deadline_seconds=3600))
    assert service.stored_probe(request) == probe
    rec = service.rank(request, probe)
    assert rec.workload == "mnist_mlp"
    assert rec.considered > 100  # every offering of the seed that can run it


@pytest.mark.parametrize("bad", ["8x", "soon", "-1h", "1.5h"])
def test_bad_deadlines_are_usage_errors(bad: str) -> None:
    outcome = CliRunner().invoke(cli, ["recommend", "-m", "mlp", "--deadline", bad])
    assert outcome.exit_code == 2
    assert len(outcome.output.strip().splitlines()) == 1


def test_a_probe_says_what_it_will_take_before_it_starts(capsys: pytest.CaptureFixture) -> None:
    """First-run honesty: before a probe, one line on stderr with what it will take, from this
    machine's recent probes once there are some (a command's probe left out)."""
    from advisor.cli import progress

    progress.announce("imdb_bilstm", 20.0)
    first = capsys.readouterr().err
    assert first.startswith("probing imdb_bilstm here first (TensorFlow's start and the model's")
    assert "then at most 20 s of steps); stored for next time" in first
    stored_mlp_probe()  # took 9 s here
    progress.announce("imdb_bilstm", 20.0)
    assert "(about 9 s, as this machine's recent probes took)" in capsys.readouterr().err


def test_an_llm_probe_says_its_bounds_before_it_starts(capsys: pytest.CaptureFixture) -> None:
    """An LLM job's proxy is shrunk to its budget and memory bound: its first line says both,
    and what this machine's LLM probes took once there are some (not the zoo's)."""
    from advisor.cli import progress
    from tests.recommend.test_llm_cli import stored_llm_probe

    label = "llm:llama3.1-70b:full:all:2048"
    stored_mlp_probe()  # a zoo probe of 9 s says nothing of an LLM's
    progress.announce(label, 20.0)
    first = capsys.readouterr().err
    assert first.startswith(f"probing {label} here first (TensorFlow's start, the proxy's build")
    assert "at most 25 s and 4 GiB, the proxy shrunk to fit); stored for next time" in first
    stored_llm_probe("llama3-8b", method="qlora", tokens=20_000_000)  # took 19.3 s
    progress.announce(label, 20.0)
    again = capsys.readouterr().err
    assert "(about 19 s, as this machine's recent LLM probes took; at most 25 s and 4 GiB" in again
    progress.announce(label, 5.0)  # under a smaller budget the bound says more than 19 s
    assert "(TensorFlow's start, the proxy's build and its steps; at most 10 s" in (
        capsys.readouterr().err
    )
