"""Numbers and names as people read them: one module for every table, line and view.

Durations pick the unit that suits them (``42 s``, ``2.4 min``, ``4.1 h``, ``3.1 d``); money keeps
significant digits below a dollar (a one-minute spot run costs ``$0.0012``, and ``$0.00`` would
hide the differences) and says ``<$0.0001`` rather than rounding to nothing. Names that come from
price catalogs (providers, regions, instance types, accelerators) are untrusted: ``plain`` is the
one function every output path (tables, CSV, JSON, ``--explain``, the app, emitted files) passes
them through. It shows control characters as visible escapes (``\\x1b``, ``\\u202e``): C0 and C1
(ESC, OSC, BEL, CSI, backspace), DEL, and the Unicode bidirectional overrides and line
separators that reorder or break what a terminal shows. ``safe_text`` makes rich show the result
literally, and ``csv_cell`` also keeps a spreadsheet from running a cell as a formula.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_MINUTE, _HOUR, _DAY = 60.0, 3_600.0, 86_400.0
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
"""C0, DEL, C1; Arabic letter mark, zero-width and directional marks, line and paragraph
separators, the bidirectional embeddings, overrides and isolates, word joiners, the BOM."""
_FORMULA_START = tuple("=+-@\t\r")
"""What a spreadsheet runs as a formula at the start of a cell (OWASP, CSV injection)."""
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _significant(value: float, digits: int, *, strip: bool = True) -> str:
    """``value`` to ``digits`` significant digits, without exponent (nor trailing zeros, when
    ``strip``)."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{round(value, decimals):.{decimals}f}"
    return text.rstrip("0").rstrip(".") if strip and "." in text else text


def _unit(seconds: float) -> tuple[str, float]:
    if seconds < 90:
        return "s", 1.0
    if seconds < 5_400:
        return "min", _MINUTE
    if seconds < 172_800:
        return "h", _HOUR
    return "d", _DAY


def duration(seconds: float) -> str:
    """``8.7 ms``, ``420 ms``, ``42 s``, ``2.4 min``, ``17 min``, ``4.1 h``, ``3.1 d``; ``never``
    if infinite."""
    if not math.isfinite(seconds):
        return "never"
    if 0 < seconds < 1:
        millis = seconds * 1000
        return f"{_significant(millis, 2) if millis < 10 else f'{millis:.0f}'} ms"
    unit, size = _unit(seconds)
    value = seconds / size
    text = _significant(value, 2) if value < 10 else f"{value:,.0f}"
    return f"{text} {unit}"


def duration_span(low: float, high: float) -> str:
    """``2.4-4.6 min``: both ends in the unit that suits the upper one."""
    if not math.isfinite(low):
        return "never"
    if not math.isfinite(high):
        return f"{duration(low)}-never"
    unit, size = _unit(high)

    def number(seconds: float) -> str:
        value = seconds / size
        return _significant(value, 2, strip=False) if value < 10 else f"{value:,.0f}"

    low_text, high_text = number(low), number(high)
    if low_text == high_text:  # one figure where both ends read the same
        return f"{high_text} {unit}"
    return f"{low_text}-{high_text} {unit}"


MONEY_FLOOR = 0.0001
"""Amounts below this read ``<$0.0001``."""


def money(value: float, *, floor: float = MONEY_FLOOR) -> str:
    """``$1,234.56`` from a dollar up, two significant digits below (``$0.18``, ``$0.0019``),
    ``<$0.0001`` (or ``<$floor``) for what would round to nothing, ``$0.00`` for exactly nothing."""
    if not math.isfinite(value):
        return "never" if value > 0 else "-"
    if value == 0:
        return "$0.00"
    sign, size = ("-", -value) if value < 0 else ("", value)
    if size < floor:
        return f"{sign}<${_significant(floor, 1)}"
    if size >= 0.995:
        return f"{sign}${size:,.2f}"
    return f"{sign}${_significant(size, 2, strip=False)}"


def money_span(low: float, high: float) -> str:
    """``$0.0019-$0.0037``; ``$0.020`` when both ends read the same (a minimum charge);
    ``never`` when the low end is infinite."""
    if not math.isfinite(low):
        return "never"
    low_text, high_text = money(low), money(high) if math.isfinite(high) else "never"
    return high_text if low_text == high_text else f"{low_text}-{high_text}"


def rate(usd_per_hour: float, digits: int = 3) -> str:
    """An hourly price without its dollar sign, to ``digits`` significant digits (``0.178``,
    ``3.67``, ``32.8``, ``0.00018``); whole dollars from 10**digits up."""
    if usd_per_hour >= 10**digits:
        return f"{usd_per_hour:,.0f}"
    return _significant(usd_per_hour, digits)


def count(value: float) -> str:
    """A large count for people: ``670k``, ``1.2M``, ``8.0B``, ``4.0T`` (as written, under 1,000)."""
    for limit, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{_significant(value / limit, 2, strip=False)}{suffix}"
    return f"{value:g}"


def chance(p: float) -> str:
    """A probability as a whole percentage that never claims certainty it lacks: ``>99%``."""
    if p >= 1:
        return "100%"
    if p > 0.99:
        return ">99%"
    if 0 < p < 0.01:
        return "<1%"
    return f"{p:.0%}"


def machine(accelerator: str | None, count: int, vcpus: float | None) -> str:
    """What a machine brings to training: ``T4 x1``, ``16 vCPU`` or ``CPU``."""
    if accelerator:
        return f"{plain(accelerator)} x{count}"
    return f"{vcpus:g} vCPU" if vcpus else "CPU"


def machine_label(
    instance_type: str | None, accelerator: str | None, count: int, vcpus: float | None
) -> str:
    """The machine's essentials in one short cell: ``g4dn.xlarge (T4)``, ``p3.8xlarge (V100
    x4)``, ``n1-standard-4 (4 vCPU)``; a name that is its accelerator's once
    (``tpu-v5litepod-1``)."""
    device = (
        (plain(accelerator) if count == 1 else f"{plain(accelerator)} x{count}")
        if accelerator
        else machine(None, 0, vcpus)
    )
    if not instance_type:
        return device
    name = plain(instance_type)
    return name if accelerator and name == device else f"{name} ({device})"


def ratio(value: float) -> str:
    """How many times as much: ``1.2x``, ``35x``; ``-`` when not a finite positive number."""
    if not (math.isfinite(value) and value > 0):
        return "-"
    return f"{_significant(value, 2)}x" if value < 10 else f"{value:,.0f}x"


def about(seconds: float) -> str:
    """An expected duration, said as one: ``~34 min``; ``never`` when infinite."""
    return duration(seconds) if not math.isfinite(seconds) else f"~{duration(seconds)}"


def ranks(numbers: list[int]) -> str:
    """Ranks as people list them: ``#2, #4-#8, #10``."""
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in spans)


def plain(text: object) -> str:
    """``text`` with every control character shown as a visible escape (``\\x1b``), so a
    terminal escape or a bidi override is read, never run."""
    return _CONTROL.sub(_visible, str(text))


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain_tree(value: object) -> object:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every string ``plain``."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, dict):
        return {plain(key): plain_tree(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_tree(item) for item in value]
    return value


def csv_cell(value: object) -> object:
    """A CSV cell: numbers as they are, text ``plain`` and, when a spreadsheet would run it as
    a formula (``=``, ``+``, ``-``, ``@`` first), prefixed with ``'`` as OWASP advises; a
    signed number written as text stays a number."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = plain(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


SHOWN_CHARS = 60
"""Most characters of an outside value an error line quotes (a 100,000-character ``--model``
reads as its start, its end and its length)."""


def cut(text: object, limit: int = SHOWN_CHARS) -> str:
    """``text`` when at most ``limit`` characters, else its two ends around ``...`` and its
    length: ``'aaaa...aa' (100,000 characters)`` reads as one line, whatever was typed."""
    text = str(text)
    return text if len(text) <= limit else _ends(text, limit, len(text))


def quoted(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut as ``cut`` does: how an error line names what the user gave."""
    text = repr(value)
    return text if len(text) <= limit else _ends(text, limit, len(str(value)))


def _ends(text: str, limit: int, length: int) -> str:
    head = max(limit * 2 // 3, 1)
    tail = max(limit - head - 3, 0)
    return f"{text[:head]}...{text[len(text) - tail :] if tail else ''} ({length:,} characters)"


def plain_lines(text: object) -> str:
    """Like ``plain``, keeping line breaks."""
    return "\n".join(plain(line) for line in str(text).split("\n"))


def safe_text(text: object, style: str = "") -> Text:
    """A rich ``Text`` that shows ``text`` literally: no control characters, no markup."""
    from rich.text import Text

    return Text(plain_lines(text), style=style)


def escape(text: object) -> str:
    """``text`` for a place that reads rich markup (Textual ``Static``, DataTable strings)."""
    from rich.markup import escape as markup_escape

    return markup_escape(plain(text))
