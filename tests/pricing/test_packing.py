"""Stored offer groups (``pricing.packing``): exact round trips, groups across chunks, and damage
refused in the time its bytes take to read, whatever a header claims."""

from __future__ import annotations

import sqlite3
import time
import warnings
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pricing import database, materialise, packing, query
from pricing.offers import machine_key
from tests.fuzz.strategies import FUZZ

ROW = ("aws", "us-east-1", None, "g4dn.xlarge", 4.0, 16.0, "cascadelake", "T4", 1, 16.0,
       "spot", 0.25, 0.25, 0.0, 0.1, "2026-11-25T00:00:00Z", "skypilot/aws")  # fmt: skip


def _row(n: int, **changed: object) -> tuple:
    row = dict(zip(range(17), ROW, strict=True))
    row[3], row[11] = f"type-{n}\u00e9\x1b", 0.25 + n / 1000
    for index, value in changed.items():
        row[int(index[1:])] = value
    return tuple(row.values())


def test_a_chunk_round_trips_exactly() -> None:
    head = [_row(1), _row(2, f2="us-east-1a", f4=None, f6=None)]
    rest = [_row(3, f7=None, f9=None, f8=0)]
    chunk = packing.Chunk(packing.encode_chunk([(head, rest, False), ([_row(4)], [], False)]))
    assert chunk.heads_rows == [head, [_row(4)]]
    assert chunk.rest() == rest
    assert list(chunk.members) == [3, 1] and list(chunk.prices) == [0.251, 0.252, 0.253, 0.254]


REFUSED_WITHIN = 0.5
"""Seconds a damaged chunk takes at most to be refused or read: marshal's pathology took 4 s for
five bytes; a busy shared machine took 0.13 s for what takes microseconds (0.05 s flaked in CI)."""


@pytest.mark.parametrize(
    "blob",
    [
        b"[" + (2**31 - 1).to_bytes(4, "little"),  # what marshal took 4 s to refuse
        packing.MAGIC + (2**32 - 1).to_bytes(4, "little"),  # 4 billion groups in 8 bytes
        packing.MAGIC + (1).to_bytes(4, "little") + (2**32 - 1).to_bytes(4, "little") * 2,
        b"",
        b"\xde\xad\xbe\xef\x00\xff",
    ],
)
def test_a_header_that_claims_more_than_is_there_is_refused_at_once(blob: bytes) -> None:
    started = time.perf_counter()
    with pytest.raises(packing.Damaged):
        packing.Chunk(blob)
    assert time.perf_counter() - started < REFUSED_WITHIN


@FUZZ
@given(st.data())
def test_any_damage_is_refused_or_read_never_more(data: st.DataObject) -> None:
    """Bytes overwritten, cut or claimed anywhere in a real chunk: a Damaged error or rows of
    the right shape, in milliseconds."""
    blob = bytearray(packing.encode_chunk([([_row(n) for n in range(3)], [_row(9)], False)]))
    at = data.draw(st.integers(0, len(blob) - 1))
    how = data.draw(st.sampled_from(["byte", "cut", "claim"]))
    if how == "byte":
        blob[at] = data.draw(st.integers(0, 255))
    elif how == "cut":
        del blob[at:]
    else:
        blob[at : at + 4] = (2**32 - 1).to_bytes(4, "little")
    started = time.perf_counter()
    try:
        chunk = packing.Chunk(bytes(blob))
        rows = [*(r for head in chunk.heads_rows for r in head), *chunk.rest()]
    except packing.Damaged:
        rows = []
    assert time.perf_counter() - started < REFUSED_WITHIN
    assert all(isinstance(row, tuple) and len(row) == 17 for row in rows)


def _groups(db: object) -> list[tuple[object, list[float], list[tuple]]]:
    return [
        (machine_key(g.first), list(g.prices), [tuple(m) for m in g.members()])
        for g in query.offer_groups(db)  # type: ignore[arg-type]
    ]


def test_groups_larger_than_a_chunk_read_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = database.connect(tmp_path / "prices.sqlite")
    before = _groups(db)
    monkeypatch.setattr(materialise, "CHUNK_ROWS", 3)
    monkeypatch.setattr(materialise, "HEAD_ROWS", 2)
    with db.conn:
        db.conn.execute("BEGIN IMMEDIATE")
        for provider in ("aws", "gcp", "lambda"):
            materialise.write_groups(db, provider)
    chunks = db.conn.execute("SELECT COUNT(*) FROM rentable_groups").fetchone()[0]
    assert chunks > 50  # 285 rows in chunks of 3: groups span chunks
    assert _groups(database.connect(tmp_path / "prices.sqlite")) == before


def test_a_damaged_chunk_skips_its_provider_in_milliseconds(tmp_path: Path) -> None:
    path = tmp_path / "prices.sqlite"
    database.connect(path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "UPDATE rentable_groups SET groups = ? WHERE provider = 'aws'",
            [b"[" + (2**31 - 1).to_bytes(4, "little")],
        )
    db = database.connect(path)
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        groups = query.offer_groups(db)
    assert time.perf_counter() - started < 0.5
    assert groups and {g.first.provider for g in groups} == {"gcp", "lambda"}
    (warning,) = caught
    assert issubclass(warning.category, query.DamagedRow)
    assert "'aws'" in str(warning.message) and "advisor prices refresh" in str(warning.message)
