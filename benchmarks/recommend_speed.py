"""How fast is the recommender's engine over 100,000 offerings?

``advisor.recommend.ranker.recommend`` over 100k offerings (the real seed prices cycled over
made-up regions), a hand-built predictor standing in for the estimation layer, medians of several
runs. Two figures: grouping the plain rows into offer groups (``pricing.offers.group_offers``,
what a caller without the price database pays; the database stores the groups ready), and the
engine over the groups. The whole command, price database included, is
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

from advisor.recommend.ranker import recommend  # noqa: E402
from advisor.recommend.recommendation import Assumptions, Constraints  # noqa: E402
from benchmarks.recommend_seed import many_rentables, speed_predictor  # noqa: E402
from pricing.offers import BillingRule, OfferGroup, group_offers  # noqa: E402

RULES = {
    ("aws", "on_demand"): BillingRule("aws", "on_demand", 1, 60, None, None, 0.0, "AWS"),
    ("aws", "spot"): BillingRule("aws", "spot", 1, 60, None, 120, 0.05, "AWS"),
    ("gcp", "on_demand"): BillingRule("gcp", "on_demand", 1, 60, None, None, 0.0, "GCP"),
    ("gcp", "spot"): BillingRule("gcp", "spot", 1, 60, 86_400, 30, 0.05, "GCP"),
}
ONE_CORE_SECONDS = 40 * 3600.0
CONSTRAINTS = Constraints(deadline_seconds=8 * 3600)
ASSUMPTIONS = Assumptions(startup_seconds=20.0, checkpoint_seconds=2.3)


def engine_seconds(groups: list[OfferGroup]) -> float:
    _, predict = speed_predictor(ONE_CORE_SECONDS)
    start = time.perf_counter()
    recommend(
        groups,
        predict,
        RULES,
        workload="imdb_bilstm",
        constraints=CONSTRAINTS,
        assumptions=ASSUMPTIONS,
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
    cold = engine_seconds(groups)
    warm = [engine_seconds(groups) for _ in range(args.runs)]
    print(f"offerings: {len(rentables):,} in {len(groups)} groups")
    print(f"group_offers, median of {args.runs}: {statistics.median(grouping) * 1000:.0f} ms")
    print(f"engine, first call in the process: {cold * 1000:.0f} ms")
    print(
        f"engine, median of {args.runs}: {statistics.median(warm) * 1000:.0f} ms "
        f"(min {min(warm) * 1000:.0f}, max {max(warm) * 1000:.0f})"
    )


if __name__ == "__main__":
    main()
