"""Data-derivation tools: published sources (a repository's snapshot, a results log) read into the
CSV files of ``data/`` that the fits and the benchmarks read. Each is re-runnable with the source
it names (``python -m advisor.fitting.derive.NAME ...``); none runs at ``make refit``, whose
inputs are the files these write."""
