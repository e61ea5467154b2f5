"""CPU family and architecture of an instance type, from ``data/instance-families.csv``.

The estimation layer keys its CPU catalog on these family names (haswell ... graviton4). The
table maps a provider's machine family (GCP ``n2`` of ``n2-standard-8``, AWS ``c6i`` of
``c6i.8xlarge``) or an exact instance type to a family, citing the provider's page for each.
Unknown families (Azure sizes, Lambda, newer series) give None: the estimator then falls back
to its own default rather than to a wrong guess.
"""

from __future__ import annotations

import csv
import functools
from typing import NamedTuple

from advisor import locations

FILE = "instance-families.csv"


class CpuInfo(NamedTuple):
    cpu_family: str | None
    arch: str | None


UNKNOWN = CpuInfo(None, None)


@functools.cache
def _table() -> dict[tuple[str, str], CpuInfo]:
    with locations.shipped(FILE).open(newline="", encoding="utf-8") as handle:
        return {
            (row["provider"], row["family"]): CpuInfo(row["cpu_family"], row["arch"] or None)
            for row in csv.DictReader(handle)
        }


def machine_family(provider: str, instance_type: str) -> str:
    """``n2`` for GCP ``n2-standard-8``, ``c6i`` for AWS ``c6i.8xlarge``."""
    separator = "." if provider == "aws" else "-"
    return instance_type.split(separator, 1)[0]


def cpu_info(provider: str, instance_type: str) -> CpuInfo:
    """The CPU family and architecture of ``instance_type``, or UNKNOWN."""
    if not instance_type:
        return UNKNOWN
    table = _table()
    exact = table.get((provider, instance_type))
    if exact is not None:
        return exact
    return table.get((provider, machine_family(provider, instance_type)), UNKNOWN)
