"""Clusters: several machines rented together, priced as all of them, predicted over their
network, written as a SkyPilot task of as many nodes."""

from __future__ import annotations

import yaml

from advisor.estimate import Target, catalog, predict
from advisor.recommend.clusters import HEAD, NODE_COUNTS, cluster, clusters
from advisor.recommend.ranker import target_of
from advisor.recommend.skypilot_task import MULTI_NODE_KERAS_RUN, task_yaml
from pricing.offers import OfferGroup, Rentable
from tests.estimate.test_scale_out import resnet50

P4D = Rentable(
    "aws", "us-east-1", None, "p4d.24xlarge", 96.0, 1152.0, "cascadelake", "A100", 8, 40.0,
    "on_demand", 32.77, 32.77, 0.0, 0.0, "2025-01-01", "test",
)  # fmt: skip


def group(*members: Rentable) -> OfferGroup:
    return OfferGroup(list(members), [m.usd_per_hour for m in members])


def test_on_demand_machines_with_a_published_network_become_clusters_priced_as_all_nodes() -> None:
    assert catalog.node_network("aws", "p4d.24xlarge") is not None
    found = clusters([group(P4D, P4D._replace(region="us-west-2", usd_per_hour=33.0))], 32)
    assert [g.first.nodes for g in found] == list(NODE_COUNTS)
    four = next(g for g in found if g.first.nodes == 4)
    assert four.first.usd_per_hour == 4 * 32.77 and four.prices == [4 * 32.77, 4 * 33.0]
    assert four.first.accelerator_count == 8  # one machine's, as every field but the prices


def test_no_cluster_of_spot_machines_of_unknown_networks_or_past_the_limit() -> None:
    spot = P4D._replace(pricing="spot")
    unknown = P4D._replace(instance_type="made-up.48xlarge")
    assert clusters([group(spot), group(unknown)], 32) == []
    assert [g.first.nodes for g in clusters([group(P4D)], 8)] == [2, 4, 8]
    assert clusters([group(P4D)], 1) == []


def test_a_cluster_is_predicted_over_its_network() -> None:
    p = resnet50()
    one = predict(p, target_of(P4D), precision="mixed")
    four = predict(p, target_of(cluster(P4D, 4)), precision="mixed")
    assert target_of(cluster(P4D, 4)).network_gbps > 0
    assert one.seconds / 4 < four.seconds < one.seconds / 3
    assert "over 4 nodes" in four.kernel_path
    slow = Target("A100", 8, nodes=4, network_gbps=10.0)
    assert predict(p, slow, precision="mixed").seconds > four.seconds
    unknown = predict(p, Target("A100", 8, nodes=4), precision="mixed")
    assert not unknown.fits or unknown.reason is not None


def test_a_cluster_is_a_skypilot_task_of_as_many_nodes() -> None:
    """A Keras workload launches one JAX process a node, told the first node as coordinator,
    the node count and its own rank (what jax.distributed.initialize needs off TPU and Slurm)."""
    parsed = yaml.safe_load(task_yaml(cluster(P4D, 4), workload="resnet50"))
    assert parsed["num_nodes"] == 4
    assert parsed["resources"]["accelerators"] == "A100:8"
    assert parsed["run"] == MULTI_NODE_KERAS_RUN
    lines = parsed["run"].splitlines()
    assert lines[0].startswith('export JAX_COORDINATOR_ADDRESS="$(echo "$SKYPILOT_NODE_IPS"')
    assert "JAX_NUM_PROCESSES=$SKYPILOT_NUM_NODES JAX_PROCESS_ID=$SKYPILOT_NODE_RANK" in lines[1]
    assert lines[2].startswith("KERAS_BACKEND=jax python train.py")
    assert "num_nodes" not in yaml.safe_load(task_yaml(P4D, workload="resnet50"))


P5 = P4D._replace(
    instance_type="p5.48xlarge", accelerator="H100", accelerator_memory_gib=80.0,
    cpu_family="sapphirerapids", usd_per_hour=98.32, host_usd_per_hour=98.32,
)  # fmt: skip


def test_a_405b_lora_is_planned_over_nodes_with_its_layout_price_and_task() -> None:
    from advisor.estimate.llm_predict import predict_job
    from advisor.workloads.llm_job import Options, job_of

    job = job_of("llama3.1-405b", Options(method="lora", tokens=20_000_000))
    one = predict_job(job, target_of(P5))
    assert one.reason is not None and "does not fit" in one.reason  # 8 H100s cannot hold it
    four = cluster(P5, 4)
    planned = predict_job(job, target_of(four))
    assert planned.reason is None and 0 < planned.seconds < 24 * 3600
    assert "32 GPUs, FSDP" in planned.kernel_path
    assert four.usd_per_hour == 4 * P5.usd_per_hour
    parsed = yaml.safe_load(task_yaml(four, workload=job.workload, prediction=planned))
    assert parsed["num_nodes"] == 4 and parsed["envs"]["ADVISOR_GPUS"] == "32"
    first, launch = parsed["run"].splitlines()  # Hugging Face's accelerate, a process a GPU
    assert first == 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)'
    assert launch.startswith("accelerate launch --num_machines $SKYPILOT_NUM_NODES ")
    assert "--machine_rank $SKYPILOT_NODE_RANK --main_process_ip $MASTER_ADDR" in launch


def test_a_cluster_group_composes_its_members_past_the_head_once_asked() -> None:
    regions = [P4D._replace(region=f"r{n:02d}", usd_per_hour=30.0 + n) for n in range(HEAD + 4)]
    two = clusters([group(*regions)], 2)[0]
    members = two.members()
    assert len(members) == len(two) == HEAD + 4
    assert [m.region for m in members] == [r.region for r in regions]
    assert all(
        m.nodes == 2 and m.usd_per_hour == 2 * r.usd_per_hour
        for m, r in zip(members, regions, strict=True)
    )
    assert two.count_up_to(2 * 31.0 * 1, 1) == 2  # by the cluster's prices
