"""Messages the app's workers post back to the interface (past tense: something happened).

Workers never touch widgets: they post one of these, and the app's handlers, on the event loop,
update what is shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from advisor.recommend.recommendation import Recommendation
    from pricing.refresh import RunReport
    from probes.fitting import ProbeProgress
    from probes.result import ProbeResult


class ProbeStarted(Message):
    """No stored probe fits the form: a probe of ``workload`` has started here."""

    def __init__(self, workload: str) -> None:
        super().__init__()
        self.workload = workload


class ProbeProgressed(Message):
    """A probe measured more steps."""

    def __init__(self, event: ProbeProgress) -> None:
        super().__init__()
        self.event = event


class ProbeFinished(Message):
    """A probe ended: ``result`` is set on success, ``error`` on failure or cancellation;
    ``note`` where an LLM job's proxy could not be probed, which the device model ranks alone."""

    def __init__(
        self, result: ProbeResult | None = None, error: str | None = None, note: str = ""
    ) -> None:
        super().__init__()
        self.result = result
        self.error = error
        self.note = note


class RecommendationReady(Message):
    """A recommendation was computed; ``payload`` follows the ``recommend --json`` contract."""

    def __init__(
        self, rec: Recommendation, payload: dict[str, Any], explanations: dict[int, list[str]]
    ) -> None:
        super().__init__()
        self.rec = rec
        self.payload = payload
        self.explanations = explanations


class RecommendationFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class PricesLoaded(Message):
    """The price browser's query ended: rows and source ages, or one error line (the table
    then keeps what it showed)."""

    def __init__(
        self,
        rows: list[dict[str, Any]] | None,
        sources: list[dict[str, str]] | None,
        error: str = "",
    ) -> None:
        super().__init__()
        self.rows = rows
        self.sources = sources
        self.error = error


class RefreshProgressed(Message):
    """A price source reported progress during a refresh."""

    def __init__(self, source: str, done: int, total: int | None, note: str = "") -> None:
        super().__init__()
        self.source = source
        self.done = done
        self.total = total
        self.note = note


class PricesRefreshed(Message):
    """A refresh ended; ``reports`` are the per-source outcomes."""

    def __init__(self, reports: list[RunReport], error: str | None = None) -> None:
        super().__init__()
        self.reports = reports
        self.error = error
