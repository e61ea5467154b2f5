"""The --json contract, the explanation, the infeasible message and the SkyPilot task."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from advisor.errors import AdvisorError, UsageError
from advisor.estimate.prediction import Prediction, Target
from advisor.recommend.deadline import format_duration
from advisor.recommend.ranker import recommend
from advisor.recommend.recommendation import Constraints, Recommendation
from advisor.recommend.report import OPTION_KEYS, as_json, explain, infeasible_lines
from advisor.recommend.skypilot_task import PLACEHOLDER_RUN, task_yaml, write_task
from pricing.offers import BillingRule, Rentable, group_offers

RULES = {("gcp", "spot"): BillingRule("gcp", "spot", 1, 60, 86_400, 30, 0.05, "GCP docs")}
T4_SPOT = Rentable(
    "gcp", "us-central1", "us-central1-a", "n1-standard-8", 8.0, 30.0, None, "T4", 1, 16.0,
    "spot", 0.3193, 0.0963, 0.223, 0.05, "2025-01-01", "skypilot-catalog v7",
)  # fmt: skip
CPU = T4_SPOT._replace(
    instance_type="n1-highcpu-16", accelerator=None, accelerator_count=0, pricing="on_demand",
    usd_per_hour=0.56679, interruptions_per_hour=0.0, vcpus=16.0,
)  # fmt: skip


def predict(target: Target) -> Prediction:
    steps = ("CPU probe 12.0 ms/step", "T4: x9.8 (cuDNN LSTM)")
    if target.accelerator:
        return Prediction(3600.0, 0.1, kernel_path="cuDNN LSTM, fp32", steps=steps)
    return Prediction(10 * 3600.0, 0.1)


def sample(deadline_hours: float = 8) -> Recommendation:
    return recommend(
        group_offers([T4_SPOT, CPU]),
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=Constraints(deadline_seconds=deadline_hours * 3600),
        context=("12.0 ms per step at batch 32 on this CPU",),
    )


def test_json_contract() -> None:
    payload = json.loads(json.dumps(as_json(sample())))
    assert payload["workload"] == "imdb_bilstm"
    assert payload["deadline_hours"] == 8.0
    assert payload["objective"] == "cheapest"
    assert [o["rank"] for o in payload["options"]] == [1, 2]
    for option in [*payload["options"], payload["fastest"]]:
        assert set(OPTION_KEYS) <= set(option)
    first = payload["options"][0]
    assert first["instance_type"] == "n1-standard-8"
    assert first["accelerator"] == "T4" and first["accelerator_count"] == 1
    assert first["pricing"] == "spot" and first["usd_per_hour"] == 0.3193
    assert first["predicted_hours"] <= first["predicted_hours_p90"]
    assert first["cost_usd"] <= first["cost_usd_p90"]
    assert first["meets_deadline"] is True and first["p_meet_deadline"] >= 0.9
    cpu = payload["options"][1]
    assert cpu["meets_deadline"] is False and cpu["p_meet_deadline"] < 0.1
    assert cpu["cost_usd"] == round(0.56679 * 10, 4)  # median 10 h, per second: 5.6679


def test_json_has_no_infinities_when_a_run_never_ends() -> None:
    hopeless = T4_SPOT._replace(interruptions_per_hour=500.0)
    rec = recommend(group_offers([hopeless]), predict, RULES, workload="w")
    payload = as_json(rec)
    assert payload["options"][0]["predicted_hours"] is None
    json.dumps(payload, allow_nan=False)


def test_infeasible_lines_name_a_feasible_deadline() -> None:
    rec = sample(deadline_hours=0.5)
    lines = infeasible_lines(rec)
    assert lines[0].startswith("No option finishes within 30 min")
    assert rec.feasible_deadline_seconds is not None
    assert rec.feasible_deadline_seconds % 60 == 0  # whole minutes, rounded up
    deadline = format_duration(int(rec.feasible_deadline_seconds))
    assert lines[1] == f"A deadline of {deadline} would be met (--deadline {deadline})."
    assert infeasible_lines(sample()) == []


def test_explain_walks_measurement_scaling_preemption_billing_cost() -> None:
    rec = sample()
    assert rec.best is not None
    lines = explain(rec, rec.best)
    text = "\n".join(lines)
    for part in ("Measurement:", "Device scaling", "cuDNN LSTM", "Preemption: 0.05/h", "Billing:"):
        assert part in text
    assert "per second, 60 s minimum" in text
    assert lines[-1].startswith("Cost: $0.3193/h x ")


def test_skypilot_task_text(tmp_path) -> None:
    text = task_yaml(T4_SPOT, workload="imdb_bilstm")
    assert text.startswith("# advisor: where to train imdb_bilstm: gcp us-central1")
    assert yaml.safe_load(text) == {
        "name": "advisor-imdb_bilstm",
        "resources": {
            "cloud": "gcp",
            "region": "us-central1",
            "zone": "us-central1-a",
            "instance_type": "n1-standard-8",
            "accelerators": "T4:1",
            "use_spot": True,
        },
        "run": PLACEHOLDER_RUN,
    }
    path = write_task(tmp_path / "task.yaml", CPU, workload="mlp")
    parsed = yaml.safe_load(path.read_text())
    assert parsed["resources"] == {
        "cloud": "gcp",
        "region": "us-central1",
        "zone": "us-central1-a",
        "instance_type": "n1-highcpu-16",
        "use_spot": False,
    }
    assert parsed["run"].startswith("python train.py")
    with pytest.raises(UsageError, match="folder"):
        write_task(tmp_path, CPU, workload="mlp")
    with pytest.raises(AdvisorError, match="cannot write"):
        write_task(tmp_path / "missing" / "task.yaml", CPU, workload="mlp")


def test_finite_numbers_in_a_normal_case() -> None:
    payload = as_json(sample())
    numbers = [v for o in payload["options"] for v in o.values() if isinstance(v, float)]
    assert all(math.isfinite(v) for v in numbers)


def test_infeasible_budget_without_deadline() -> None:
    rec = recommend(
        group_offers([T4_SPOT, CPU]),
        predict,
        RULES,
        workload="w",
        constraints=Constraints(budget_usd=0.01),
    )
    lines = infeasible_lines(rec)
    assert lines[0] == "No option costs at most $0.01 with 90% confidence (2 offerings considered)."
    assert rec.feasible_budget_usd is not None
    assert lines[1] == f"A budget of ${rec.feasible_budget_usd:,.2f} would be enough."
    # the spot T4 at p90: about 1.14 h x $0.3193 (1 h median, sigma 0.1, a few preemptions)
    assert 0.35 < rec.feasible_budget_usd < 0.40


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "$0.00"), (0.0012, "$0.0012"), (0.00087, "$0.00087"), (0.048, "$0.048"),
     (0.996, "$1.00"), (12.5, "$12.50"), (1234.5, "$1,234.50")],
)  # fmt: skip
def test_money_keeps_the_digits_that_differ(value: float, text: str) -> None:
    from advisor.recommend.report import usd

    assert usd(value) == text
