"""Decision quality: does the predicted cheapest (and fastest) device match the measured one?

    .venv/bin/python benchmarks/decision_quality.py

A scenario is one source x workload x precision that measures the workload on several devices
(the fitted files of ``advisor.fitting.calibrate`` and the hold-out files). Each device is priced from the seed price
database: the cheapest on-demand offering of its accelerator (one of them), or of a CPU VM with
that many vCPUs; devices without a price are left out, and a scenario needs two priced devices.
The slowest measured device is the probe: every other device's time is predicted from its
measurement as a probe on it would be (a device of another kind by the device model alone),
fitted sources by the fit without their publisher, so the prediction never saw the rows it
predicts; hold-out sources by the shipped calibration. The cheapest
(time x price) and the fastest device chosen from predicted times are compared with the choice
from measured times. Reported: the share of scenarios where each choice is right (a device whose
measured cost is within 1% of the cheapest counts as right) and the regret, the extra measured
cost of the predicted-cheapest over the measured-cheapest in %, median and p90.
Targets: right cheapest device in >= 90% of scenarios; median regret <= 5%.
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.fitting.decisions import Option, decide, summary


class Prices:
    """The cheapest on-demand price of a device, from a copy of the seed price database."""

    def __init__(self, directory: Path) -> None:
        from pricing import database

        self.db = database.connect(directory / "prices.sqlite")
        self.cache: dict[tuple[str, int | None], float | None] = {}

    def of(self, device: str, vcpus: int | None) -> float | None:
        key = (device, vcpus)
        if key not in self.cache:
            self.cache[key] = self._lookup(device, vcpus)
        return self.cache[key]

    def _lookup(self, device: str, vcpus: int | None) -> float | None:
        from advisor.errors import UsageError
        from pricing import query
        from pricing.offers import Filters

        if device.upper() == "CPU":
            rows = query.rentable_rows(self.db, Filters(cpu_only=True, pricing="on_demand"))
            prices = [r.usd_per_hour for r in rows if r.vcpus == vcpus]
            return min(prices) if prices else None
        try:
            filters = Filters(accelerator=device, pricing="on_demand", min_count=1, max_count=1)
            rows = query.rentable_rows(self.db, filters, limit=1)
        except UsageError:
            return None  # not an accelerator the price database knows
        return rows[0].usd_per_hour if rows else None


def scenarios(rows, calibration_of, prices: Prices):  # type: ignore[no-untyped-def]
    """Each scenario's options (device, price, measured and predicted seconds per sample)."""
    from advisor.fitting.validate import evaluate

    groups = defaultdict(list)
    for row in rows:
        groups[(row.source, row.workload, row.precision)].append(row)
    found = {}
    for key, members in sorted(groups.items()):
        priced = [r for r in members if prices.of(r.device, r.vcpus) is not None]
        pairs, _ = evaluate(priced, calibration_of(key[0]))
        if not pairs:
            continue
        by_label = {r.label: r for r in priced}
        probe = max(
            {p.source_label for p in pairs},
            key=lambda label: _seconds(by_label[label]),
        )
        options = [
            Option(probe, _price(prices, by_label[probe]), *(2 * [_seconds(by_label[probe])]))
        ]
        for pair in pairs:
            if pair.source_label != probe:
                continue
            target = by_label[pair.target_label]
            actual = _seconds(target)
            options.append(
                Option(pair.target_label, _price(prices, target), actual,
                       actual * math.exp(pair.log_error))
            )  # fmt: skip
        if len(options) >= 2:
            found[key] = options
    return found


def _seconds(row) -> float:  # type: ignore[no-untyped-def]
    from advisor.workloads import zoo

    return float(row.seconds_per_sample(zoo.get(row.workload).samples))


def _price(prices: Prices, row) -> float:  # type: ignore[no-untyped-def]
    price = prices.of(row.device, row.vcpus)
    assert price is not None
    return price


def main() -> int:
    from advisor.estimate.parameters import shipped_calibration
    from advisor.fitting import calibrate
    from advisor.locations import shipped_data_dir
    from advisor.workloads import zoo

    started = time.perf_counter()
    ids = {workload.id for workload in zoo.WORKLOADS}
    data = shipped_data_dir()
    fitted = calibrate.read_rows([data / name for name in calibrate.FIT_FILES])
    reference = [r for r in fitted if r.workload in ids]
    _, _, by_lab = calibrate.leave_one_source_out(reference, shipped_calibration())
    fits = {r.source: by_lab[calibrate.lab(r.source)] for r in reference}
    held = [
        r
        for r in calibrate.read_rows(sorted(data.glob(calibrate.HOLDOUT_PATTERN)))
        if r.workload in ids
    ]

    def calibration_of(source: str):  # type: ignore[no-untyped-def]
        return fits.get(source, shipped_calibration())

    with tempfile.TemporaryDirectory() as directory:
        prices = Prices(Path(directory))
        found = scenarios([*reference, *held], calibration_of, prices)
    decisions = {key: decide(options) for key, options in found.items()}
    print(f"{'scenario':62s} {'devices':>7s} {'chosen':>22s} {'best':>22s} {'regret %':>8s}")
    for key, decision in decisions.items():
        print(
            f"{' / '.join(key):62s} {len(found[key]):>7} {decision.chosen:>22s} "
            f"{decision.best:>22s} {decision.regret_pct:>8.1f}"
        )
    print("\nall:", summary(list(decisions.values())))
    print("fitted files (leave-one-publisher-out):",
          summary([d for k, d in decisions.items() if k[0] in fits]))  # fmt: skip
    print("hold-out files (shipped calibration):",
          summary([d for k, d in decisions.items() if k[0] not in fits]))  # fmt: skip
    print(f"took {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
