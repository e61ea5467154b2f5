"""Cloud prices: the SQLite price database, its public sources and the billing rules.

A library: no TensorFlow, no textual or rich. What the other parts call:

- ``pricing.database.connect(path=None)``: the user's database, migrated, seeded on first use
  from the shipped table (real prices from skypilot-org/skypilot-catalog; see
  ``data/prices-SOURCES.md``).
- ``pricing.query.rentables(db, provider=, region=, accelerator=, pricing=, cpu_only=,
  min_count=, max_count=, max_price=) -> list[Rentable]``: the latest price of every rentable
  machine (GCP GPUs composed with their host); ``rentable_rows()`` is the same, indexed and
  sorted, for a few rows; ``billing_rules(db)``, ``source_status(db, ttl_days)``, ``show()``,
  ``history()``.
- ``pricing.refresh.refresh(db, sources, urls=, progress=, policy=, allow_shrink=) ->
  list[RunReport]``: fetch the public sources (``pricing.sources``), one transaction per source
  and cloud; a catalog that would retire most prices is refused unless ``allow_shrink``. The
  SkyPilot source takes every provider of catalog v8 (``skypilot_catalog.UNITS``).

Inside: ``schema`` (tables and migrations), ``seed``, ``sources/*`` (fetch and parse, never
write), ``observations`` (validation rules), ``ingest`` (store one batch), ``materialise``
(rentables), ``families`` (CPU family of an instance type), ``fetch`` (HTTP with retries and
bounds on size, time and origin), ``inflate`` (bounded decompression), ``shrink`` (when a
refresh must not replace the prices it has).
"""
