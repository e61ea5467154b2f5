"""Offline fitting: the device model's parameters fitted on published measurements, and checked.

Nothing at run time imports this package: ``advisor.estimate`` reads what it wrote into
``data/`` (``data/calibration.json``, ``data/calibration-llm.json``, ``data/gpu-kernel-fit.json``).
``python -m advisor.fitting`` (``make refit``) regenerates them; ``advisor validate`` is the one
user command that comes here, to hold predictions against measurements.
"""
