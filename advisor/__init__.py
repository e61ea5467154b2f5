"""advisor: measure a training workload, predict its time everywhere, rent the cheapest machine.

The engine (``pricing``, ``probes``, ``advisor.estimate``, ``advisor.recommend``) is a library with
no user-interface imports; ``advisor.cli`` and ``advisor.tui`` only present what it computes.
"""

__version__ = "0.1.0"
