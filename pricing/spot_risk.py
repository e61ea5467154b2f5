"""Measured spot risk: how often a spot machine can be had, how long it lives, how long to wait.

``data/spot-risk.csv`` holds, per public trace family and zone, the share of time a spot machine
could be had and maximum-likelihood fits of its lifetimes (time to preemption: a mixture of two
exponentials, ``Lifetimes``) and of the waits when none could be had (a Weibull); and per family
and region the same for a run that fails over between the region's zones (what a SkyPilot managed
job does: it relaunches in any zone of its region), with the share of preemptions that found
another zone with capacity at once. ``advisor/fitting/spot_traces.py`` derives it from the
public traces (sources in docs/SOURCES.md, section "Spot risk"). A machine gets the family
measured on its provider and accelerator, else its provider's family of the same kind (GPU or
CPU), else a stated conservative default: the AWS traces, the most frequently interrupted ones we
have. An offering without a zone (a region: every offering of the price database) gets the
family's regions; one that names a zone is pinned to it and gets the zones (``for_machine``).

The provider statistics of the price database are not used for this: the AWS Spot Advisor band
is a monthly share of capacity reclaimed, not a per-hour rate for a GPU job.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from functools import cache

from advisor.locations import shipped

RISK_FILE = "spot-risk.csv"

DEFAULT_FAMILY = {"gpu": "aws-v100-preemption-2023-04", "cpu": "aws-cpu-preemption-2023-04"}
"""Where no trace was measured on a provider: the AWS traces (0.3-3 interruptions per running
hour), the most pessimistic measured, rather than a guess that would flatter spot."""


@dataclass(frozen=True)
class Lifetimes:
    """How long a spot machine lives (time to preemption, seconds): a mixture of two exponentials,
    many short lives and a few long ones that hold most of the running time (heavy-tailed: the
    spread exceeds the mean), fitted by maximum likelihood to the traces' lifetimes
    (``advisor/fitting/spot_traces.py``, ``hyperexponential_fit``). One exponential where
    ``short_share`` is 1."""

    short_share: float
    short_seconds: float
    long_seconds: float

    def phases(self) -> tuple[tuple[float, float], ...]:
        """``(share, mean seconds)`` of each phase that has a share."""
        both = ((self.short_share, self.short_seconds), (1 - self.short_share, self.long_seconds))
        return tuple((share, mean) for share, mean in both if share > 0)

    @property
    def mean_seconds(self) -> float:
        return sum(share * mean for share, mean in self.phases())

    def survival(self, seconds: float) -> float:
        """Share of machines alive after ``seconds``."""
        return sum(share * math.exp(-seconds / mean) for share, mean in self.phases())

    @property
    def median_seconds(self) -> float:
        """Half the machines are preempted by then (bisection on ``survival``, which is at most
        1/e at the longer mean)."""
        low, high = 0.0, max(mean for _, mean in self.phases())
        if not math.isfinite(high):
            return math.inf
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if self.survival(mid) > 0.5 else (low, mid)
        return (low + high) / 2

    @property
    def found_short_share(self) -> float:
        """The short phase's share of the machines found running at a random moment: a machine
        is found with odds proportional to its life (length-biased sampling), so the share is
        ``short_share * short_seconds / mean_seconds``; what is left of its life is then again
        exponential with the phase's mean (memoryless). D. R. Cox, "Renewal Theory" (Methuen,
        1962), section 5.2: the first interval of an equilibrium renewal process."""
        if self.short_share >= 1:
            return 1.0
        if not math.isfinite(self.long_seconds):
            return 0.0  # every machine found running is a long one
        return self.short_share * self.short_seconds / self.mean_seconds


@dataclass(frozen=True)
class ZoneRisk:
    """One zone of a trace family, or one region failed over between its zones: availability,
    the lifetimes and the Weibull waits (seconds)."""

    zone: str
    availability: float
    """Share of the time a spot machine could be had."""
    lifetimes: Lifetimes
    """Lifetime of a spot machine: time to preemption."""
    down_shape: float
    down_scale_seconds: float
    """Weibull spells in which none could be had: the wait to get one back."""
    ends_per_up_hour: float
    move_share: float = 0.0
    """Share of preemptions after which another zone of the region has capacity at once: a move,
    a new start without a wait (``spot.MOVE_SECONDS``); the down spells are the other waits. 0 for
    a zone (a run pinned to it waits for that zone)."""

    @property
    def mean_life_seconds(self) -> float:
        return self.lifetimes.mean_seconds


@dataclass(frozen=True)
class SpotRisk:
    """A trace family: an equal mixture (where a spot machine lands is not known in advance) of
    its regions, for a run that fails over between a region's zones, or of its zones, for a run
    pinned to one (``mixture``). ``label`` is what the app says (``spot traces, AWS V100 Apr
    2023``)."""

    family: str
    label: str
    zones: tuple[ZoneRisk, ...]
    source: str
    stand_in: str = ""
    """Why this family stands in for a machine it was not measured on ("" where it was)."""
    regions: tuple[ZoneRisk, ...] = ()
    """One failover row per region (``ZoneRisk.zone`` is the region); () where none was derived."""
    pinned: bool = False
    """The offering names a zone: the run waits for that zone, no failover."""

    @property
    def mixture(self) -> tuple[ZoneRisk, ...]:
        """What the engine simulates: the regions, unless pinned to a zone or none were derived."""
        return self.regions if self.failover else self.zones

    @property
    def failover(self) -> bool:
        """Whether the mixture is of regions (a run that fails over between their zones)."""
        return bool(self.regions) and not self.pinned

    @property
    def availability(self) -> float:
        return sum(z.availability for z in self.mixture) / len(self.mixture)

    @property
    def interruptions_per_hour(self) -> float:
        """Mean preemptions per running hour over the mixture (a summary; the model uses the
        fits). A move to another zone of the region counts: it is a preemption and a restart."""
        return sum(z.ends_per_up_hour for z in self.mixture) / len(self.mixture)

    def describe(self) -> str:
        """The source in one line, with the word "default" where it is one."""
        if self.failover:
            n = len(self.regions)
            text = f"{self.label}, failover across a region's zones ({n} region{'s' * (n > 1)})"
        else:
            n = len(self.zones)
            pinned = "pinned to one zone; " if self.regions else ""
            text = f"{self.label} ({pinned}{n} zone{'s' * (n > 1)})"
        return text + (f", {self.stand_in}" if self.stand_in else "")

    def standing_in(self, why: str) -> SpotRisk:
        return replace(self, stand_in=why)

    def pinned_to_zone(self) -> SpotRisk:
        """The family for an offering that names its zone: the zones' mixture, no failover."""
        return replace(self, pinned=True)


def exponential(rate_per_hour: float, source: str) -> SpotRisk:
    """A memoryless risk at ``rate_per_hour``, always available (a stated rate, no trace)."""
    mean = 3600 / rate_per_hour if rate_per_hour > 0 else math.inf
    lives = Lifetimes(1.0, mean, mean)
    zone = ZoneRisk("-", 1.0, lives, 1.0, 0.0, rate_per_hour)  # no wait for capacity
    return SpotRisk(f"rate-{rate_per_hour:g}", f"{rate_per_hour:g}/h stated", (zone,), source)


@dataclass(frozen=True)
class SpotRisks:
    """Every trace family, found by provider and accelerator."""

    families: dict[str, SpotRisk]
    keys: dict[tuple[str, str], str]
    """(provider, accelerator measured or ``cpu``) -> family (the first in the file)."""

    def for_machine(
        self, provider: str, accelerator: str | None, zone: str | None = None
    ) -> SpotRisk:
        """The family measured on this provider and accelerator; else one of this provider's of
        the same kind (GPU/accelerator or CPU); else the conservative default of that kind. An
        offering without a ``zone`` (a region) gets the family's regions (a run that fails over
        between a region's zones); one in a named ``zone`` is pinned to it (the zones)."""
        risk = self._family(provider, accelerator)
        return risk.pinned_to_zone() if zone else risk

    def _family(self, provider: str, accelerator: str | None) -> SpotRisk:
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
    regions: dict[str, list[ZoneRisk]] = {}
    meta: dict[str, tuple[str, list[str]]] = {}
    keys: dict[tuple[str, str], str] = {}
    for row in rows:
        family = row["family"]
        scope = row["scope"]
        if scope not in ("zone", "region"):
            raise ValueError(f"spot-risk.csv: scope {scope!r} of {family} {row['zone']}")
        risk = ZoneRisk(
            zone=row["zone"],
            availability=float(row["availability"]),
            lifetimes=Lifetimes(
                float(row["up_short_share"]),
                float(row["up_short_hours"]) * 3600,
                float(row["up_long_hours"]) * 3600,
            ),
            down_shape=float(row["down_shape"]),
            down_scale_seconds=float(row["down_scale_hours"]) * 3600,
            ends_per_up_hour=float(row["ends_per_up_hour"] or 0),
            move_share=float(row["move_share"]),
        )
        (zones if scope == "zone" else regions).setdefault(family, []).append(risk)
        if scope == "zone":
            meta.setdefault(family, (row["label"], []))[1].append(row["source"])
            keys.setdefault((row["provider"], row["accelerator"]), family)
    families = {
        f: SpotRisk(
            f,
            meta[f][0],
            tuple(z),
            _common_source(meta[f][1]),
            regions=tuple(regions.get(f, ())),
        )
        for f, z in zones.items()
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
