"""A local SkyPilot catalog written from advisor's own seed prices.

SkyPilot checks every machine of a task against its catalog, which it downloads from GitHub;
no network is reachable in the tests, so they point SkyPilot at this catalog instead: the same
skypilot-catalog rows the seed prices were taken from (data/prices-reference.csv), one row per
offering, in SkyPilot's column layout.
"""

from __future__ import annotations

import csv
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

import pricing.database as database
import pricing.query as query

COLUMNS = ["InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
           "GpuInfo", "Price", "SpotPrice", "Region", "AvailabilityZone"]  # fmt: skip
ZONES = {"aws": "{region}a", "gcp": "{region}-a", "lambda": ""}


def write_catalog(folder: Path, db_path: Path) -> Path:
    """Write ``folder/<cloud>/vms.csv`` for aws, gcp and lambda; returns ``folder``."""
    db = database.connect(db_path)
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in query.rentables(db):
        if r.provider not in ZONES or not r.instance_type:
            continue
        key = (r.provider, r.region, r.instance_type, r.accelerator or "")
        row = rows.setdefault(key, {
            "InstanceType": r.instance_type, "AcceleratorName": r.accelerator or "",
            "AcceleratorCount": r.accelerator_count or "", "vCPUs": r.vcpus,
            "MemoryGiB": r.memory_gib, "GpuInfo": r.accelerator or "", "Price": "",
            "SpotPrice": "", "Region": r.region,
            "AvailabilityZone": ZONES[r.provider].format(region=r.region),
        })  # fmt: skip
        row["Price" if r.pricing == "on_demand" else "SpotPrice"] = r.usd_per_hour
    for cloud in ZONES:
        path = folder / cloud / "vms.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, COLUMNS)
            writer.writeheader()
            writer.writerows(row for key, row in rows.items() if key[0] == cloud)
    return folder


_FOLDER: list[Path] = []
"""The one runtime folder of this pytest run (each test module imports the fixture)."""


@pytest.fixture(scope="session")
def sky_runtime(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SkyPilot's state and catalog in a folder of this pytest run, set before SkyPilot is
    imported (it reads ``SKY_RUNTIME_DIR`` once, at import)."""
    if importlib.util.find_spec("sky") is None:  # importing it here would be too early
        pytest.skip("SkyPilot not installed: make test-skypilot")
    if _FOLDER:
        return _FOLDER[0]
    folder = tmp_path_factory.mktemp("sky-runtime")
    os.environ["SKY_RUNTIME_DIR"] = str(folder)  # for the whole run, as SkyPilot keeps it
    from sky.catalog import common
    from sky.skylet import constants

    catalogs = folder / ".sky" / "catalogs" / constants.CATALOG_SCHEMA_VERSION
    if Path(common.get_catalog_path("x")).parent != catalogs:
        pytest.fail("SkyPilot was imported before SKY_RUNTIME_DIR was set")
    write_catalog(catalogs, folder / "prices.db")
    _FOLDER.append(folder)
    return folder
