"""A refresh's memory does not grow with the catalog: ten times the rows, about the same peak.

Each refresh runs in a process of its own (the catalog's server stays in the test's), whose peak
resident memory (``VmHWM``) is compared; the batches are made small so that a few thousand rows
span many of them, and SQLite's page cache (which also bounds its sorts' memory) is small.
``benchmarks/robustness_figures.py`` measures a 1,000,000-row refresh.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.fixtures.pricing.server import FixtureServer
from tests.price_catalog import write_catalog

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys
from pricing import database, fetch, ingest, materialise, refresh, spool
from pricing.sources import skypilot_catalog
spool.BATCH = ingest.BATCH = skypilot_catalog.PARSED_CACHE = 256
materialise.CHUNK_ROWS = 512
refresh.REFRESH_CACHE_KIB = 2048  # SQLite's pages and sorts: bounded by this, not by the rows
spool.CACHE_KIB = 1024
fetch.SPOOL_BYTES = 64 * 1024
db = database.connect(sys.argv[1])
refresh.refresh(db, ["skypilot/aws"], urls={"skypilot": sys.argv[2]})  # the imports, the seed
(report,) = refresh.refresh(db, ["skypilot/aws"], urls={"skypilot": sys.argv[3]},
                            allow_shrink=True)
assert report.status == "ok", report.error
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(report.added, peak.split()[1])
"""


def _peak_kib(folder: Path, rows: int) -> int:
    write_catalog(folder / "catalog", rows, zones=1)
    write_catalog(folder / "warm", 100, zones=1)
    with FixtureServer(folder).running() as server:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(folder / "prices.sqlite"),
             f"{server.url}/warm/skypilot", f"{server.url}/catalog/skypilot"],
            capture_output=True, text=True, cwd=ROOT, check=True,
        )  # fmt: skip
    added, peak = done.stdout.split()
    assert int(added) > 1.9 * rows  # every row an offering, on demand and spot
    return int(peak)


def test_ten_times_the_rows_take_about_the_same_memory(tmp_path: Path) -> None:
    small = _peak_kib(tmp_path / "small", 3_000)
    large = _peak_kib(tmp_path / "large", 30_000)
    # before the rows were streamed, 30,000 more rows took about 140 MB more
    assert large < small + 15 * 1024, (small, large)
