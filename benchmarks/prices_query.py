"""Benchmark: query 100,000 offerings (the recommender's load and a filtered ``prices list``).

Target: a filtered ``prices list`` query takes <= 20 ms. Also timed: the recommender's
read, ``pricing.query.offer_groups()`` (the offer groups with their cheapest rows decoded), and
``rentables()``, every row decoded. The database is the seed plus the synthetic 100,000-row
catalog (``prices_catalog.py``) refreshed from a loopback server. Prints the median of
``--repeat`` timings of each query.

    .venv/bin/python benchmarks/prices_query.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pricing import database, query, refresh
from tests.fixtures.pricing.server import FixtureServer
from tests.price_catalog import write_catalog


def timed(label: str, repeat: int, call: Callable[[], list]) -> None:
    times, size = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        size = len(call())
        times.append(time.perf_counter() - start)
    median = statistics.median(times) * 1000
    print(f"{label:<58} {size:>7} rows  median {median:7.1f} ms  (min {min(times) * 1000:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_catalog(root)
        path = root / "prices.sqlite"
        with FixtureServer(root).running() as server:
            (report,) = refresh.refresh(
                database.connect(path),
                ["skypilot/aws"],
                urls={"skypilot": f"{server.url}/skypilot"},
                allow_shrink=True,  # it replaces the seed's 46 AWS prices
            )
        assert report.status == "ok", report.error
        db = database.connect(path)
        n = args.repeat
        print("pricing.query.offer_groups() (the recommender's call; rows = groups):")
        first_calls = []
        for _ in range(n):  # a new connection each time, opened before the clock starts
            fresh = database.connect(path)
            start = time.perf_counter()
            size = len(query.offer_groups(fresh))
            first_calls.append(time.perf_counter() - start)
            del fresh
        median = statistics.median(first_calls) * 1000
        label = "  all, first call on a new connection (decodes)"
        print(
            f"{label:<58} {size:>7} rows  median {median:7.1f} ms  (min {min(first_calls) * 1000:.1f})"
        )
        timed(
            "  all, repeated on one connection (groups reused)", n, lambda: query.offer_groups(db)
        )
        timed(
            "  provider=aws pricing=spot",
            n,
            lambda: query.offer_groups(db, query.Filters(provider="aws", pricing="spot")),
        )
        print("pricing.query.rentables() (every row):")
        timed("  all", n, lambda: query.rentables(db))
        timed(
            "  accelerator=h100 min_count=8",
            n,
            lambda: query.rentables(db, accelerator="h100", min_count=8),
        )
        print("prices list (pricing.query.rentable_rows, indexed SQL, cheapest first):")
        cases = {
            "  --accelerator a100 --spot": query.Filters(accelerator="a100", pricing="spot"),
            "  --provider aws --region region-07 --max-price 2": query.Filters(
                provider="aws", region="region-07", max_price=2.0
            ),
            "  --cpu-only --on-demand --max-price 0.5": query.Filters(
                cpu_only=True, pricing="on_demand", max_price=0.5
            ),
            "  --min-count 8 --limit 20": query.Filters(min_count=8),
        }
        for label, filters in cases.items():
            limit = 20 if "limit" in label else None
            timed(label, n, lambda f=filters, lim=limit: query.rentable_rows(db, f, limit=lim))


if __name__ == "__main__":
    main()
