"""Which step model of a transformer between GPUs the published BERT rows support.

    PYTHONPATH=. .venv/bin/python benchmarks/transformer_step_variants.py

Each variant changes one thing in the shipped step model, refits the one transformer parameter
(``transformer_traffic_scale``) on lambdal/deeplearning-benchmark and reports in-sample,
leave-one-source-out and held-out figures (NVIDIA DeepLearningExamples, never fitted), as
``benchmarks/transformer_validation.py`` does for the shipped model. The variants are applied by
wrapping what ``advisor.estimate.validate`` evaluates with (the machine of a row, the facts of a
workload, the step's parts); nothing shipped changes. Then leave-one-source-out in each
direction. Writes nothing; takes a few seconds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.estimate import transformer_fit, validate
from advisor.estimate.machine import Machine
from advisor.estimate.published import ReferenceRow, read_reference
from advisor.estimate.steps import Parts, WorkloadFacts
from advisor.locations import shipped

GEFORCE = frozenset({"RTX3090", "RTX4090"})


@contextmanager
def patched(name: str, wrapper: Callable[..., Any]) -> Iterator[None]:
    """``validate.<name>`` wrapped by ``wrapper(original, *args)`` for the duration."""
    original = getattr(validate, name)
    setattr(validate, name, lambda *args: wrapper(original, *args))
    try:
        yield
    finally:
        setattr(validate, name, original)


def _overlapped(power: float) -> Callable[..., Parts]:
    """Compute and memory combined as (c^p + m^p)^(1/p): p = inf is the roofline's max."""

    def parts(
        original: Callable[..., Parts], facts: WorkloadFacts, machine: Machine, *rest: Any
    ) -> Parts:
        p = original(facts, machine, *rest)
        if facts.family != "transformer" or machine.kind != "gpu":
            return p
        if power == float("inf"):
            both = max(p.compute, p.memory)
        else:
            both = (p.compute**power + p.memory**power) ** (1 / power)
        return replace(p, memory=both - p.compute)

    return parts


def _convnet_share(
    original: Callable[..., Machine | None], row: ReferenceRow, calibration: Any
) -> Machine | None:
    machine = original(row, calibration)
    return None if machine is None else replace(machine, matmul_flops=0.0)


def _geforce_full_rate(
    original: Callable[..., Machine | None], row: ReferenceRow, calibration: Any
) -> Machine | None:
    machine = original(row, calibration)
    if machine is None or row.device not in GEFORCE or row.precision != "fp16":
        return machine
    return replace(machine, matmul_flops=2 * machine.matmul_flops)


def _share_without_width(
    original: Callable[..., Machine | None], row: ReferenceRow, calibration: Any
) -> Machine | None:
    machine = original(row, calibration)
    if machine is None or not machine.matmul_flops:
        return machine
    return replace(machine, compute_flops=machine.matmul_flops)


def _no_tokens(original: Callable[..., WorkloadFacts], workload: Any) -> WorkloadFacts:
    return replace(original(workload), tokens=0)


def _both(*managers: AbstractContextManager[None]) -> ExitStack:
    stack = ExitStack()
    for manager in managers:
        stack.enter_context(manager)
    return stack


VARIANTS: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    "shipped: sum, one GEMM share, width x tokens": nullcontext,
    "(a) roofline max instead of the sum": lambda: patched("step_parts", _overlapped(float("inf"))),
    "(a) smooth max, p = 2": lambda: patched("step_parts", _overlapped(2.0)),
    "(b) convnet tensor share (width x tokens)": lambda: patched("machine_of_row", _convnet_share),
    "(b) GeForce fp16 at the full rate": lambda: patched("machine_of_row", _geforce_full_rate),
    "one GEMM share, width in samples": lambda: _both(
        patched("machine_of_row", _share_without_width), patched("facts_of", _no_tokens)
    ),
    "previous: convnet share, width in samples": lambda: patched("facts_of", _no_tokens),
}  # fmt: skip


def _figures(summary: dict[str, float]) -> str:
    return (
        f"{summary['median_abs_pct_error']:5.1f} {summary['p90_abs_pct_error']:5.1f} "
        f"{summary['pairwise_order_accuracy']:.3f} {summary['interval_coverage']:.3f}"
    )


def main() -> int:
    base, factor = transformer_fit.base_calibration()
    fitted = read_reference(shipped(transformer_fit.FIT_FILE))
    held = read_reference(shipped(transformer_fit.HOLDOUT_FILE))
    print("median % / p90 % / order right / 80% covers")
    print(f"{'variant':<46}{'scale':>7}  {'in-sample':<24}{'leave-one-source-out':<24}held out")
    for name, variant in VARIANTS.items():
        with variant():
            report = transformer_fit.validation(fitted, held, base, factor)
        print(
            f"{name:<46}{report['transformer_traffic_scale']:>7.3g}  "
            f"{_figures(report['in_sample']):<24}{_figures(report['leave_one_source_out']):<24}"
            f"{_figures(report['held_out'])}"
        )
    print("\nleave-one-source-out by direction (shipped model)")
    for source in sorted({row.source for row in fitted}):
        others = [row for row in fitted if row.source != source]
        own = [row for row in fitted if row.source == source]
        partial = transformer_fit.with_spread(transformer_fit.fit(others, base), others, factor)
        pairs, _ = validate.evaluate(own, partial)
        print(
            f"{source} predicted by the fit on the other (scale "
            f"{partial.transformer_traffic_scale:.3g}): {_figures(validate.summarise(pairs))}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
