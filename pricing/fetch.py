"""HTTP for the price sources: one client, retries with backoff, errors as one clear line.

Retries on 429, 5xx, timeouts and broken connections (a body cut short counts as broken),
honouring ``Retry-After`` up to a cap. Anything else, or the last failure, raises
``FetchError``, whose message names the URL and what went wrong.

httpx is imported when a refresh runs, not with this module: httpx loads its own command line
(click, rich) on import, and the engine must not pull in a UI library at import time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

from advisor import __version__
from advisor.errors import AdvisorError

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class FetchError(AdvisorError):
    """A source could not be fetched (after retries)."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    """Tries in all, the first included."""
    backoff_seconds: float = 0.5
    """Wait before the second try; doubled for each later one."""
    max_wait_seconds: float = 30.0
    """Cap on one wait, also on a server's Retry-After."""
    timeout_seconds: float = 60.0


def client(timeout_seconds: float = 60.0) -> httpx.Client:
    import httpx

    return httpx.Client(
        timeout=httpx.Timeout(timeout_seconds, connect=10.0),
        follow_redirects=True,
        headers={"User-Agent": f"advisor/{__version__} (+price refresh)"},
    )


def get(
    http: httpx.Client,
    url: str,
    *,
    params: dict[str, str] | None = None,
    policy: RetryPolicy = RetryPolicy(),
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> bytes:
    """The body at ``url``; ``on_bytes(received, total)`` reports download progress."""
    import httpx

    problem = ""
    for attempt in range(policy.attempts):
        if attempt:
            time.sleep(_wait(policy, attempt, problem))
        try:
            with http.stream("GET", url, params=params) as response:
                if response.status_code in RETRY_STATUS:
                    problem = f"HTTP {response.status_code}"
                    retry_after = response.headers.get("Retry-After", "")
                    problem += f" retry-after={retry_after}" if retry_after.isdigit() else ""
                    continue
                if response.status_code >= 400:
                    raise FetchError(f"{url}: HTTP {response.status_code}")
                total = response.headers.get("Content-Length")
                expected = int(total) if total and total.isdigit() else None
                chunks: list[bytes] = []
                received = 0
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    received += len(chunk)
                    if on_bytes:
                        on_bytes(received, expected)
                return b"".join(chunks)
        except httpx.TimeoutException:
            problem = "timed out"
        except httpx.TransportError as exc:  # refused, reset, body cut short
            problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    raise FetchError(f"{url}: {problem} (after {policy.attempts} tries)")


def _wait(policy: RetryPolicy, attempt: int, problem: str) -> float:
    wait = policy.backoff_seconds * 2 ** (attempt - 1)
    if "retry-after=" in problem:
        wait = max(wait, float(problem.rsplit("=", 1)[1]))
    return min(wait, policy.max_wait_seconds)
