"""Benchmark: refresh a 100,000-row SkyPilot-format catalog from a loopback HTTP server.

Target: <= 5 s end to end (download, parse, validate, store, materialise) on the
2-vCPU development machine. Prints the median of several runs for a first refresh into a fresh
database (every price new) and a second one where 10% of the prices changed.

    .venv/bin/python benchmarks/prices_refresh.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pricing import database, refresh
from tests.fixtures.pricing.server import FixtureServer, Reply
from tests.price_catalog import write_catalog


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_catalog(root, args.rows)
        catalog = (root / "skypilot" / "aws" / "vms.csv").read_bytes()
        changed = _changed(catalog)
        server = FixtureServer(root)
        first: list[float] = []
        second: list[float] = []
        first_cpu: list[float] = []
        second_cpu: list[float] = []
        with server.running():
            urls = {"skypilot": f"{server.url}/skypilot"}
            for run in range(args.runs):
                db = database.connect(root / f"run{run}.sqlite")
                server.scripts.clear()
                start, cpu = time.perf_counter(), time.process_time()
                (report,) = refresh.refresh(db, ["skypilot/aws"], urls=urls, allow_shrink=True)
                first.append(time.perf_counter() - start)
                first_cpu.append(time.process_time() - cpu)
                assert report.status == "ok", report.error
                server.script("/skypilot/aws/vms.csv", Reply(body=changed))
                start, cpu = time.perf_counter(), time.process_time()
                (again,) = refresh.refresh(db, ["skypilot/aws"], urls=urls, allow_shrink=True)
                second.append(time.perf_counter() - start)
                second_cpu.append(time.process_time() - cpu)
                assert again.status == "ok", again.error
                rentables = db.conn.execute("SELECT COUNT(*) FROM rentables").fetchone()[0]
                print(
                    f"run {run + 1}: first {first[-1]:.2f} s ({report.added} added, "
                    f"{report.skipped} skipped); second {second[-1]:.2f} s ({again.changed} "
                    f"changed, {again.unchanged} unchanged); {rentables} rentables"
                )
    print(f"rows: {args.rows}, catalog: {len(catalog) / 1e6:.1f} MB")
    print(
        f"first refresh  median {statistics.median(first):.2f} s wall, "
        f"{statistics.median(first_cpu):.2f} s CPU (target <= 5 s); all: "
        + ", ".join(f"{t:.2f}" for t in first)
    )
    print(
        f"second refresh median {statistics.median(second):.2f} s wall, "
        f"{statistics.median(second_cpu):.2f} s CPU; all: " + ", ".join(f"{t:.2f}" for t in second)
    )


def _changed(catalog: bytes) -> bytes:
    """The same catalog with every tenth offering's on-demand price up 5%."""
    lines = catalog.decode().splitlines()
    out = [lines[0]]
    for number, line in enumerate(lines[1:]):
        cells = line.rsplit(",", 4)
        if (number // 2) % 10 == 0:
            cells[1] = f"{float(cells[1]) * 1.05:.5f}"
        out.append(",".join(cells))
    return ("\n".join(out) + "\n").encode()


if __name__ == "__main__":
    main()
