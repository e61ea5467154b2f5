"""SkyPilot catalog CSVs: ``<base>/<cloud>/vms.csv`` (skypilot-org/skypilot-catalog).

The default base is catalog v8, the one current SkyPilot reads; rows are read by header, so a v7
base parses too. Every v8 provider whose ``vms.csv`` has the ``REQUIRED`` columns is taken
(``UNITS``); ``LEFT_OUT`` names the others. GCP's attachable accelerators and TPUs are rows with
an empty InstanceType. 700.0 ("unknown") is skipped, a SpotPrice of 0 means no spot price, and
prices listed per zone keep their **regional minimum**. Accelerator names map to the device
catalog's (``data/accelerator-names.csv``); an unmapped one is kept as spelled, priced without a
time prediction, and counted in ``PriceBatch.unmapped`` (docs/SOURCES.md, "Live prices")."""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import IO, TYPE_CHECKING

from advisor import locations
from pricing import fetch
from pricing.observations import Observation, parse_number, parse_price, price_problem
from pricing.sources import PriceBatch, SourceFormatError
from pricing.spool import Spool

if TYPE_CHECKING:
    import httpx

NAME = "skypilot"
VERSION = "v8"
"""The catalog schema version SkyPilot reads today (``CATALOG_SCHEMA_VERSION``)."""
DEFAULT_URL = (
    f"https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/{VERSION}"
)
UNITS = (
    "aws",
    "gcp",
    "azure",
    "lambda",
    "runpod",
    "vast",
    "nebius",
    "oci",
    "cudo",
    "primeintellect",
    "hyperbolic",
    "hyperstack",
    "seeweb",
    "yotta",
    "daytona",
    "jarvislabs",
    "lium",
    "mithril",
    "spheron",
    "verda",
    "shadeform",
)
"""The providers of catalog v8 whose ``vms.csv`` parses by header (docs/SOURCES.md lists the
commit each header was read at)."""
LEFT_OUT = {
    "kubernetes": "the user's own cluster: no public price catalog",
    "ssh": "the user's own machines: no public price catalog",
    "slurm": "the user's own cluster: its pricing.csv is written by the user",
    "ibm": "no catalogs/v8/ibm/vms.csv in the catalog repository snapshot read",
    "scp": "no catalogs/v8/scp/vms.csv in the catalog repository snapshot read",
    "vsphere": "the user's own data centre: no public price catalog",
    "fluidstack": "no catalogs/v8/fluidstack/vms.csv in the catalog repository snapshot read",
    "paperspace": "no catalogs/v8/paperspace/vms.csv in the catalog repository snapshot read",
    "do": "no catalogs/v8/do/vms.csv in the catalog repository snapshot read",
}
"""Clouds SkyPilot knows (``ALL_CLOUDS``) that the refresh does not take, and why."""

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Region", "Price", "SpotPrice")
NAMES_FILE = "accelerator-names.csv"
_MIB = re.compile(r"SizeInMiB['\"]?\s*:\s*(\d+)")
_DEVICE_GIB = (1.0, 320.0)
"""A per-device memory outside these bounds is not a per-device figure in MiB (RunPod writes GiB
in the MiB field, Prime Intellect the machine's total): it is left empty."""


@cache
def accelerator_names() -> tuple[dict[str, str], frozenset[str]]:
    """The catalog spellings mapped to device names, and the device catalog's names."""
    with locations.shipped(NAMES_FILE).open(newline="", encoding="utf-8") as handle:
        names = {row["catalog_name"]: row["device"] for row in csv.DictReader(handle)}
    with locations.shipped("devices.csv").open(newline="", encoding="utf-8") as handle:
        devices = frozenset(row["name"] for row in csv.DictReader(handle))
    return names, devices


def url_for(base: str | None, unit: str) -> str:
    return f"{(base or DEFAULT_URL).rstrip('/')}/{unit}/vms.csv"


def collect(
    http: httpx.Client,
    base: str | None,
    unit: str,
    *,
    policy: fetch.RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> PriceBatch:
    with fetch.get_file(http, url_for(base, unit), policy=policy, on_bytes=on_bytes) as body:
        return parse_file(body, unit)


def parse(text: str, provider: str) -> PriceBatch:
    """Observations of one cloud's vms.csv (regional minimum over zones)."""
    return parse_file(io.BytesIO(text.encode("utf-8")), provider)


def parse_file(body: IO[bytes], provider: str) -> PriceBatch:
    """``parse`` of a binary file, read as a stream into a ``pricing.spool.Spool``: memory is
    the same whatever the file's size or its count of offerings (a gzip of 67 million empty
    lines costs one line at a time, a million offerings one batch at a time)."""
    text = io.TextIOWrapper(body, encoding="utf-8", errors="replace", newline="")
    try:
        return _parse(csv.reader(_lines(text, provider)), provider)
    except csv.Error as exc:  # e.g. a NUL byte: the file is not a catalog
        raise SourceFormatError(f"skypilot/{provider} vms.csv is not CSV: {exc}") from None
    finally:
        text.detach()


MAX_LINE_CHARS = 64 * 1024
"""Longest line of a catalog: a real vms.csv line is under 1,000 characters (the GpuInfo column
is the longest); a longer one is not a catalog row, and csv would hold it whole."""
MAX_COLUMNS = 256
"""Most columns a header may have: v8 has 13 at most; 200,000 columns are not a catalog."""
PARSED_CACHE = 65_536
"""Offerings whose parsed facts are kept for their next zone (then forgotten: memory stays
bounded, and a catalog lists an offering's zones on neighbouring lines)."""


def _lines(text: IO[str], provider: str) -> Iterator[str]:
    """The lines of ``text``, each bounded by ``MAX_LINE_CHARS``."""
    while line := text.readline(MAX_LINE_CHARS + 1):
        if len(line) > MAX_LINE_CHARS:
            raise SourceFormatError(
                f"skypilot/{provider} vms.csv has a line over {MAX_LINE_CHARS:,} characters; "
                "not a catalog"
            )
        yield line


def _parse(reader: Iterator[list[str]], provider: str) -> PriceBatch:
    header = next(reader, [])
    if len(header) > MAX_COLUMNS:
        raise SourceFormatError(
            f"skypilot/{provider} vms.csv has {len(header):,} columns (at most {MAX_COLUMNS}); "
            "not a catalog"
        )
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        raise SourceFormatError(f"skypilot/{provider} vms.csv lacks columns {missing}")
    column: dict[str, int] = {}
    for index, name in enumerate(header):
        column.setdefault(name, index)
    at = [column[name] for name in REQUIRED]
    optional = [column.get(name) for name in ("vCPUs", "MemoryGiB", "GpuInfo")]
    width = len(header)
    spool = Spool("cheapest")
    parsed: dict[tuple, tuple[tuple, tuple]] = {}  # zones repeat an offering: parse it once
    skipped = 0
    for row in reader:
        if not row:
            continue  # a blank line: nothing to count
        if len(row) != width:
            skipped += 1  # a short row: a body cut mid-line, or a broken line
            continue
        raw = (row[at[0]], row[at[1]], row[at[2]], row[at[3]])
        known = parsed.get(raw)
        if known is None:
            if len(parsed) >= PARSED_CACHE:
                parsed.clear()  # a catalog lists an offering's zones together
            try:
                known = parsed[raw] = _offering(row, at, optional, provider)
            except (ValueError, OverflowError):
                skipped += 1
                continue
        offering = known[1]
        for pricing, index in (("on_demand", at[4]), ("spot", at[5])):
            cell = row[index].strip()
            if not cell:
                continue  # not offered under this model
            price = parse_price(cell)
            if pricing == "spot" and price == 0:
                continue  # SkyPilot writes 0 where a provider has no spot price (Vast)
            if price is None or price_problem(price):
                skipped += 1
                continue
            spool.add(Observation._make((*offering, pricing, price)))
    _, devices = accelerator_names()
    unmapped = {
        name: count
        for name, count in spool.offerings_by_accelerator().items()
        if name not in devices
    }
    return PriceBatch(
        provider, f"{NAME}/{provider}", spool, skipped, retire=(NAME, "seed"), unmapped=unmapped
    )


def _offering(
    row: list[str], at: list[int], optional: list[int | None], provider: str
) -> tuple[tuple, tuple]:
    """The identity and facts of the offering a row describes; ValueError when malformed."""
    instance_type, accelerator, count_text, region = (row[i].strip() for i in at[:4])
    count = _number(count_text) or 0.0
    if not region or (not instance_type and not accelerator):
        raise ValueError("no region or no machine")
    if not 0 <= count <= 1024:
        raise ValueError(f"accelerator count {count_text!r} out of range")
    if count != int(count):
        raise ValueError("fractional accelerators are not modelled")
    if accelerator and count == 0:
        count = 1.0
    names, _ = accelerator_names()
    accelerator = names.get(accelerator, accelerator)
    vcpus, memory, info = (row[i] if i is not None else "" for i in optional)
    found = _MIB.search(info) if info else None
    device_gib = round(int(found.group(1)) / 1024, 2) if found else None
    if device_gib is not None and not _DEVICE_GIB[0] <= device_gib <= _DEVICE_GIB[1]:
        device_gib = None
    key = (provider, region, "", instance_type, accelerator, int(count))
    offering = (  # in Observation's field order, less pricing and price
        provider,
        region,
        "",
        instance_type,
        _number(vcpus),
        _number(memory),
        accelerator,
        int(count),
        device_gib,
        not instance_type,
    )
    return key, offering


def _number(text: str | None) -> float | None:
    """A size (vCPUs, GiB): None when empty, a ValueError when not finite and >= 0."""
    if text is None or not text.strip():
        return None
    number = parse_number(text)
    if number is None or not math.isfinite(number) or number < 0:
        raise ValueError(f"not a size: {text!r}")
    return number
