"""Which machines a bench rents, and what it expects to pay for them.

Each asked accelerator (``A100``, or ``A100:8`` for a machine of eight trained data parallel)
or vCPU count becomes one candidate: the cheapest matching offering in the price database, on a
cloud SkyPilot reaches, rented ``nodes`` times over for a cluster (its machines train together,
``probes.distributed``). The expected cost is the machines' price for start-up (provisioning,
installing TensorFlow) plus the probe, billed under the provider's rule from the same database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pricing.query as query
from advisor import display
from advisor.errors import UsageError
from advisor.estimate import catalog
from advisor.recommend.billing import billed_seconds, rule_for
from pricing.offers import BillingRule, Rentable

if TYPE_CHECKING:
    import sqlite_utils

SKYPILOT_CLOUDS = ("aws", "gcp", "azure", "lambda")
"""Providers of the price database that SkyPilot launches on."""
PROVISION_SECONDS = 300.0
"""Typical time from launch to a running node (SkyPilot provisions and sets up its runtime)."""
SETUP_SECONDS = {"gpu": 480.0, "cpu": 240.0}
"""Installing advisor and TensorFlow on the node (with the CUDA libraries on a GPU)."""
PROBE_OVERHEAD_SECONDS = 120.0
"""What the probe adds to its own budget: importing TensorFlow, building the model, the data."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_WHOLE = re.compile(r"[0-9]{1,6}")
"""A count as people type it: ASCII digits (``int`` would take any script's)."""


MAX_NODES = 32
"""The most machines one bench cluster rents (the clusters ``advisor recommend`` composes)."""
MAX_GPUS = 16
"""The most accelerators one machine of the clouds' catalogs has (GCP's a2-megagpu-16g: 16)."""


@dataclass(frozen=True)
class Candidate:
    """One machine (or cluster of them) to bench: the offering rented and its expected cost."""

    label: str
    """What was asked: ``T4``, ``8x A100``, ``2 nodes of 8x H100`` or ``8 vCPU``."""
    rentable: Rentable
    """One machine of it."""
    cluster: str
    """The SkyPilot cluster name (unique per bench)."""
    expected_seconds: float
    """Start-up plus the probe, as billed."""
    expected_usd: float
    """Every machine's."""
    nodes: int = 1

    @property
    def is_gpu(self) -> bool:
        return self.rentable.accelerator is not None

    @property
    def data_parallel(self) -> bool:
        """Whether its probe trains over several devices (``probes.distributed``)."""
        return self.nodes > 1 or self.rentable.accelerator_count > 1


def parse_gpus(text: str | None) -> list[tuple[str, int]]:
    """``T4,L4,A100:8`` -> (accelerator name, count on one machine): ``A100:8`` benches a machine
    of eight A100s, trained data parallel."""
    asked = []
    for part in _parts(text):
        name, _, count = part.partition(":")
        if count and (not _WHOLE.fullmatch(count) or not 1 <= int(count) <= MAX_GPUS):
            raise UsageError(
                f"--gpus {display.cut(part)}: a count is 1-{MAX_GPUS} accelerators of one "
                "machine, as in A100:8"
            )
        asked.append((name, int(count or 1)))
    return asked


def parse_cpus(text: str | None) -> list[int]:
    """``8,16`` -> vCPU counts."""
    counts = []
    for part in _parts(text):
        if not _WHOLE.fullmatch(part) or int(part) < 1:
            raise UsageError(f"--cpus takes vCPU counts such as 8,16, not {display.quoted(part)}")
        counts.append(int(part))
    return counts


def _parts(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def plan(
    db: sqlite_utils.Database,
    *,
    gpus: Sequence[str | tuple[str, int]],
    cpus: list[int],
    spot: bool,
    probe_seconds: float,
    tag: str,
    nodes: int = 1,
) -> list[Candidate]:
    """The cheapest offering for each asked accelerator (a name alone: one of it; ``(name,
    count)``: a machine of that many) and vCPU count, costed; ``nodes`` machines of each
    accelerator's offering train together (a CPU machine is benched alone)."""
    if not gpus and not cpus:
        raise UsageError("nothing to bench: name accelerators with --gpus or vCPUs with --cpus")
    if not 1 <= nodes <= MAX_NODES:
        raise UsageError(f"--nodes must be 1-{MAX_NODES}, got {nodes}")
    if nodes > 1 and (cpus or spot):
        raise UsageError(
            "--nodes rents clusters of on-demand GPU machines, as 'advisor recommend' composes "
            "them (a spot cluster stops when any machine is taken back): drop --cpus and --spot"
        )
    pricing = "spot" if spot else "on_demand"
    rules = query.billing_rules(db)
    candidates = []
    for name, count in dict.fromkeys(g if isinstance(g, tuple) else (g, 1) for g in gpus):
        wanted = query.Filters(accelerator=name, pricing=pricing, min_count=count,
                               max_count=count)  # fmt: skip
        rows = query.rentable_rows(db, wanted)
        if nodes > 1:  # only what advisor recommend composes: a published network between them
            rows = [r for r in rows if catalog.node_network(r.provider, r.instance_type or "")]
        found = _cheapest(rows)
        label = _label(query.resolve(db, wanted).accelerator or name, count, nodes)
        candidates.append(_candidate(label, found, pricing, probe_seconds, tag, rules, nodes))
    for count in dict.fromkeys(cpus):
        rows = query.rentable_rows(db, query.Filters(cpu_only=True, pricing=pricing))
        found = _cheapest(r for r in rows if r.vcpus == count)
        candidates.append(_candidate(f"{count} vCPU", found, pricing, probe_seconds, tag, rules))
    return candidates


def check_backend(candidates: list[Candidate], backend: str) -> None:
    """Refuse a data-parallel bench on a backend Keras cannot distribute (``probes.distributed``)."""
    if backend != "jax" and any(c.data_parallel for c in candidates):
        raise UsageError(
            "a bench over several accelerators trains them data parallel through Keras's "
            "distribution API, which runs on JAX only: add --backend jax"
        )


def _label(name: str, count: int, nodes: int) -> str:
    """``T4``, ``8x A100``, ``2 nodes of 8x A100``."""
    one = name if count == 1 else f"{count}x {name}"
    return one if nodes == 1 else f"{nodes} nodes of {one}"


def _cheapest(rows: Iterable[Rentable]) -> Rentable | None:
    usable = [r for r in rows if r.provider in SKYPILOT_CLOUDS and r.instance_type and _safe(r)]
    return min(usable, key=lambda r: r.usd_per_hour, default=None)


def _safe(r: Rentable) -> bool:
    """Names that go into a SkyPilot resource spec must be plain names (catalogs are data)."""
    names = [r.provider, r.region, r.instance_type, r.accelerator or "x", r.zone or "x"]
    return all(_NAME.match(name) for name in names)


def _candidate(
    label: str,
    found: Rentable | None,
    pricing: str,
    probe_seconds: float,
    tag: str,
    rules: dict[tuple[str, str], BillingRule],
    nodes: int = 1,
) -> Candidate:
    if found is None:
        networked = " with a published network between machines" if nodes > 1 else ""
        raise UsageError(
            f"no {pricing.replace('_', '-')} offering of {label}{networked} on a cloud SkyPilot "
            f"launches on ({', '.join(SKYPILOT_CLOUDS)}) in the price database (see 'advisor "
            "prices list')"
        )
    kind = "gpu" if found.accelerator else "cpu"
    running = PROVISION_SECONDS + SETUP_SECONDS[kind] + PROBE_OVERHEAD_SECONDS + probe_seconds
    billed = billed_seconds(running, rule_for(rules, found.provider, found.pricing))
    return Candidate(
        label=label,
        rentable=found,
        cluster=cluster_name(label, tag),
        expected_seconds=billed,
        expected_usd=found.usd_per_hour * billed / 3600 * nodes,
        nodes=nodes,
    )


def cluster_name(label: str, tag: str) -> str:
    """``advisor-bench-a100-80gb-1a2b``: lower-case letters, digits and dashes, as clouds want."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    return f"advisor-bench-{slug}-{tag}"[:60].rstrip("-")
