"""One printed row of absolute errors as factors, shared by the benchmarks that report them."""

from __future__ import annotations

from typing import Any

HEADER = ("rows", "median", "p90", "worst", "signed%", "fast", "cov80")


def header(width: int, extra: tuple[str, ...] = ()) -> str:
    cells = [f"{'rows':>4}", *(f"{name:>7}" for name in HEADER[1:4]), f"{'signed%':>8}"]
    cells += [f"{'fast':>5}", f"{'cov80':>6}", *(f"{name:>6}" for name in extra)]
    return f"{'':<{width}} " + " ".join(cells)


def row(label: str, width: int, n: int, s: dict[str, Any], coverage: float, *extra: Any) -> str:
    """``label``, the count, median/p90/worst factors, the median signed %, how many were
    predicted too fast, the 80% interval's coverage and ``extra`` cells."""
    cells = [
        f"{n:>4}",
        f"{s['median_factor']:>7}",
        f"{s['p90_factor']:>7}",
        f"{s['worst_factor']:>7}",
        f"{s['median_signed_pct']:>+8}",
        f"{s['too_fast']:>5}",
        f"{coverage:>6}",
        *(f"{value:>6}" for value in extra),
    ]
    return f"{label:<{width}} " + " ".join(cells)
