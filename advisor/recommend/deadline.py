"""Durations as people type them: ``8h``, ``90m``, ``2d``, ``1h30m``, ``45s``, ``1d12h``.

A duration is one or more whole-number parts, each a number and a unit (``d``, ``h``, ``m``,
``s``), units in descending order and each at most once. ``format_duration`` writes the canonical
form back (``90m`` reads as 5400 s and is written ``1h30m``).
"""

from __future__ import annotations

import re

from advisor import display
from advisor.errors import UsageError

MAX_SECONDS = 365 * 86_400
"""The longest duration accepted: a year."""
UNITS = (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))
ACCEPTED = "a whole number of days, hours, minutes or seconds, largest unit first: 8h, 90m, 2d, 1h30m, 45s, 1d12h"

_PATTERN = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text: str, *, what: str = "deadline") -> int:
    """Seconds in ``text``, or a usage error that says what is accepted."""
    cleaned = text.strip().lower().replace(" ", "")
    if len(cleaned) > 40:  # no real duration is this long; int() of thousands of digits is slow
        raise UsageError(f"{what} {_short(text)} is not a duration; use {ACCEPTED}")
    match = _PATTERN.fullmatch(cleaned)
    if not cleaned or match is None:
        raise UsageError(f"{what} {_short(text)} is not a duration; use {ACCEPTED}")
    seconds = sum(
        int(part) * size for part, (_, size) in zip(match.groups(), UNITS, strict=True) if part
    )
    if seconds <= 0:
        raise UsageError(f"{what} {text!r} must be longer than zero; use {ACCEPTED}")
    if seconds > MAX_SECONDS:
        raise UsageError(f"{what} {_short(text)} is longer than a year (365d); use a shorter one")
    return seconds


def _short(text: str) -> str:
    """``text`` quoted, cut to 40 characters (a duration of a thousand digits reads as one line)."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def format_duration(seconds: int) -> str:
    """The canonical spelling of a positive whole number of seconds (``5400`` -> ``1h30m``)."""
    if seconds <= 0:
        raise ValueError(f"a duration is positive, not {seconds}")
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def describe_seconds(seconds: float) -> str:
    """A short human reading of a time span: ``42 s``, ``17 min``, ``5.2 h``, ``3.1 d``."""
    return display.duration(seconds)
