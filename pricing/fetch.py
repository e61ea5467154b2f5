"""HTTP for the price sources: one client, retries with backoff, bounds, errors as one clear line.

Retries on 429, 5xx, timeouts and broken connections (a body cut short counts as broken),
honouring ``Retry-After`` up to a cap. Anything else, or the last failure, raises
``FetchError``, whose message names the URL and what went wrong.

A price source is a stranger on the network, so every download is bounded (``RetryPolicy``):

- size: the body is streamed and counted as it arrives, both as sent (compressed) and once
  decompressed (``pricing.inflate``), and dropped the moment either passes its cap, so a small
  gzip that expands to gigabytes costs one chunk of memory, not gigabytes;
- time: one deadline covers a whole source, retries and pages included (``policy.started()``),
  and never reaches past the deadline of the whole command (``policy.for_command()``). Reads
  wait at most ``stall_seconds`` for a byte, and a watchdog shuts the socket at the deadline, so
  a server that stalls after its headers, or trickles a byte every few seconds, is cut off on
  time (not one read timeout later); ``Retry-After`` is capped by ``max_wait_seconds``;
- place: redirects are followed by hand and only within the origin (scheme, host, port) the
  source was configured with; the same holds for every page URL a source is told to follow.

httpx is imported when a refresh runs, not with this module: httpx loads its own command line
(click, rich) on import, and the engine must not pull in a UI library at import time.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    import httpx

from advisor import __version__
from advisor.errors import AdvisorError
from pricing import inflate

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
MIB = 1024 * 1024


class FetchError(AdvisorError):
    """A source could not be fetched (after retries), or broke one of the bounds."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try a source, and how much of it to accept."""

    attempts: int = 4
    """Tries in all, the first included."""
    backoff_seconds: float = 0.5
    """Wait before the second try; doubled for each later one."""
    max_wait_seconds: float = 10.0
    """Cap on one wait, also on a server's Retry-After (``Retry-After: 99999`` waits this)."""
    timeout_seconds: float = 60.0
    """Longest wait for one connection or one read."""
    stall_seconds: float = 30.0
    """Longest a body may go without a byte once a read started (a stall after the headers)."""
    deadline_seconds: float = 300.0
    """Time for a whole source, retries and pages included. Azure Retail answers in a few
    hundred pages of about a second each, so two minutes would cut off a healthy refresh.
    Checked before each try and after each chunk; one read waits at most ``timeout_seconds``
    (less when the deadline is nearer as a request starts), so a stalled or trickling server
    is cut off at the deadline or at most one read timeout after it."""
    max_download_bytes: int = 100 * MIB
    """Cap on one response as sent. The largest public catalog (SkyPilot's AWS vms.csv) is a
    few tens of MB uncompressed."""
    max_body_bytes: int = 200 * MIB
    """Cap on one response once decompressed: what is parsed and held in memory."""
    max_page_bytes: int = 32 * MIB
    """Cap on one page read whole into memory and parsed as JSON (an Azure or GCP page is well
    under a megabyte, AWS's spot advisor file a few): JSON costs several times its size once
    parsed, so this, not ``max_body_bytes``, bounds a JSON source's memory."""
    command_deadline_seconds: float = 900.0
    """Time for a whole refresh, every source included (``[refresh] command_deadline_seconds``):
    four stalled sources do not add their deadlines up."""
    command_deadline_at: float | None = None
    """``time.monotonic()`` at which the whole command must stop; set by ``for_command``."""
    deadline_at: float | None = None
    """``time.monotonic()`` at which the current source must stop; set by ``started``."""
    origin: str | None = None
    """``scheme://host:port`` every request and redirect of the current source must stay on."""

    def for_command(self) -> RetryPolicy:
        """This policy for one whole refresh: the command's deadline runs from now."""
        return replace(self, command_deadline_at=time.monotonic() + self.command_deadline_seconds)

    def started(self, url: str) -> RetryPolicy:
        """This policy for one source at ``url``: its deadline runs from now (and ends with the
        command's, if that comes first), on its origin."""
        deadline = time.monotonic() + self.deadline_seconds
        if self.command_deadline_at is not None:
            deadline = min(deadline, self.command_deadline_at)
        return replace(self, deadline_at=deadline, origin=origin_of(url))

    def command_left(self) -> float:
        """Seconds left to the whole command (infinite when no command deadline was started)."""
        if self.command_deadline_at is None:
            return float("inf")
        return self.command_deadline_at - time.monotonic()

    def deadline_text(self) -> str:
        """Which deadline stops the current source: its own, or the command's."""
        if self.command_deadline_at is not None and self.deadline_at == self.command_deadline_at:
            return f"{self.command_deadline_seconds:g} s deadline of the whole refresh"
        return f"{self.deadline_seconds:g} s deadline of this source"

    def remaining(self) -> float:
        """Seconds left before the deadline (the full deadline when none was started)."""
        if self.deadline_at is None:
            return self.deadline_seconds
        return self.deadline_at - time.monotonic()


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url``, the port spelled out (80, 443 by default)."""
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def check_origin(url: str, policy: RetryPolicy, why: str = "asked for") -> None:
    """Raise ``FetchError`` when ``url`` leaves the origin the source was configured with."""
    if policy.origin is not None and origin_of(url) != policy.origin:
        raise FetchError(f"{why} {url}, outside the configured origin {policy.origin}; refused")


def client(timeout_seconds: float = 60.0) -> httpx.Client:
    import httpx

    return httpx.Client(
        timeout=httpx.Timeout(timeout_seconds, connect=10.0),
        follow_redirects=False,  # followed by hand in get(), within the source's origin
        headers={
            "User-Agent": f"advisor/{__version__} (+price refresh)",
            "Accept-Encoding": ", ".join(inflate.ENCODINGS),
        },
    )


def get(
    http: httpx.Client,
    url: str,
    *,
    params: dict[str, str] | None = None,
    policy: RetryPolicy = RetryPolicy(),
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> bytes:
    """The body at ``url``, held in memory: for a JSON page, so at most ``max_page_bytes``;
    ``on_bytes(received, total)`` reports download progress."""
    paged = replace(policy, max_body_bytes=min(policy.max_body_bytes, policy.max_page_bytes))
    with get_file(http, url, params=params, policy=paged, on_bytes=on_bytes) as body:
        return body.read()


SPOOL_BYTES = 4 * MIB
"""A body larger than this waits on disk, not in memory, until it is parsed."""


@contextmanager
def get_file(
    http: httpx.Client,
    url: str,
    *,
    params: dict[str, str] | None = None,
    policy: RetryPolicy = RetryPolicy(),
    on_bytes: Callable[[int, int | None], None] | None = None,
) -> Iterator[IO[bytes]]:
    """The decoded body at ``url`` as a file read from its start, spooled to a temporary file
    past ``SPOOL_BYTES``: a catalog of any size is parsed as a stream in bounded memory, and a
    retry starts a fresh file rather than appending to half a body."""
    import httpx

    check_origin(url, policy)
    problem = ""
    for attempt in range(policy.attempts):
        if attempt:
            time.sleep(max(0.0, min(_wait(policy, attempt, problem), policy.remaining())))
        left = policy.remaining()
        if left <= 0:
            raise FetchError(
                f"{url}: stopped at the {policy.deadline_text()}"
                + (f" ({problem})" if problem else "")
            )
        read = min(policy.timeout_seconds, policy.stall_seconds, left)
        timeout = httpx.Timeout(read, connect=min(10.0, left))
        with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as body:
            try:
                _get_once(http, url, params, policy, timeout, on_bytes, body)
            except _Retry as retry:
                problem = str(retry)
                continue
            except httpx.TimeoutException:
                problem = "timed out"
                continue
            except httpx.TransportError as exc:  # refused, reset, body cut short
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            body.seek(0)
            yield body
            return
    if policy.remaining() <= 0:  # the watchdog cut the last try short
        raise FetchError(f"{url}: stopped at the {policy.deadline_text()} ({problem})")
    raise FetchError(f"{url}: {problem} (after {policy.attempts} tries)")


class _Retry(Exception):
    """An answer worth trying again (429, 5xx)."""


def _get_once(
    http: httpx.Client,
    url: str,
    params: dict[str, str] | None,
    policy: RetryPolicy,
    timeout: httpx.Timeout,
    on_bytes: Callable[[int, int | None], None] | None,
    sink: IO[bytes],
) -> None:
    target = url
    for _ in range(MAX_REDIRECTS + 1):
        with http.stream("GET", target, params=params, timeout=timeout) as response:
            status = response.status_code
            if status in REDIRECT_STATUS and "Location" in response.headers:
                target = urljoin(str(response.url), response.headers["Location"])
                check_origin(target, policy, f"{url}: redirected to")
                params = None  # the Location carries its own query
                continue
            if status in RETRY_STATUS:
                retry_after = response.headers.get("Retry-After", "")[:12]
                after = f" retry-after={retry_after}" if retry_after.isdigit() else ""
                raise _Retry(f"HTTP {status}{after}")
            if status >= 400 or status in REDIRECT_STATUS:
                raise FetchError(f"{url}: HTTP {status}")
            with _watchdog(response, policy.remaining()):
                _read(response, url, policy, on_bytes, sink)
            return
    raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _read(
    response: httpx.Response,
    url: str,
    policy: RetryPolicy,
    on_bytes: Callable[[int, int | None], None] | None,
    sink: IO[bytes],
) -> None:
    """The decoded body into ``sink``, stopped as soon as it breaks a size cap or the
    deadline."""
    total = response.headers.get("Content-Length")
    expected = int(total) if total and total.isdigit() else None
    if expected is not None and expected > policy.max_download_bytes:
        raise FetchError(f"{url}: {_too_big(expected, policy.max_download_bytes, 'download')}")
    encoding = response.headers.get("Content-Encoding", "identity")
    size = 0

    def raw() -> inflate.Chunks:
        for chunk in response.iter_raw():
            if response.num_bytes_downloaded > policy.max_download_bytes:
                received = response.num_bytes_downloaded
                raise FetchError(
                    f"{url}: {_too_big(received, policy.max_download_bytes, 'download')}"
                )
            if policy.remaining() <= 0:
                raise FetchError(
                    f"{url}: stopped at the {policy.deadline_text()}, "
                    f"{response.num_bytes_downloaded:,} bytes in"
                )
            if on_bytes:
                on_bytes(response.num_bytes_downloaded, expected)
            yield chunk

    try:
        for piece in inflate.decode(raw(), encoding):
            size += len(piece)
            if size > policy.max_body_bytes:
                raise FetchError(f"{url}: {_too_big(size, policy.max_body_bytes, 'body')}")
            sink.write(piece)
    except inflate.DecodeError as exc:
        raise FetchError(f"{url}: {exc}") from exc


@contextmanager
def _watchdog(response: httpx.Response, seconds: float) -> Iterator[None]:
    """Shut the response's socket after ``seconds``: a read blocked on a trickling server
    returns at once (as a broken body), so the deadline holds to the second, not to the end
    of one more read timeout."""

    def cut() -> None:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        try:
            if isinstance(sock, socket.socket):
                sock.shutdown(socket.SHUT_RDWR)
            else:
                response.close()
        except (OSError, RuntimeError):
            pass  # already closed: the read has ended anyway

    timer = threading.Timer(max(0.0, seconds), cut)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _too_big(size: int, cap: int, what: str) -> str:
    setting = {"download": "max_download_mib", "body": "max_body_mib"}[what]
    state = "decompressed " if what == "body" else ""
    return (
        f"{state}body passed {cap / MIB:g} MiB (at least {size:,} bytes); stopped "
        f"([refresh] {setting} in config.toml raises the cap)"
    )


def _wait(policy: RetryPolicy, attempt: int, problem: str) -> float:
    wait = policy.backoff_seconds * 2 ** (attempt - 1)
    if "retry-after=" in problem:
        wait = max(wait, float(problem.rsplit("=", 1)[1]))
    return min(wait, policy.max_wait_seconds)
