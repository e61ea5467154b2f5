"""Messages the app's workers post back to the interface (past tense: something happened)."""

from __future__ import annotations

from typing import Any

from textual.message import Message


class ProbeProgressed(Message):
    """A probe measured more steps."""

    def __init__(self, event: Any) -> None:
        super().__init__()
        self.event = event


class ProbeFinished(Message):
    """A probe ended: ``result`` is set on success, ``error`` on failure or cancellation."""

    def __init__(self, result: Any = None, error: str | None = None) -> None:
        super().__init__()
        self.result = result
        self.error = error


class RecommendationReady(Message):
    """A recommendation was computed; ``payload`` follows the ``recommend --json`` contract."""

    def __init__(
        self, rec: Any, payload: dict[str, Any], explanations: dict[int, list[str]]
    ) -> None:
        super().__init__()
        self.rec = rec
        self.payload = payload
        self.explanations = explanations


class RecommendationFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
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

    def __init__(self, reports: list[Any], error: str | None = None) -> None:
        super().__init__()
        self.reports = reports
        self.error = error
