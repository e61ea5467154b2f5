"""Calibration probes: the workload zoo on TensorFlow, measured in seconds.

Knows TensorFlow and the workloads, nothing of prices. TensorFlow is imported only inside the
functions that build or run a model, so importing this package is cheap.
"""
