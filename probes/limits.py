"""Bounds on what a probe result may hold, shared by every door that takes one in.

They are far beyond any real training run, and close enough that the arithmetic built on a
result (steps x epochs x seconds, costs, quantiles) can never overflow or turn into NaN.
"""

from __future__ import annotations

MAX_EPOCHS = 1_000_000
MAX_BATCH = 10_000_000
MAX_SAMPLES = 10**12
MAX_STEP_SECONDS = 7 * 86_400.0
"""One training step of at most a week: an LLM job's step extrapolated from its proxy to the
2-vCPU CPU it was probed on runs to hours (Llama 3.1 70B's full fine-tune: 10 h, its interval
up to 33 h from a 5 s probe; 405B's about a day), and the probe must still be stored."""
MAX_RUN_SECONDS = 1000 * 365 * 86_400.0
"""A predicted or measured total of at most a thousand years: a transformer's pre-training
predicted for the 2-core CPU it was probed on runs to decades (ViT-B/16's 300 ImageNet epochs:
about 15 years), and the probe must still be stored to be scaled to a GPU."""
MAX_FLOPS_PER_SAMPLE = 1e21
MAX_PARAMETERS = 10**15
MAX_BYTES = 2**60

LLM_PROBE_MEMORY_BYTES = 4 * 2**30
"""The most resident memory an LLM job's probe takes on a CPU (its process's peak), whatever
the model: its proxy is narrowed to fit (``probes.loading.proxy_parameter_cap``)."""
LLM_PROBE_OVERRUN_SECONDS = 5.0
"""How far past its budget an LLM job's probe may end, its process's start and TensorFlow's
included: its proxy is shrunk to be stepped within the budget."""
