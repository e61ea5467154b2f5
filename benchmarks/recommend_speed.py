"""How fast is a recommendation over 100,000 offerings from a stored probe? (issue 6)

Three figures, medians of several runs (the machine is shared and noisy):

1. engine: ``advisor.recommend.engine.recommend`` over 100k offerings (the real seed prices
   cycled over made-up regions), a hand-built predictor standing in for the estimation layer;
2. process: a fresh interpreter that imports the command's modules, reads the 100k offerings from
   a SQLite file (``SELECT`` + ``Rentable._make``, as the price library does), ranks them and
   prints the ``--json`` payload: the whole command minus the price library's own query
   joins and the stored-probe look-up, which land with their branches;
3. whether TensorFlow (or textual) was imported on that path.

Run: /work/venv/bin/python benchmarks/recommend_speed.py [--runs 7] [--offerings 100000]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.recommend.engine import recommend  # noqa: E402
from advisor.recommend.model import Assumptions, Constraints  # noqa: E402
from benchmarks.recommend_seed import many_rentables, speed_predictor  # noqa: E402
from pricing.model import BillingRule, Rentable  # noqa: E402

RULES = {
    ("aws", "on_demand"): BillingRule("aws", "on_demand", 1, 60, None, None, 0.0, "AWS"),
    ("aws", "spot"): BillingRule("aws", "spot", 1, 60, None, 120, 0.05, "AWS"),
    ("gcp", "on_demand"): BillingRule("gcp", "on_demand", 1, 60, None, None, 0.0, "GCP"),
    ("gcp", "spot"): BillingRule("gcp", "spot", 1, 60, 86_400, 30, 0.05, "GCP"),
}
ONE_CORE_SECONDS = 40 * 3600.0
CONSTRAINTS = Constraints(deadline_seconds=8 * 3600)
ASSUMPTIONS = Assumptions(startup_seconds=20.0, checkpoint_seconds=2.3)

DRIVER = """
import sqlite3, sys, time
start = time.perf_counter()
sys.path.insert(0, {root!r})
from advisor.cli.recommend import show
from advisor.recommend.engine import recommend
from benchmarks.recommend_seed import speed_predictor
from benchmarks.recommend_speed import ASSUMPTIONS, CONSTRAINTS, ONE_CORE_SECONDS, RULES
from pricing.model import Rentable
imported = time.perf_counter()
conn = sqlite3.connect({db!r})
if {query!r} == "per group":
    from benchmarks.recommend_speed import read_cheapest_per_group
    rentables = read_cheapest_per_group(conn, CONSTRAINTS.top)
else:
    rentables = list(map(Rentable._make, conn.execute({query!r}).fetchall()))
loaded = time.perf_counter()
_, predict = speed_predictor(ONE_CORE_SECONDS)
rec = recommend(rentables, predict, RULES, workload="imdb_bilstm", constraints=CONSTRAINTS,
                assumptions=ASSUMPTIONS)
ranked = time.perf_counter()
show(rec, "json")
done = time.perf_counter()
heavy = sorted(m for m in ("tensorflow", "keras", "textual") if m in sys.modules)
print("TIMES", imported - start, loaded - imported, ranked - loaded, done - ranked, heavy,
      file=sys.stderr)
"""


def engine_seconds(rentables: list[Rentable]) -> float:
    _, predict = speed_predictor(ONE_CORE_SECONDS)
    start = time.perf_counter()
    recommend(
        rentables,
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=CONSTRAINTS,
        assumptions=ASSUMPTIONS,
    )
    return time.perf_counter() - start


def write_db(rentables: list[Rentable], path: Path) -> None:
    conn = sqlite3.connect(path)
    columns = ", ".join(Rentable._fields)
    conn.execute(f"CREATE TABLE rentables ({columns})")
    marks = ", ".join("?" * len(Rentable._fields))
    conn.executemany(f"INSERT INTO rentables VALUES ({marks})", rentables)
    conn.execute(f"CREATE INDEX rentables_group ON rentables ({GROUP}, usd_per_hour)")
    conn.commit()
    conn.close()


ALL_ROWS = "SELECT * FROM rentables"
GROUP = (
    "accelerator, accelerator_count, vcpus, cpu_family, provider, pricing, interruptions_per_hour"
)


def read_cheapest_per_group(conn: sqlite3.Connection, top: int) -> list[Rentable]:
    """The ``top`` cheapest offerings of each group of identical machines (an index walk per
    group): all the engine ranks, a proposal for ``pricing.query``."""
    keys = conn.execute(f"SELECT {GROUP} FROM rentables GROUP BY {GROUP}").fetchall()
    match = " AND ".join(f"{column.strip()} IS ?" for column in GROUP.split(","))
    query = f"SELECT * FROM rentables WHERE {match} ORDER BY usd_per_hour LIMIT {top}"
    return [Rentable._make(row) for key in keys for row in conn.execute(query, key)]


def process_seconds(db: Path, query: str) -> tuple[float, list[float], list[str]]:
    code = DRIVER.format(root=str(ROOT), db=str(db), query=query)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    wall = time.perf_counter() - start
    json.loads(result.stdout)
    line = next(x for x in result.stderr.splitlines() if x.startswith("TIMES"))
    parts = line.split(" ", 5)
    return wall, [float(p) for p in parts[1:5]], json.loads(parts[5].replace("'", '"'))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--offerings", type=int, default=100_000)
    args = parser.parse_args()
    rentables = many_rentables(args.offerings)
    cold = engine_seconds(rentables)
    warm = [engine_seconds(rentables) for _ in range(args.runs)]
    print(f"offerings: {len(rentables):,}")
    print(f"engine, first call in the process: {cold * 1000:.0f} ms")
    print(
        f"engine, median of {args.runs}: {statistics.median(warm) * 1000:.0f} ms "
        f"(min {min(warm) * 1000:.0f}, max {max(warm) * 1000:.0f})"
    )
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "rentables.sqlite"
        write_db(rentables, db)
        report("all 100k rows", [process_seconds(db, ALL_ROWS) for _ in range(args.runs)])
        report(
            f"the {CONSTRAINTS.top} cheapest of each group",
            [process_seconds(db, "per group") for _ in range(args.runs)],
        )


def report(label: str, runs: list[tuple[float, list[float], list[str]]]) -> None:
    walls = [r[0] for r in runs]
    phases = [statistics.median(r[1][i] for r in runs) * 1000 for i in range(4)]
    print(
        f"whole process, {label} (start, imports, read rows, rank, print JSON), median of "
        f"{len(runs)}: {statistics.median(walls) * 1000:.0f} ms "
        f"(min {min(walls) * 1000:.0f}, max {max(walls) * 1000:.0f})"
    )
    print(
        "  phases (median ms): imports {:.0f}, read rows {:.0f}, rank {:.0f}, JSON {:.0f}".format(
            *phases
        )
    )
    heavy = sorted({m for r in runs for m in r[2]})
    print(f"  heavy modules imported: {heavy or 'none'}")


if __name__ == "__main__":
    main()
