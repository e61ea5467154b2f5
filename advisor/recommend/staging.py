"""What a run writes onto its machine before the first step, and how fast: its image, its data set.

A machine takes bytes in at the lesser of its network and its disk's write speed. The network is
the instance type's published baseline or cap (``data/instance-bandwidth.csv``), else its
provider's per-vCPU rule, else a conservative default; the disk is the provider's default disk
(``data/setup-staging.csv``). The object store is not taken as a limit: S3 and Cloud Storage
serve one VM as fast as its parallel requests ask (S3's performance guidelines: 85-90 MB/s a
connection, more connections for more), so the download is assumed parallel. A cluster's nodes
each download the whole data set at once (a distributed sampler deals each node other samples
every epoch), so a cluster stages in one node's time, every node billed. A data set in another
provider's object store (``--data-from``) costs that provider's internet egress on every node's
copy; one of the machine's own provider is taken to be in its region (free). Offerings of one
offer group share the rate of its cheapest member (a group is one provider, vCPU count and
accelerator, which the tables' rates follow). Sources: docs/SOURCES.md, "Setting up and
staging data".
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache

from advisor import display
from advisor.errors import UsageError
from advisor.locations import shipped
from advisor.recommend.boot import kind_of
from pricing.offers import Rentable

BANDWIDTH_FILE = "instance-bandwidth.csv"
FIGURES_FILE = "setup-staging.csv"
MAX_DATA_BYTES = 10e15
"""The largest data set accepted: 10 PB."""
UNITS = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15}
UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50}
_SIZE = re.compile(r"([0-9]{1,15}(?:\.[0-9]{1,6})?) ?([a-z]{1,3})")
SIZES = "a number and a unit: 500MB, 150GB, 2TB, 500MiB, 1.5TiB"


@dataclass(frozen=True)
class Figure:
    """One sourced figure of the shipped tables."""

    value: float
    source: str


@dataclass(frozen=True)
class Rate:
    """How fast one machine takes bytes in, and which of its network and disk binds."""

    network_gbps: Figure
    disk_bytes_per_second: Figure

    @property
    def network_bytes_per_second(self) -> float:
        return self.network_gbps.value * 1e9 / 8

    @property
    def bytes_per_second(self) -> float:
        return min(self.network_bytes_per_second, self.disk_bytes_per_second.value)

    @property
    def binds(self) -> str:
        """``network`` or ``disk``: the slower of the two."""
        slower = self.network_bytes_per_second < self.disk_bytes_per_second.value
        return "network" if slower else "disk"

    def describe(self) -> str:
        """``at 131 MB/s (the disk binds; network 5 Gb/s)``."""
        other = (
            f"disk {self.disk_bytes_per_second.value / 1e6:,.0f} MB/s"
            if self.binds == "network"
            else f"network {self.network_gbps.value:g} Gb/s"
        )
        return f"at {self.bytes_per_second / 1e6:,.0f} MB/s (the {self.binds} binds; {other})"


def _rows(name: str) -> list[dict[str, str]]:
    with shipped(name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@lru_cache(maxsize=1)
def bandwidths() -> dict[tuple[str, str], tuple[float, float | None, str]]:
    """(provider, instance type or ``*``) -> (Gb/s or the cap, Gb/s a vCPU or None, source)."""
    return {
        (r["provider"], r["instance_type"]): (
            float(r["gbps"]),
            float(r["per_vcpu_gbps"]) if r["per_vcpu_gbps"] else None,
            r["source"],
        )
        for r in _rows(BANDWIDTH_FILE)
    }


@lru_cache(maxsize=1)
def figures() -> dict[tuple[str, str, str], Figure]:
    """(figure, provider or ``*``, kind or ``*``) -> the figure in bytes/s, bytes or USD a
    byte."""
    scale = {"MiB/s": 2**20, "GB": 1e9, "USD/GB": 1e-9}
    return {
        (r["figure"], r["provider"], r["kind"]): Figure(
            float(r["value"]) * scale[r["unit"]], r["source"]
        )
        for r in _rows(FIGURES_FILE)
    }


def network_gbps(r: Rentable) -> Figure:
    """One machine's network: its type's row, else its provider's rule, else the default."""
    return _network_gbps(r.provider, r.instance_type, r.vcpus)


def _network_gbps(provider: str, instance_type: str, vcpus: float | None) -> Figure:
    table = bandwidths()
    found = table.get((provider, instance_type)) or table.get((provider, "*"))
    if found is None:
        return Figure(table["*", "*"][0], table["*", "*"][2])
    gbps, per_vcpu, source = found
    if per_vcpu is not None and vcpus:
        gbps = min(gbps, per_vcpu * vcpus)
    return Figure(gbps, source)


def _figure(name: str, provider: str, kind: str) -> Figure:
    table = figures()
    for key in ((name, provider, kind), (name, provider, "*"), (name, "*", kind)):
        if key in table:
            return table[key]
    return table[name, "*", "*"]


def rate(r: Rentable) -> Rate:
    """How fast ``r`` (each of its nodes) takes bytes in."""
    return _rate(r.provider, r.instance_type, r.vcpus)


@lru_cache(maxsize=4096)
def _rate(provider: str, instance_type: str, vcpus: float | None) -> Rate:
    """``rate`` once per kind of machine: a recommendation asks it of every offer group."""
    network = _network_gbps(provider, instance_type, vcpus)
    return Rate(network, _figure("disk_write", provider, "*"))


def image(r: Rentable) -> Figure:
    """The bytes of the image and packages a run on ``r`` is set up from, by kind of machine."""
    return _figure("image", r.provider, kind_of(r))


def setup_seconds(r: Rentable) -> float:
    """Pulling the image and installing the packages, at the machine's rate."""
    return image(r).value / rate(r).bytes_per_second


def staging_seconds(r: Rentable, data_bytes: float) -> float:
    """Downloading ``data_bytes`` of data set onto ``r`` (each node the whole of it)."""
    return data_bytes / rate(r).bytes_per_second if data_bytes > 0 else 0.0


def sources() -> tuple[str, ...]:
    """The providers a data set may be downloaded from with its egress charged (``--data-from``)."""
    return tuple(sorted(p for name, p, _ in figures() if name == "egress_internet" and p != "*"))


def egress(source: str) -> Figure:
    """What ``source``'s object store charges a byte sent to the internet (another cloud)."""
    return figures()["egress_internet", source, "*"]


def egress_usd(r: Rentable, data_bytes: float, source: str | None) -> float:
    """The egress ``source`` charges to send ``data_bytes`` to each of ``r``'s nodes: nothing
    from the machine's own provider (its object store in the machine's region is assumed)."""
    if source is None or source == r.provider or data_bytes <= 0:
        return 0.0
    return egress(source).value * data_bytes * r.nodes


def parse_size(text: str) -> float:
    """Bytes in ``150GB``, ``2TB``, ``500MiB`` (decimal and binary units), or one usage error."""
    cleaned = text.strip().lower()
    match = _SIZE.fullmatch(cleaned) if len(cleaned) <= 40 else None
    if match is None or match.group(2) not in UNITS:
        raise UsageError(f"{display.quoted(text)} is not a size; give {SIZES}")
    size = float(match.group(1)) * UNITS[match.group(2)]
    if not 0 < size <= MAX_DATA_BYTES:
        raise UsageError(f"{display.quoted(text)} must be more than 0 and at most 10PB")
    return size


def describe_size(size: float) -> str:
    """``150 GB``, ``2 TB``, ``524 MB``: decimal units, three significant digits at most."""
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{float(f'{size / scale:.3g}'):g} {unit}"
    return f"{size:.0f} B"
