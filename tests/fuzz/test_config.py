"""config.toml on hostile content: a Config with a finite positive TTL, or one AdvisorError."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from advisor import config, locations
from advisor.errors import AdvisorError
from tests.fuzz.strategies import FUZZ

VALUES = st.sampled_from(["7", "0", "-1", "nan", "inf", "-inf", "1e400", "true", '"7"', "[1]",
                          "{ a = 1 }", "7.5", "1979-05-27", "99999999999999999999"])  # fmt: skip


def load(text: str | bytes) -> None:
    path = locations.config_path()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        Path(path).write_bytes(text)
    else:
        Path(path).write_text(text, encoding="utf-8")
    try:
        loaded = config.load()
    except AdvisorError:
        return
    assert math.isfinite(loaded.prices_ttl_days) and loaded.prices_ttl_days > 0
    assert all(isinstance(v, str) for v in loaded.source_urls.values())


@FUZZ
@given(
    VALUES,
    st.sampled_from(["prices", "sources", "other"]),
    st.sampled_from(["ttl_days", "skypilot_url"]),
)
def test_tables_and_values(value: str, table: str, key: str) -> None:
    load(f"[{table}]\n{key} = {value}\n")


@FUZZ
@given(st.one_of(st.text(max_size=80), st.binary(max_size=40)))
def test_any_content(text: str | bytes) -> None:
    load(text)


@FUZZ
@given(VALUES)
def test_top_level_keys(value: str) -> None:
    load(f"prices = {value}\n")
