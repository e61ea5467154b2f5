"""Calibration probes: a workload's training steps measured here, in seconds.

Knows TensorFlow; what a workload is lives in ``advisor.workloads``; nothing of prices. TensorFlow is imported only inside the
functions that build or run a model, so importing this package is cheap.
"""
