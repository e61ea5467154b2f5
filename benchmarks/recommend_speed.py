"""How fast is the recommender's engine over 100,000 offerings?

``advisor.recommend.ranker.recommend`` over 100k offerings (the real seed prices cycled over
made-up regions), a hand-built predictor standing in for the estimation layer, medians of several
runs. Three figures: grouping the plain rows into offer groups (``pricing.offers.group_offers``,
what a caller without the price database pays; the database stores the groups ready), the engine
over the groups with the database's stated spot rates, and the engine with the measured spot risk
the service passes (``pricing.spot_risk.shipped_risks()``: a Monte Carlo run per spot group and a
fallback plan for the cheapest), with the clusters of 2-32 machines the service composes of
the groups whose network is published (``advisor.recommend.clusters``). Its first call in a process is what one command pays: the spells
the simulations share are drawn then and kept for the process. The whole command, price database included, is
``benchmarks/recommend_command.py``.

Run: .venv/bin/python benchmarks/recommend_speed.py [--runs 7] [--offerings 100000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.recommend.clusters import clusters  # noqa: E402
from advisor.recommend.ranker import recommend  # noqa: E402
from advisor.recommend.recommendation import MAX_NODES, Assumptions, Constraints  # noqa: E402
from pricing.offers import BillingRule, OfferGroup, group_offers  # noqa: E402
from pricing.spot_risk import SpotRisks, shipped_risks  # noqa: E402
from tests.seed_catalog import many_rentables, speed_predictor  # noqa: E402

RULES = {
    ("aws", "on_demand"): BillingRule("aws", "on_demand", 1, 60, None, None, 0.0, "AWS"),
    ("aws", "spot"): BillingRule("aws", "spot", 1, 60, None, 120, 0.05, "AWS"),
    ("gcp", "on_demand"): BillingRule("gcp", "on_demand", 1, 60, None, None, 0.0, "GCP"),
    ("gcp", "spot"): BillingRule("gcp", "spot", 1, 60, 86_400, 30, 0.05, "GCP"),
}
ONE_CORE_SECONDS = 40 * 3600.0
CONSTRAINTS = Constraints(deadline_seconds=8 * 3600)
ASSUMPTIONS = Assumptions(startup_seconds=20.0, checkpoint_seconds=2.3)


def engine_seconds(groups: list[OfferGroup], risks: SpotRisks | None = None) -> float:
    _, predict = speed_predictor(ONE_CORE_SECONDS)
    start = time.perf_counter()
    recommend(
        groups,
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=CONSTRAINTS,
        assumptions=ASSUMPTIONS,
        spot_risks=risks,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--offerings", type=int, default=100_000)
    args = parser.parse_args()
    rentables = many_rentables(args.offerings)
    grouping = []
    for _ in range(args.runs):
        start = time.perf_counter()
        groups = group_offers(rentables)
        grouping.append(time.perf_counter() - start)
    print(f"offerings: {len(rentables):,} in {len(groups)} groups")
    print(f"group_offers, median of {args.runs}: {statistics.median(grouping) * 1000:.0f} ms")
    composing = []
    for _ in range(args.runs):
        start = time.perf_counter()
        composed = clusters(groups, MAX_NODES)
        composing.append(time.perf_counter() - start)
    members = sum(map(len, composed))
    print(
        f"clusters of 2-{MAX_NODES} machines: {members:,} in {len(composed)} groups, composed in "
        f"{statistics.median(composing) * 1000:.0f} ms (median of {args.runs})"
    )
    risks = shipped_risks()
    for name, table in (("measured spot risk", risks), ("stated rates", None)):
        cold = engine_seconds(groups + composed, table)
        warm = [engine_seconds(groups + composed, table) for _ in range(args.runs)]
        print(f"engine, {name}, first call in the process: {cold * 1000:.0f} ms")
        print(
            f"engine, {name}, median of {args.runs} more: {statistics.median(warm) * 1000:.0f} ms "
            f"(min {min(warm) * 1000:.0f}, max {max(warm) * 1000:.0f})"
        )


if __name__ == "__main__":
    main()
