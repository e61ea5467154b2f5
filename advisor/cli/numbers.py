"""Numbers from the command line: finite, and within bounds that keep every later step sane.

``click.FloatRange`` accepts ``nan`` and ``inf`` (Python's ``float()`` reads them) and
``click.IntRange`` accepts any size of whole number; both then reach arithmetic that overflows
or compares wrongly. Every numeric option takes one of these types instead: a bad value is a
usage error (one line, exit 2), never a traceback.
"""

from __future__ import annotations

import math
from typing import Any

import click

from advisor.errors import UsageError
from advisor.recommend.staging import parse_size

MAX_COUNT = 10**12
"""Largest whole number any option takes (samples, epochs, limits): far above any real run."""


class FiniteFloat(click.ParamType):
    """A finite float in ``[low, high]`` (``low`` excluded when ``low_open``)."""

    name = "number"

    def __init__(self, low: float | None = None, high: float | None = None, *,
                 low_open: bool = False, high_open: bool = False) -> None:  # fmt: skip
        self.low, self.high = low, high
        self.low_open, self.high_open = low_open, high_open

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float) and math.isfinite(value):
            number = value
        else:
            try:
                number = float(str(value).strip())
            except (TypeError, ValueError, OverflowError):
                self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        low, high = self.low, self.high
        if low is not None and (number < low or (self.low_open and number == low)):
            self.fail(f"{value} must be {'>' if self.low_open else '>='} {low:g}", param, ctx)
        if high is not None and (number > high or (self.high_open and number == high)):
            self.fail(f"{value} must be {'<' if self.high_open else '<='} {high:g}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"FiniteFloat({self.low}, {self.high})"


class BoundedInt(click.ParamType):
    """A whole number in ``[low, high]`` (``high`` defaults to ``MAX_COUNT``)."""

    name = "integer"

    def __init__(self, low: int = 0, high: int = MAX_COUNT) -> None:
        self.low, self.high = low, high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            text = str(value).strip()
            if len(text) > 30:
                self.fail(f"{text[:30]}... is too long to be a count", param, ctx)
            try:
                number = int(text)
            except ValueError:
                self.fail(f"{value!r} is not a whole number", param, ctx)
        if number < self.low:
            self.fail(f"{number} must be >= {self.low}", param, ctx)
        if number > self.high:
            self.fail(f"{number} must be <= {self.high:,}", param, ctx)
        return number

    def __repr__(self) -> str:
        return f"BoundedInt({self.low}, {self.high})"


class Count(BoundedInt):
    """A count as people write it, ``20M``, ``1.5B``, ``500k`` or digits, in ``[low, high]``."""

    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from advisor.workloads.llm_job import count_value

        if isinstance(value, int) and not isinstance(value, bool):
            return super().convert(value, param, ctx)
        text = str(value).strip()
        if len(text) > 30:
            self.fail(f"{text[:30]}... is too long to be a count", param, ctx)
        number = count_value(text)
        if number is None:
            self.fail(f"{value!r} is not a count like 20M, 500k or 20000", param, ctx)
        if not self.low <= number <= self.high:  # said as typed: 1e30, not its 31 digits
            self.fail(f"{text} is not from {self.low:,} to {self.high:,}", param, ctx)
        return number


class Size(click.ParamType):
    """A size in bytes as people write it (``150GB``, ``2TB``, ``500MiB``): see
    ``advisor.recommend.staging.parse_size``."""

    name = "size"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, float):
            return value
        try:
            return parse_size(str(value))
        except UsageError as exc:
            self.fail(str(exc), param, ctx)
