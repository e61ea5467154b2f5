"""What a run does on its machine besides training (``advisor.recommend.staging``, the ranker's
``overheads_of``): the image and set-up, the data set of ``--data``, the checkpoints; where the
figures come from, the arithmetic by hand, that the ranking weighs them, and what the command
line says of them."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from advisor.errors import UsageError
from advisor.recommend import staging
from advisor.recommend.outcome import CHECKPOINT_EVERY
from advisor.recommend.ranker import recommend
from advisor.recommend.recommendation import Assumptions, Constraints
from pricing.offers import group_offers
from tests.recommend.test_ranker import HOUR, PER_SECOND_60, T4, T4_SPOT, exact, offer

GP3 = 125 * 2**20
"""AWS's default disk, bytes/s (data/setup-staging.csv)."""
SLOW = offer("c5.large", 0.100, vcpus=2)
"""0.75 Gb/s: its network, not its disk, binds (data/instance-bandwidth.csv)."""
FAST = offer("c5.xlarge", 0.105, vcpus=4)
"""1.25 Gb/s: its disk binds."""


def test_every_figure_is_sourced_and_positive() -> None:
    for key, (gbps, per_vcpu, source) in staging.bandwidths().items():
        assert gbps > 0 and (per_vcpu is None or per_vcpu > 0), key
        assert len(source) > 40, key
    for key, figure in staging.figures().items():
        assert figure.value > 0 and len(figure.source) > 40, key
    assert ("*", "*") in staging.bandwidths()  # a default for what nothing publishes
    assert ("disk_write", "*", "*") in staging.figures()


def test_a_machine_takes_bytes_in_at_the_lesser_of_its_network_and_disk() -> None:
    assert staging.network_gbps(SLOW).value == 0.75
    assert (
        staging.rate(SLOW).bytes_per_second == 0.75e9 / 8 and staging.rate(SLOW).binds == "network"
    )
    assert staging.rate(FAST).bytes_per_second == GP3 and staging.rate(FAST).binds == "disk"
    # GCP: 2 Gb/s a vCPU up to 32; a provider that publishes nothing: the stated default
    assert staging.network_gbps(offer("n1-standard-4", 0.19, provider="gcp")).value == 8
    assert staging.network_gbps(offer("n1-highcpu-64", 2.3, provider="gcp", vcpus=64)).value == 32
    unknown = staging.network_gbps(offer("gpu_1x_a10", 0.75, provider="lambda", vcpus=30))
    assert unknown.value == 2.5 and "No published figure" in unknown.source


@pytest.mark.parametrize(
    ("text", "size"),
    [("150GB", 150e9), ("2TB", 2e12), ("500MiB", 500 * 2**20), ("1.5 TiB", 1.5 * 2**40),
     ("64kb", 64e3)],
)  # fmt: skip
def test_sizes_are_read_as_people_write_them(text: str, size: float) -> None:
    assert staging.parse_size(text) == size


@pytest.mark.parametrize("text", ["150", "GB", "15XB", "-1GB", "0GB", "1e3GB", "20PB", "9" * 50])
def test_a_size_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(UsageError):
        staging.parse_size(text)


def _run(offers: list, assumptions: Assumptions, **constraints: float) -> list:
    rec = recommend(
        group_offers(offers), exact, PER_SECOND_60, workload="w",
        constraints=Constraints(**constraints), assumptions=assumptions,  # type: ignore[arg-type]
    )  # fmt: skip
    return list(rec.options)


def test_the_data_set_is_billed_at_the_machine_rate_by_hand() -> None:
    [slow] = _run([SLOW], Assumptions(data_bytes=150e9))
    # 150 GB at 0.75 Gb/s = 93.75 MB/s: 1,600 s, on ten hours of CPU training
    assert slow.outcome.staging_seconds == pytest.approx(1600.0)
    assert slow.outcome.p50_seconds == pytest.approx(10 * HOUR + 1600.0)
    assert slow.cost_usd == pytest.approx(0.100 * (10 * HOUR + 1600.0) / HOUR)
    [fast] = _run([FAST], Assumptions(data_bytes=150e9))
    assert fast.outcome.staging_seconds == pytest.approx(150e9 / GP3)  # 1,144 s: the disk's


def test_a_slow_network_loses_a_big_data_set_to_a_faster_one() -> None:
    def ranked(assumptions: Assumptions, **constraints: float) -> list[str]:
        found = _run([SLOW, FAST], assumptions, **constraints)
        return [o.rentable.instance_type for o in found if o.meets_deadline]

    assert ranked(Assumptions()) == ["c5.large", "c5.xlarge"]  # cheaper by the hour
    # 2 TB: 5.9 h at 0.75 Gb/s against 4.2 h at the disk's 131 MB/s
    assert ranked(Assumptions(data_bytes=2e12)) == ["c5.xlarge", "c5.large"]
    assert ranked(Assumptions(data_bytes=2e12), deadline_seconds=15 * HOUR) == ["c5.xlarge"]


def test_set_up_is_the_image_at_the_machine_rate_and_a_cluster_stages_on_every_node() -> None:
    cluster = T4._replace(nodes=4, usd_per_hour=T4.usd_per_hour * 4)
    alone, together = (
        _run([m], Assumptions(setting_up=True, data_bytes=1e12))[0] for m in (T4, cluster)
    )
    assert alone.outcome.setup_seconds == pytest.approx(20e9 / GP3)  # the 20 GB GPU image
    # each node downloads the whole set at once: the same time, every node billed
    assert together.outcome.staging_seconds == alone.outcome.staging_seconds
    extra = together.outcome.setup_seconds + together.outcome.staging_seconds
    assert together.cost_usd == pytest.approx(cluster.usd_per_hour * (4 * HOUR + extra) / HOUR)


def test_checkpoints_on_demand_at_each_epoch_end_at_most_one_every_half_hour() -> None:
    found = _run([T4], Assumptions(checkpoints=100, checkpoint_seconds=5.0))[0].outcome
    assert found.checkpoints == math.ceil(4 * HOUR / CHECKPOINT_EVERY) == 8
    assert found.checkpointing_seconds == 40.0 and found.p50_seconds == 4 * HOUR + 40.0
    few = _run([T4], Assumptions(checkpoints=3, checkpoint_seconds=5.0))[0].outcome
    assert few.checkpointing_seconds == 15.0


def test_spot_keeps_its_own_checkpoints_and_stages_again_after_each_preemption() -> None:
    base = Assumptions(checkpoints=3, checkpoint_seconds=5.0, reacquire_seconds=180.0)
    staged = replace(base, data_bytes=150e9, setting_up=True)
    plain, loaded = (_run([T4_SPOT], a)[0].outcome for a in (base, staged))
    # its checkpoints at the simulation's own interval, and its final save
    assert plain.checkpoints == loaded.checkpoints == 1
    assert plain.checkpointing_seconds == loaded.checkpointing_seconds == 5.0
    again = loaded.setup_seconds + loaded.staging_seconds
    assert again == pytest.approx((20e9 + 150e9) / GP3)
    assert loaded.restart_seconds == pytest.approx(plain.restart_seconds + again)
    assert loaded.training_seconds[0] == pytest.approx(plain.training_seconds[0] + again)


@pytest.mark.parametrize("size", ["15XB", "150", "0GB", "nan", "-2TB"])
def test_the_command_line_refuses_a_bad_size_in_one_line(size: str) -> None:
    from tests.recommend.test_llm_cli import JOB, invoke

    code, out, err = invoke(*JOB, "--data", size)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "'--data'" in err and "Traceback" not in err


def test_the_command_line_says_and_bills_the_data_on_the_shipped_prices() -> None:
    from tests.recommend.test_llm_cli import JOB, invoke, stored_llm_probe

    stored_llm_probe("llama3-8b", method="qlora", tokens=20_000_000)
    runs = {}
    for size in ("150GB", "1.5TB"):
        code, out, err = invoke(*JOB, "--deadline", "6h", "--top", "20", "--data", size, "--json")
        assert code == 0, err
        runs[size] = {
            (o["provider"], o["region"], o["instance_type"], o["nodes"], o["pricing"]): o
            for o in json.loads(out)["options"]
        }
        for o in runs[size].values():
            assert o["setup_hours"] > 0 and o["staging_hours"] > 0 and o["boot_hours"] > 0
            parts = o["boot_hours"] + o["setup_hours"] + o["staging_hours"]
            assert o["training_hours"] > parts + o["checkpoint_hours"]
    both = runs["150GB"].keys() & runs["1.5TB"].keys()
    assert both
    for key in both:  # ten times the data, ten times its download
        small, large = runs["150GB"][key]["staging_hours"], runs["1.5TB"][key]["staging_hours"]
        assert large == pytest.approx(10 * small, rel=2e-3)
    code, out, err = invoke(*JOB, "--deadline", "6h", "--data", "150GB", "--explain")
    assert code == 0, err
    said = " ".join(out.split())
    assert "150 GB of data" in said.split("Time:")[1].split("on-demand")[0]
    for line in ("Transfer: at ", "Set-up: ", "Data: 150 GB in "):
        assert line in said, line
    assert "billed" in said.split("Data: 150 GB in ")[1][:40]


def test_egress_is_charged_only_when_the_data_lives_with_another_provider() -> None:
    gcp = offer("n1-standard-4", 0.19, provider="gcp", region="us-central1")
    here = Assumptions(data_bytes=150e9)
    elsewhere = replace(here, data_from="aws")
    [aws_free] = _run([FAST], elsewhere)  # the data in AWS, the machine in AWS: no egress
    assert aws_free.outcome.egress_usd == 0
    [gcp_free], [gcp_paid] = _run([gcp], here), _run([gcp], elsewhere)
    assert gcp_free.outcome.egress_usd == 0
    assert gcp_paid.outcome.egress_usd == pytest.approx(150 * 0.09)  # S3's $0.09/GB
    for cost in ("cost_usd", "cost_usd_p90", "confident_cost_usd", "expected_cost_usd"):
        assert getattr(gcp_paid, cost) == pytest.approx(getattr(gcp_free, cost) + 13.5)
    cluster = gcp._replace(nodes=4, usd_per_hour=0.76)  # every node downloads the whole set
    assert _run([cluster], elsewhere)[0].outcome.egress_usd == pytest.approx(4 * 13.5)
    # the cheaper machine by the hour loses once its data must cross clouds, and a budget
    # below the egress leaves it out
    dearer = FAST._replace(usd_per_hour=0.25)
    assert _run([gcp, dearer], here)[0].rentable.provider == "gcp"
    assert _run([gcp, dearer], elsewhere)[0].rentable.provider == "aws"
    budget = _run([gcp], elsewhere, budget_usd=13.0)
    assert not budget[0].within_budget


def test_the_command_line_charges_egress_only_across_clouds() -> None:
    from tests.recommend.test_llm_cli import JOB, invoke, stored_llm_probe

    stored_llm_probe("llama3-8b", method="qlora", tokens=20_000_000)
    args = [*JOB, "--top", "500", "--data", "100GB", "--data-from", "gcp", "--json"]
    code, out, err = invoke(*args)
    assert code == 0, err
    for o in json.loads(out)["options"]:
        expected = 0.0 if o["provider"] == "gcp" else 100 * 0.12 * o["nodes"]
        assert o["egress_usd"] == pytest.approx(expected), o["provider"]
    code, out, err = invoke(*JOB, "--data-from", "gcp")
    assert code == 2 and "give --data too" in err and err.count("\n") == 1


def test_a_sharded_plan_writes_its_checkpoint_from_every_node_at_once() -> None:
    from advisor.estimate.layout import Layout
    from advisor.estimate.prediction import Prediction
    from advisor.recommend.ranker import overheads_of

    cluster, saving = T4._replace(nodes=4), Assumptions(checkpoints=1, checkpoint_seconds=400.0)
    replicated = Prediction(4 * HOUR, 0.0)  # data parallel: rank 0 saves the whole model
    sharded = Prediction(4 * HOUR, 0.0, layout=Layout(32, 1, 32, sharding="full"))
    split = Prediction(4 * HOUR, 0.0, layout=Layout(32, 1, 32, tensor=8))
    assert overheads_of(cluster, saving, replicated, spot=False).checkpointing == 400.0
    assert overheads_of(cluster, saving, sharded, spot=False).checkpointing == 100.0
    assert overheads_of(cluster, saving, split, spot=False).checkpointing == 100.0
    assert overheads_of(T4, saving, sharded, spot=False).checkpointing == 400.0  # one node
