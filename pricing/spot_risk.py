"""Measured spot risk: how often a spot machine can be had, how long it lives, how long to wait.

``data/spot-risk.csv`` holds, per public trace family and zone, the share of time a spot machine
could be had and Weibull fits of its lifetimes (time to preemption) and of the waits when none
could be had; ``benchmarks/spot_traces_derive.py`` derives it from the public traces (sources in
docs/SOURCES.md, section "Spot risk"). A machine gets the family measured on its provider and
accelerator, else its provider's family of the same kind (GPU or CPU), else a stated conservative
default: the AWS traces, the most frequently interrupted ones we have.

The provider statistics of the price database are not used for this: the AWS Spot Advisor band
is a monthly share of capacity reclaimed, not a per-hour rate for a GPU job.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import cache

from advisor.locations import shipped

RISK_FILE = "spot-risk.csv"

DEFAULT_FAMILY = {"gpu": "aws-v100-preemption-2023-04", "cpu": "aws-cpu-preemption-2023-04"}
"""Where no trace was measured on a provider: the AWS traces (0.3-3 interruptions per running
hour), the most pessimistic measured, rather than a guess that would flatter spot."""


@dataclass(frozen=True)
class ZoneRisk:
    """One zone of a trace family: availability and the Weibull spells (seconds)."""

    zone: str
    availability: float
    """Share of the time a spot machine could be had."""
    up_shape: float
    up_scale_seconds: float
    """Weibull lifetime of a spot machine: time to preemption (shape < 1: heavy-tailed)."""
    down_shape: float
    down_scale_seconds: float
    """Weibull spells in which none could be had: the wait to get one back."""
    ends_per_up_hour: float

    @property
    def mean_life_seconds(self) -> float:
        return self.up_scale_seconds * math.gamma(1 + 1 / self.up_shape)


@dataclass(frozen=True)
class SpotRisk:
    """A trace family: a mixture of its zones with equal weight (where a spot machine lands is not
    known in advance). ``label`` is what the app says (``spot traces, AWS V100 Apr 2023``)."""

    family: str
    label: str
    zones: tuple[ZoneRisk, ...]
    source: str
    stand_in: str = ""
    """Why this family stands in for a machine it was not measured on ("" where it was)."""

    @property
    def availability(self) -> float:
        return sum(z.availability for z in self.zones) / len(self.zones)

    @property
    def interruptions_per_hour(self) -> float:
        """Mean preemptions per running hour over the zones (a summary; the model uses the fits)."""
        return sum(z.ends_per_up_hour for z in self.zones) / len(self.zones)

    def describe(self) -> str:
        """The source in one line, with the word "default" where it is one."""
        zones = len(self.zones)
        text = f"{self.label} ({zones} zone{'s' if zones > 1 else ''})"
        return text + (f", {self.stand_in}" if self.stand_in else "")

    def standing_in(self, why: str) -> SpotRisk:
        return SpotRisk(self.family, self.label, self.zones, self.source, why)


def exponential(rate_per_hour: float, source: str) -> SpotRisk:
    """A memoryless risk at ``rate_per_hour``, always available (a stated rate, no trace)."""
    scale = 3600 / rate_per_hour if rate_per_hour > 0 else math.inf
    zone = ZoneRisk("-", 1.0, 1.0, scale, 1.0, 0.0, rate_per_hour)  # no wait for capacity
    return SpotRisk(f"rate-{rate_per_hour:g}", f"{rate_per_hour:g}/h stated", (zone,), source)


@dataclass(frozen=True)
class SpotRisks:
    """Every trace family, found by provider and accelerator."""

    families: dict[str, SpotRisk]
    keys: dict[tuple[str, str], str]
    """(provider, accelerator measured or ``cpu``) -> family (the first in the file)."""

    def for_machine(self, provider: str, accelerator: str | None) -> SpotRisk:
        """The family measured on this provider and accelerator; else one of this provider's of
        the same kind (GPU/accelerator or CPU); else the conservative default of that kind."""
        measured = accelerator or "cpu"
        if (provider, measured) in self.keys:
            return self.families[self.keys[provider, measured]]
        cpu = measured == "cpu"
        for (owner, device), family in self.keys.items():
            if owner == provider and (device == "cpu") == cpu:
                return self.families[family].standing_in(
                    f"measured on {device}, no trace of {measured} on {provider}"
                )
        kind = "cpu" if cpu else "gpu"
        return self.families[DEFAULT_FAMILY[kind]].standing_in(
            f"a conservative default: no {provider} {kind} spot trace"
        )


def parse(rows: list[dict[str, str]]) -> SpotRisks:
    """The table from rows of ``spot-risk.csv`` (a bad row is an error: the file ships with us)."""
    zones: dict[str, list[ZoneRisk]] = {}
    meta: dict[str, tuple[str, list[str]]] = {}
    keys: dict[tuple[str, str], str] = {}
    for row in rows:
        if row.get("scope", "zone") != "zone":
            continue
        family = row["family"]
        zones.setdefault(family, []).append(
            ZoneRisk(
                zone=row["zone"],
                availability=float(row["availability"]),
                up_shape=float(row["up_shape"]),
                up_scale_seconds=float(row["up_scale_hours"]) * 3600,
                down_shape=float(row["down_shape"]),
                down_scale_seconds=float(row["down_scale_hours"]) * 3600,
                ends_per_up_hour=float(row["ends_per_up_hour"] or 0),
            )
        )
        meta.setdefault(family, (row["label"], []))[1].append(row["source"])
        keys.setdefault((row["provider"], row["accelerator"]), family)
    families = {
        f: SpotRisk(f, meta[f][0], tuple(z), _common_source(meta[f][1])) for f, z in zones.items()
    }
    return SpotRisks(families, keys)


def _common_source(sources: list[str]) -> str:
    """What the zones' sources share: the repository, commit and folder of the family's traces."""
    if len(sources) == 1:
        return sources[0]
    shared = ""
    for letters in zip(*sources, strict=False):
        if len(set(letters)) > 1:
            break
        shared += letters[0]
    return shared[: shared.rfind("/") + 1]


@cache
def shipped_risks() -> SpotRisks:
    """The table that ships with advisor (``data/spot-risk.csv``)."""
    with shipped(RISK_FILE).open(encoding="utf-8", newline="") as handle:
        return parse(list(csv.DictReader(handle)))
