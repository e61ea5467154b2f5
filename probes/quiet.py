"""TensorFlow without its start-up chatter.

Importing TensorFlow prints a dozen C++ and absl log lines (oneDNN notices, CUDA probing such as
``failed call to cuInit``) that read like failures and, in the app, land on its screen. They are
controlled by environment variables read when the C++ runtime loads, so ``prepare_tensorflow``
must run before the first ``import tensorflow`` or ``import keras`` of a process: every place that
imports them calls it first. ``advisor --verbose`` or ``ADVISOR_VERBOSE=1`` shows the lines again.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

VERBOSE_VARIABLE = "ADVISOR_VERBOSE"

_QUIET = {
    "TF_CPP_MIN_LOG_LEVEL": "3",
    "TF_CPP_MAX_VLOG_LEVEL": "-1",
    "ABSL_MIN_LOG_LEVEL": "3",
    "GRPC_VERBOSITY": "ERROR",
    "GLOG_minloglevel": "3",
}


def verbose_requested() -> bool:
    """Whether ``ADVISOR_VERBOSE`` asks for TensorFlow's own logging."""
    return os.environ.get(VERBOSE_VARIABLE, "").strip().lower() not in {"", "0", "false", "no"}


def prepare_tensorflow(verbose: bool | None = None) -> None:
    """Silence (or, when ``verbose``, leave alone) TensorFlow's logging before it is imported.

    ``verbose`` None reads ``ADVISOR_VERBOSE``. The variables are exported, so child processes
    (thread-scaling runs, the app's probe) inherit the choice. Safe to call many times.
    """
    if verbose is None:
        verbose = verbose_requested()
    if verbose:
        return
    for name, value in _QUIET.items():
        os.environ[name] = value
    for name in ("tensorflow", "absl", "keras", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)
    for module in (r"keras(\..*)?", r"tensorflow(\..*)?", r"absl(\..*)?"):
        warnings.filterwarnings("ignore", module=module)
    try:
        from absl import logging as absl_logging
    except ImportError:  # absl comes with TensorFlow; without it there is nothing to quiet
        return
    absl_logging.set_verbosity(absl_logging.ERROR)
    absl_logging.set_stderrthreshold("error")
    if "tensorflow" not in sys.modules:
        _import_silently()


def _import_silently() -> None:
    """Import TensorFlow with file descriptor 2 closed off: some of its C++ libraries log
    (``All log messages before absl::InitializeLog()``, ``cudart_stub``, ``cuInit``) before
    any of the settings above are read. Its Python errors still raise as usual."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        finally:
            os.dup2(saved, 2)
    except ImportError:
        pass  # the caller's own import says what is missing
    finally:
        os.close(saved)
