"""Recommendation: join predictions with prices under the user's constraints, and rank. Pure."""
