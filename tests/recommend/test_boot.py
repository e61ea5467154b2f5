"""Each machine's own start before the run (``advisor.recommend.boot``): where the figures come
from, that a recommendation pays it once a run, billed, and that the answer says it."""

from __future__ import annotations

import json
import re
import statistics

import pytest

from advisor.recommend import boot
from advisor.recommend.ranker import recommend
from advisor.recommend.recommendation import Assumptions
from pricing.offers import group_offers
from tests.recommend.test_ranker import HOUR, PER_SECOND_60, T4, exact, offer


def test_every_start_up_figure_is_sourced_and_plausible() -> None:
    table = boot.boot_times()
    assert {("aws", "gpu"), ("gcp", "gpu"), ("azure", "gpu"), ("lambda", "gpu")} <= set(table)
    for (provider, kind), found in table.items():
        assert kind in ("cpu", "gpu", "tpu"), (provider, kind)
        assert 20 <= found.seconds <= 900, (provider, kind)  # seconds to minutes, published
        assert len(found.source) > 40, (provider, kind)


def test_a_provider_the_table_lacks_takes_the_median_of_its_kind_and_says_so() -> None:
    unknown = offer("x1", 1.0, provider="oracle", accelerator="A10", count=1)
    found = boot.boot_for(unknown)
    gpus = [b.seconds for (_, k), b in boot.boot_times().items() if k == "gpu"]
    assert found.seconds == statistics.median(gpus)
    assert "no start-up time published for oracle gpu" in found.source
    assert (
        boot.kind_of(offer("v6e", 1.0, provider="gcp", accelerator="tpu-v6e-8", count=1)) == "tpu"
    )
    assert boot.kind_of(offer("c5", 1.0)) == "cpu"


@pytest.mark.parametrize("nodes", [1, 4])
def test_the_start_is_paid_once_a_run_on_every_node_and_billed(nodes: int) -> None:
    machine = T4._replace(nodes=nodes, usd_per_hour=T4.usd_per_hour * nodes)
    started = boot.boot_for(machine).seconds
    runs = {}
    for booting in (False, True):
        rec = recommend(
            group_offers([machine]), exact, PER_SECOND_60, workload="w",
            assumptions=Assumptions(startup_seconds=120, booting=booting),
        )  # fmt: skip
        runs[booting] = rec.options[0]
    assert runs[False].outcome.boot_seconds == 0 and runs[True].outcome.boot_seconds == started
    assert runs[True].outcome.p50_seconds == runs[False].outcome.p50_seconds + started
    assert runs[False].outcome.p50_seconds == 4 * HOUR + 120
    extra = runs[True].cost_usd - runs[False].cost_usd  # the whole cluster, billed per second
    assert extra == pytest.approx(machine.usd_per_hour * started / HOUR, rel=1e-6)


def test_the_answer_and_json_say_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.recommend.test_one_screen import recommend as answer_lines

    said = " ".join(" ".join(answer_lines(monkeypatch, 100, "lstm", "8h")).split())
    # the machine starts, then is set up (advisor.recommend.staging): seconds on a CPU VM,
    # minutes on a GPU machine's 20 GB image (which wins depends on this machine's probe)
    started = r"of training \(start, set-up(, checkpoints)? and \w+, ~[\d.]+ (s|min), in it\)"
    assert re.search(started, said)
    from tests.recommend.test_llm_cli import invoke

    code, out, err = invoke("--model", "lstm", "--deadline", "8h", "--json")
    assert code == 0, err
    options = json.loads(out)["options"]
    assert all(o["boot_hours"] > 0 and o["training_hours"] > o["boot_hours"] for o in options)
    code, out, err = invoke("--model", "lstm", "--deadline", "8h", "--explain")
    assert code == 0, err
    assert re.search(r"Start: 7[05] s, billed: SkyPilot PR #4027", out)  # GCP's CPU or GPU VM
