"""The backend without its start-up chatter.

Importing TensorFlow prints a dozen C++ and absl log lines (oneDNN notices, CUDA probing such as
``failed call to cuInit``) that read like failures and, in the app, land on its screen. They are
controlled by environment variables read when the C++ runtime loads (XLA under JAX reads the same
ones), so ``prepare`` must run before the first ``import keras`` of a process: every place that
imports it calls it first. ``advisor --verbose`` or ``ADVISOR_VERBOSE=1`` shows the lines again.
"""

from __future__ import annotations

import os

from probes import backend
from probes.backend import VERBOSE_VARIABLE, verbose_requested

__all__ = ["VERBOSE_VARIABLE", "prepare", "prepare_tensorflow", "verbose_requested"]

_QUIET = {
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_CPP_MAX_VLOG_LEVEL": "-1",
    "ABSL_MIN_LOG_LEVEL": "3",
    "GRPC_VERBOSITY": "ERROR",
    "GLOG_minloglevel": "3",
}


def prepare(verbose: bool | None = None) -> None:
    """Silence (or, when ``verbose``, leave alone) the active backend's logging before it is
    imported (``probes.backend``: TensorFlow's, JAX's or PyTorch's); an active backend that is
    not installed, or that differs from an already imported Keras's, is one ``AdvisorError``.

    ``verbose`` None reads ``ADVISOR_VERBOSE``. The variables are exported, so child processes
    (thread-scaling runs, the app's probe) inherit the choice. Safe to call many times.
    """
    framework = backend.select()  # installed, and not in conflict with an imported Keras
    if verbose is None:
        verbose = verbose_requested()
    if verbose:
        return
    for name, value in _QUIET.items():
        os.environ[name] = value
    framework.quiet()


prepare_tensorflow = prepare
"""The name of ``prepare`` from before other backends: callers not yet renamed."""
