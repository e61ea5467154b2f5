"""Cloud prices: the SQLite price database, its public sources and the billing rules.

A library: no TensorFlow, no textual or rich.
"""
