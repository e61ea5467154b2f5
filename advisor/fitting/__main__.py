"""Regenerate every fitted file in ``data/``, or check that the shipped ones are what the fits give.

    python -m advisor.fitting [--check] [NAME ...]        (``make refit``, ``make refit-check``)

Each fit reads only committed inputs (published measurements in ``data/``, timed runs in
``benchmarks/results/``) and derives its file's whole text, so ``--check`` is a byte comparison:
it exits 1 naming every file whose shipped text differs from what its fit derives now. A fitted
constant that lives in the code (``CONSTANTS``) is held to its fit the same way, with or without
``--check``: a refit never rewrites code, it says which constant to change.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.locations import shipped_data_dir


@dataclass(frozen=True)
class Fit:
    file: str
    derive: Callable[[], str]
    """The file's whole text, derived now."""


def _calibration() -> str:
    from advisor.fitting import calibrate

    return calibrate.derive()


def _llm() -> str:
    from advisor.fitting import llm_fit

    return llm_fit.derive()


def _kernels() -> str:
    from advisor.fitting import kernels

    return kernels.derive()


def _spot() -> str:
    from advisor.fitting import spot_traces

    return spot_traces.risk_csv(spot_traces.risk_rows(spot_traces.committed_traces()))


def _teardown() -> str:
    from advisor.fitting import teardown

    return teardown.derive()


FITS: dict[str, Fit] = {
    "calibration": Fit("calibration.json", _calibration),
    "llm": Fit("calibration-llm.json", _llm),
    "kernels": Fit("gpu-kernel-fit.json", _kernels),
    "spot": Fit("spot-risk.csv", _spot),
    "teardown": Fit("fit-teardown.json", _teardown),
}
"""Every fitted file in ``data/``, by the name ``python -m advisor.fitting NAME`` takes."""


@dataclass(frozen=True)
class Constant:
    where: str
    shipped: Callable[[], float]
    derive: Callable[[], float]


def _run_spread_shipped() -> float:
    from advisor.estimate.predict import DEFAULT_RUN_LOG_SIGMA

    return DEFAULT_RUN_LOG_SIGMA


def _run_spread() -> float:
    from advisor.fitting import run_spread

    return run_spread.log_sigma()


def _cpu_law_shipped() -> float:
    from advisor.estimate.parameters import PRIOR

    return PRIOR.modern_usl_alpha


def _cpu_law() -> float:
    from advisor.fitting import cpu_law

    return cpu_law.alpha()


CONSTANTS: dict[str, Constant] = {
    "run-spread": Constant(
        "advisor/estimate/predict.py DEFAULT_RUN_LOG_SIGMA", _run_spread_shipped, _run_spread
    ),
    "cpu-law": Constant(
        "advisor/estimate/parameters.py Calibration.modern_usl_alpha", _cpu_law_shipped, _cpu_law
    ),
}
"""Fitted constants kept in the code, by name."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m advisor.fitting", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("names", nargs="*", choices=[[], *FITS, *CONSTANTS], metavar="NAME",
                        help=f"what to refit: {', '.join([*FITS, *CONSTANTS])} (default: all)")  # fmt: skip
    args = parser.parse_args(argv)
    data = shipped_data_dir()
    stale = []
    for name in args.names or [*FITS, *CONSTANTS]:
        if name in CONSTANTS:
            constant = CONSTANTS[name]
            shipped, derived = constant.shipped(), constant.derive()
            same = shipped == derived
            print(f"{name}: {constant.where} = {shipped:g}"
                  + (" as derived" if same else f", its fit gives {derived:g}: change it"))  # fmt: skip
            stale += [] if same else [constant.where]
            continue
        fit = FITS[name]
        path = data / fit.file
        text = fit.derive()
        if args.check:
            same = path.exists() and path.read_text(encoding="utf-8") == text
            print(f"{name}: data/{fit.file} {'as derived' if same else 'DIFFERS from its fit'}")
            stale += [] if same else [fit.file]
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{name}: wrote data/{fit.file}")
    if stale:
        print(f"stale: {', '.join(stale)} (python -m advisor.fitting to refit)", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
