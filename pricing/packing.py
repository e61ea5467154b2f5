"""The byte form of stored offer groups: packed columns in which every count is checked.

``pricing.materialise`` stores each provider's offer groups in chunks (``rentable_groups``) and
``pricing.query`` decodes them on every recommendation, so a damaged chunk must cost what its
bytes cost to read, never what a header claims: each count is checked against the bytes present
before anything is allocated, and a chunk that does not add up raises ``Damaged``
(docs/BENCHMARKS.md, "Robustness, round three"). A chunk::

    b"AGP1" | groups: u32 | members: u32 x groups | head rows: u32 x groups
            | prices: f64 x sum(members) | head block | rest block

A group whose head is 0 rows continues the previous chunk's last group (a group larger than a
chunk). A block is ``rows: u32`` then the 17 columns of ``pricing.offers.Rentable`` in order:
numbers as f64 (NaN for NULL, as SQLite stores no NaN) or i64, text as its distinct values
(``count: u32 | characters: u32 | lengths: u32 x count | UTF-8``) and one u32 index a row
(``count`` for NULL). The head block is decoded with the chunk, the rest when a caller
reaches past a group's head. Numbers are little-endian."""

from __future__ import annotations

import struct
import sys
from array import array
from collections.abc import Sequence
from itertools import accumulate

MAGIC = b"AGP1"
KINDS = "sstsffttifsffffss"
"""Per ``Rentable`` field: ``s`` text, ``t`` text or NULL (zone, CPU family, accelerator),
``f`` f64 or NULL, ``i`` i64."""
_U32 = struct.Struct("<I")
_SWAP = sys.byteorder == "big"


class Damaged(ValueError):
    """Stored bytes that are not a chunk as ``encode_chunk`` writes it."""


def encode_chunk(groups: Sequence[tuple[Sequence[tuple], Sequence[tuple], bool]]) -> bytes:
    """One chunk of ``(head rows, rest rows, continues)`` groups, rows in ``Rentable`` order,
    every group's rows cheapest first; ``continues``: the rows extend the previous chunk's last
    group (its head is then empty, all its rows are rest)."""
    members = array("I", [len(head) + len(rest) for head, rest, _ in groups])
    heads = array("I", [0 if continues else len(head) for head, _, continues in groups])
    prices = array("d")
    for head, rest, _ in groups:
        prices.extend(row[11] for row in head)
        prices.extend(row[11] for row in rest)
    parts = [MAGIC, _U32.pack(len(groups)), _bytes(members), _bytes(heads), _bytes(prices)]
    parts.append(encode_rows([row for head, _, _ in groups for row in head]))
    parts.append(encode_rows([row for _, rest, _ in groups for row in rest]))
    return b"".join(parts)


def encode_rows(rows: Sequence[tuple]) -> bytes:
    """A block of ``rows`` (tuples in ``Rentable`` order)."""
    parts = [_U32.pack(len(rows))]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in KINDS]
    for kind, column in zip(KINDS, columns, strict=True):
        if kind == "i":
            parts.append(_bytes(array("q", column)))
        elif kind == "f":
            parts.append(_bytes(array("d", [_NAN if v is None else v for v in column])))
        else:
            parts.append(_text(column))
    return b"".join(parts)


_NAN = float("nan")


def _text(column: Sequence[str | None]) -> bytes:
    index: dict[str, int] = {}
    for value in column:
        if value is not None and value not in index:
            index[value] = len(index)
    none = len(index)
    values = list(index)
    text = "".join(values).encode("utf-8", "surrogatepass")
    rows = array("I", [none if v is None else index[v] for v in column])
    lengths = array("I", map(len, values))
    return b"".join(
        [_U32.pack(len(values)), _U32.pack(len(text)), _bytes(lengths), text, _bytes(rows)]
    )


def _bytes(packed: array) -> bytes:
    if _SWAP:
        packed = array(packed.typecode, packed)
        packed.byteswap()
    return packed.tobytes()


class Reader:
    """A cursor over stored bytes that refuses to read past their end."""

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data)
        self.at = 0

    def take(self, size: int, what: str) -> memoryview:
        if size < 0 or size > len(self.data) - self.at:
            raise Damaged(f"{what} claims {size:,} bytes, {len(self.data) - self.at:,} present")
        piece = self.data[self.at : self.at + size]
        self.at += size
        return piece

    def u32(self, what: str) -> int:
        return int(_U32.unpack(self.take(4, what))[0])

    def numbers(self, typecode: str, count: int, what: str) -> array:
        packed = array(typecode)
        packed.frombytes(self.take(count * packed.itemsize, what))
        if _SWAP:
            packed.byteswap()
        return packed


class Chunk:
    """A decoded chunk: per group its member count, head rows and prices; rest rows later."""

    def __init__(self, blob: bytes) -> None:
        read = Reader(blob)
        if bytes(read.take(4, "magic")) != MAGIC:
            raise Damaged("not an offer-group chunk (no magic)")
        groups = read.u32("group count")
        self.members = read.numbers("I", groups, "member counts")
        self.heads = read.numbers("I", groups, "head counts")
        if any(m == 0 for m in self.members) or any(
            h > m for h, m in zip(self.heads, self.members, strict=True)
        ):
            raise Damaged("a group of no members, or a head larger than its group")
        if 0 in self.heads[1:]:
            raise Damaged("a continued group after the chunk's first")
        self.prices = read.numbers("d", sum(self.members), "prices")
        head_rows = decode_rows(read, sum(self.heads), "head rows")
        self._rest = read.data[read.at :]
        self._rest_count = sum(self.members) - sum(self.heads)
        self._rest_rows: list[tuple] | None = None
        self.heads_rows: list[list[tuple]] = []
        at = 0
        for head in self.heads:
            self.heads_rows.append(head_rows[at : at + head])
            at += head

    def rest(self) -> list[tuple]:
        """Every group's rest rows, in group order (decoded once; ``Damaged`` if broken)."""
        if self._rest_rows is None:
            read = Reader(self._rest)
            self._rest_rows = decode_rows(read, self._rest_count, "rest rows")
            if read.at != len(read.data):
                raise Damaged(f"{len(read.data) - read.at:,} bytes after the last block")
        return self._rest_rows


def decode_rows(read: Reader, expected: int, what: str) -> list[tuple]:
    """A block of ``expected`` rows read from ``read``."""
    count = read.u32(f"{what} count")
    if count != expected:
        raise Damaged(f"{what}: {count:,} rows where {expected:,} were counted")
    columns: list[list] = []
    for number, kind in enumerate(KINDS):
        where = f"{what}, column {number}"
        if kind == "i":
            columns.append(read.numbers("q", count, where).tolist())
        elif kind == "f":
            values = read.numbers("d", count, where).tolist()
            columns.append([None if v != v else v for v in values])
        else:
            columns.append(_decode_text(read, count, kind == "t", where))
    return list(zip(*columns, strict=True)) if count else []


def _decode_text(read: Reader, count: int, nullable: bool, where: str) -> list:
    distinct = read.u32(f"{where} distinct")
    size = read.u32(f"{where} characters")
    lengths = read.numbers("I", distinct, f"{where} lengths")
    try:
        text = bytes(read.take(size, f"{where} text")).decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise Damaged(f"{where}: text is not UTF-8 ({exc.reason})") from None
    ends = list(accumulate(lengths))
    if (ends[-1] if ends else 0) != len(text):
        raise Damaged(f"{where}: lengths add up to {ends[-1] if ends else 0:,}, not {len(text):,}")
    values: list[str | None] = [text[end - n : end] for n, end in zip(lengths, ends, strict=True)]
    index = read.numbers("I", count, f"{where} index")
    if index and max(index) > (distinct if nullable else distinct - 1):
        raise Damaged(f"{where}: an index past its {distinct:,} values")
    values.append(None)
    return list(map(values.__getitem__, index))
