"""The end-to-end benchmark's re-scoring (``benchmarks/end_to_end.py --rescore``): the stored
probes of a finished run predicted again, here without probing or a GPU."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import end_to_end

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def test_the_jax_run_on_the_h200_rows_rescores_within_its_published_bounds() -> None:
    """Probes taken here under JAX predict the nine H200 runs of Keras on JAX (held out), and
    only those: no PyTorch row, no other source; every one within 1.5x (docs/BENCHMARKS.md)."""
    blob = end_to_end.rescore(RESULTS / "end_to_end_jax_h200.json")
    rows = blob["rows"]
    assert len(rows) == 9 and {r["source"] for r in rows} == {"accelerator-check-20261126"}
    assert all(r["held_out"] and r["device"] == "H200 fp32" for r in rows)
    assert max(math.exp(abs(r["log_error"])) for r in rows) < 1.5


def test_a_file_that_is_no_run_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("nope")
    with pytest.raises(SystemExit) as stopped:
        end_to_end.main(["--rescore", str(bad)])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("--rescore: ") and len(err.strip().splitlines()) == 1
