"""The probe's synthetic arrays: the real size, so per-epoch costs are read where the run pays
them (no TensorFlow)."""

from __future__ import annotations

import numpy as np

from probes import data


def test_a_large_tabular_array_is_allocated_at_its_real_size() -> None:
    """100,000 x 300 float32 (120 MB) is under the cap: the steady fit's epochs run over the
    real array, so its shuffling, gathers and iterator set-up are those of the real run."""
    specs = [data.InputSpec((300,), "float32"), data.InputSpec((), "int32", high=10)]
    assert data.rows_for(specs, 100_000, 256, pool=False) == 100_000


def test_past_the_cap_whole_batches_and_the_real_partial_batch_are_kept() -> None:
    specs = [data.InputSpec((4096,), "float32")]  # 16 KiB a row: the 512 MiB cap is 32,768 rows
    rows = data.rows_for(specs, 100_001, 256, pool=False)
    assert rows < 100_001 and rows % 256 == 100_001 % 256


def test_row_count_of_one_input_or_several() -> None:
    x = np.zeros((7, 3), "float32")
    assert data.row_count(x) == 7
    assert data.row_count([x, np.zeros((7,), "int32")]) == 7
