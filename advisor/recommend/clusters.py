"""Clusters: several machines of one kind rented together for one data-parallel job.

The price database holds one machine a row. A training that wants more accelerators than one
machine has runs on several, and pays for all of them: for every on-demand group of machines
with accelerators whose network between machines is published (``data/node-networks.csv``), the
recommender composes groups of 2, 4, 8, 16 and 32 of them (256 eight-GPU machines' GPUs at
most), priced at as many times the machine's price, and the device model predicts them over
that network (``advisor.estimate.steps.transfer_seconds``). Spot clusters are not composed: a
job of k spot machines stops when any one is taken back, and the spot model here reasons about
one machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial

from advisor.estimate import catalog
from pricing.offers import OfferGroup, Rentable

NODE_COUNTS = (2, 4, 8, 16, 32)
HEAD = 16
"""Members of a cluster group composed at once: the ranker reads a group's cheapest ``--top``
(10 by default), and composes the rest once, if it reaches past them."""
LINEAR_SCALING_LIMIT = 8192
"""The largest global batch at which scaling the learning rate with the batch, after a warm-up,
kept ResNet-50's ImageNet accuracy (Goyal et al. 2017, "Accurate, Large Minibatch SGD: Training
ImageNet in 1 Hour", Figure 1: flat to 8k, falling beyond); LARS (You et al. 2017) held it to
32k, LAMB (You et al. 2019) BERT's pre-training to 64k."""


def clusters(
    groups: Sequence[OfferGroup], max_nodes: int, max_devices: int | None = None
) -> list[OfferGroup]:
    """The clusters of up to ``max_nodes`` machines that ``groups`` allow, and of no more than
    ``max_devices`` accelerators in all (a weak-scaled batch's devices up to
    ``LINEAR_SCALING_LIMIT``, a fixed global batch's one sample each), each a group of its own,
    members cheapest first as their machines'."""
    composed = []
    for group in groups:
        first = group.first
        if not _clusterable(first) or max_nodes < NODE_COUNTS[0]:
            continue
        head = group.members(0, HEAD)
        for nodes in NODE_COUNTS:
            too_many = max_devices is not None and nodes * first.accelerator_count > max_devices
            if nodes > max_nodes or too_many:
                break
            composed.append(
                OfferGroup(
                    [cluster(member, nodes) for member in head],
                    [price * nodes for price in group.prices],
                    cache(partial(_rest, group, nodes)),
                )
            )
    return composed


def _rest(group: OfferGroup, nodes: int) -> list[Rentable]:
    return [cluster(member, nodes) for member in group.members(HEAD)]


def cluster(machine: Rentable, nodes: int) -> Rentable:
    """``nodes`` of ``machine``, priced as all of them."""
    return machine._replace(
        nodes=nodes,
        usd_per_hour=machine.usd_per_hour * nodes,
        host_usd_per_hour=machine.host_usd_per_hour * nodes,
        accelerator_usd_per_hour=machine.accelerator_usd_per_hour * nodes,
    )


def _clusterable(machine: Rentable) -> bool:
    return (
        machine.pricing == "on_demand"
        and machine.accelerator is not None
        and machine.nodes == 1
        and catalog.node_network(machine.provider, machine.instance_type) is not None
    )
