"""Bounds on what a probe result may hold, shared by every door that takes one in.

They are far beyond any real training run, and close enough that the arithmetic built on a
result (steps x epochs x seconds, costs, quantiles) can never overflow or turn into NaN.
"""

from __future__ import annotations

MAX_EPOCHS = 1_000_000
MAX_BATCH = 10_000_000
MAX_SAMPLES = 10**12
MAX_STEP_SECONDS = 86_400.0
"""One training step of at most a day."""
MAX_RUN_SECONDS = 10 * 365 * 86_400.0
"""A predicted or measured total of at most ten years."""
MAX_FLOPS_PER_SAMPLE = 1e21
MAX_PARAMETERS = 10**15
MAX_BYTES = 2**60
