"""Recommendation: join predictions with prices under the user's constraints, and rank. Pure.

``engine.recommend(rentables, predict, rules, ...)`` is the whole decision; ``service`` is the one
module that opens the database and finds (or runs) the probe, then calls it.
"""
