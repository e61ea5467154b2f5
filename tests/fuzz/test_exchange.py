"""The exchange reader and the probe import on hostile files: a UsageError naming file and line,
or results that are sane (finite, positive, bounded)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from advisor.errors import AdvisorError
from probes import exchange
from probes.validity import problem
from tests.fuzz.strategies import FUZZ, HOSTILE_TEXT, NUMBER_TEXT
from tests.probes.test_history import result

FACTS = ["samples", "validation_samples", "step_s", "step_low", "step_high", "validation_step_s",
         "epoch_overhead_s", "startup_s", "low", "high", "probe_s", "flops_per_sample",
         "parameters", "peak_host_bytes", "logical_cpus", "threads", "threads_per_core",
         "accelerator_memory_gib"]  # fmt: skip


def read(tmp: Path, text: str) -> None:
    path = tmp / "fuzz.csv"
    path.write_text(text, encoding="utf-8")
    try:
        rows = exchange.read_csv(path)
        results = exchange.from_rows(rows, str(path))
    except AdvisorError as exc:
        assert "\n" not in str(exc).strip()
        return
    for row in rows:
        assert 0 < row.value < float("inf")
    for found in results:
        assert problem(found) is None


def export(changes: dict[str, str], value: str | None) -> str:
    rows = exchange.to_rows(result())
    parts = rows[0]["notes"].split("; ")
    rows[0]["notes"] = "; ".join(
        f"{p.split('=')[0]}={changes[p.split('=')[0]]}" if p.split("=")[0] in changes else p
        for p in parts
    )
    if value is not None:
        rows[0]["value"] = value
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=exchange.COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


@FUZZ
@given(
    st.dictionaries(st.sampled_from(FACTS), st.one_of(NUMBER_TEXT, HOSTILE_TEXT), max_size=4),
    st.one_of(st.none(), NUMBER_TEXT),
    st.booleans(),
)
def test_poisoned_exports(tmp_path_factory, changes: dict[str, str], value, bom: bool) -> None:  # type: ignore[no-untyped-def]
    text = export(changes, value)
    read(tmp_path_factory.mktemp("x"), ("\ufeff" if bom else "") + text)


@FUZZ
@given(st.text(max_size=300))
def test_any_text_after_the_header(tmp_path_factory, text: str) -> None:  # type: ignore[no-untyped-def]
    read(tmp_path_factory.mktemp("x"), ",".join(exchange.COLUMNS) + "\n" + text)
