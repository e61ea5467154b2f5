"""Decompress a response body piece by piece, never more than ``PIECE_BYTES`` at a time.

httpx decompresses each network chunk in one call, so a 64 KB chunk of a gzip bomb becomes tens
of megabytes before anyone can count them. Here the raw body (``Response.iter_raw()``) is
decompressed with ``max_length``: each call yields at most ``PIECE_BYTES`` and keeps the rest of
its input for the next call, so the caller can count and stop after any piece.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

ENCODINGS = ("gzip", "deflate")
"""What we ask servers for (``Accept-Encoding``) and know how to decode."""
PIECE_BYTES = 1024 * 1024

Chunks = Iterator[bytes]


class DecodeError(Exception):
    """A body in an unknown encoding, or one that is not valid in its encoding."""


def decode(raw: Iterable[bytes], encoding: str) -> Chunks:
    """The decoded pieces of ``raw``, sent with ``Content-Encoding: encoding``."""
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        yield from raw
        return
    if encoding in ("gzip", "x-gzip"):
        yield from _inflate(raw, 16 + zlib.MAX_WBITS)
        return
    if encoding == "deflate":
        yield from _inflate(raw, zlib.MAX_WBITS)  # zlib-wrapped, as RFC 9110 says
        return
    raise DecodeError(f"unsupported Content-Encoding {encoding!r}")


def _inflate(raw: Iterable[bytes], wbits: int) -> Chunks:
    inflater = zlib.decompressobj(wbits)
    try:
        for chunk in raw:
            data = chunk
            while data:
                piece = inflater.decompress(data, PIECE_BYTES)
                if piece:
                    yield piece
                data = inflater.unconsumed_tail
        while True:  # input exhausted: drain what the inflater still holds, piece by piece
            piece = inflater.decompress(b"", PIECE_BYTES)
            if not piece:
                break
            yield piece
        tail = inflater.flush()
        if tail:
            yield tail
    except zlib.error as exc:
        raise DecodeError(f"body is not valid compressed data ({exc})") from exc
