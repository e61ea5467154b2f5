"""The Keras backend a probe runs on: the one seam for everything that leans on a framework.

Keras 3 runs the same model on TensorFlow, JAX or PyTorch and picks the backend when it is first
imported (``KERAS_BACKEND``). A probe under one backend measures that backend's training, so the
backend is part of the probe's identity (``Fingerprint.backend``). Everything in ``probes`` that
needs a framework beyond Keras itself asks ``active()`` here: its log quieting, the threads it
computes with, whether it sees a GPU and how much memory it used there, which exceptions mean
"out of memory", its version and the op split of a step (TensorFlow's profiler; elsewhere a
split derived from the model's layers, ``probes.profile.layer_split``). No other module branches
on the backend's name.

Nothing here imports a framework at import time: ``select`` must run before Keras is imported.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import logging
import os
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from advisor import display
from advisor.errors import AdvisorError, UsageError
from probes import teardown

VARIABLE = "KERAS_BACKEND"
VERBOSE_VARIABLE = "ADVISOR_VERBOSE"
"""Shows the frameworks' own log lines (``advisor --verbose``)."""
DEFAULT = "tensorflow"
CALIBRATED = frozenset({"tensorflow"})
"""Backends whose CPU-to-accelerator ratios the shipped calibration was fitted on: a probe under
any other backend predicts other devices with the same ratios, flagged extrapolated."""


class Backend:
    """What a probe needs from one framework. The defaults are the neutral paths: a backend
    overrides only what it does differently."""

    name = ""
    distributions: tuple[str, ...] = ()
    """Installed distributions that carry its version (the first found wins)."""
    split_source = "model layers"
    """Where ``op_split`` takes a step's op-class shares from (``--explain`` and ``--json``)."""
    loggers: tuple[str, ...] = ()

    def extra(self, gpu: bool) -> str:
        """advisor's install extra that brings this backend to a machine (with or without a GPU):
        ``advisor bench`` installs it on the rented nodes."""
        return self.name

    def installed(self) -> bool:
        if self.name in sys.modules:
            return True
        try:
            return importlib.util.find_spec(self.name) is not None
        except (ImportError, ValueError):  # a broken or half-removed install
            return False

    def version(self) -> str:
        """The framework's version, from its ``dist-info`` folder's name (importing neither the
        framework nor ``importlib.metadata``: a stored probe's lookup must stay fast)."""
        for distribution in self.distributions:
            for folder in sys.path:
                pattern = os.path.join(folder or ".", f"{distribution}-*.dist-info")
                for info in glob.glob(pattern):
                    return os.path.basename(info)[len(distribution) + 1 : -len(".dist-info")]
        return "not installed"

    def quiet(self) -> None:
        """Silence the framework's own start-up logging before it is imported."""
        for name in self.loggers:
            logging.getLogger(name).setLevel(logging.ERROR)
        for name in self.loggers:
            warnings.filterwarnings("ignore", module=rf"{name}(\..*)?")

    def threads(self) -> int:
        """Intra-op threads a step computes with."""
        return logical_cpus()

    def limit_threads(self, count: int) -> None:
        """Compute with ``count`` threads: in a fresh process, before Keras is imported. The
        process is kept to ``count`` CPUs, which every framework's thread pools follow."""
        cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if cpus and count < len(cpus):
            os.sched_setaffinity(0, cpus[:count])

    def accelerator_hidden(self) -> bool:
        """True when this process was told to leave the GPUs alone (a CPU-only probe on a GPU
        machine): its fingerprint then names no accelerator."""
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        return visible is not None and visible.strip() in ("", "-1")

    def peak_device_bytes(self) -> int | None:
        """Peak memory allocated on the first GPU (None without one, or when unknown)."""
        return None

    def out_of_memory(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the model or its batch did not fit in memory."""
        return isinstance(exc, MemoryError) or "out of memory" in str(exc).lower()

    def op_split(
        self, model: Any, x: Any, y: Any, batch: int, step_seconds: float | None
    ) -> dict[str, float]:
        """Share of a step by op class (``probes.profile.CLASSES``)."""
        from probes.profile import layer_split

        return layer_split(model)

    def teardown_rates(self) -> teardown.TeardownRates:
        """How often ``fit`` stalls dropping a data iterator (``probes.teardown``): Keras feeds
        NumPy arrays through tf.data only on TensorFlow."""
        return teardown.NO_TEARDOWN


class TensorFlow(Backend):
    name = "tensorflow"
    distributions = ("tensorflow", "tensorflow_cpu", "tf_nightly")
    split_source = "TensorFlow profiler"
    loggers = ("tensorflow", "absl", "keras", "h5py")

    def extra(self, gpu: bool) -> str:
        return "cuda" if gpu else ""  # TensorFlow is advisor's own dependency

    def teardown_rates(self) -> teardown.TeardownRates:
        return teardown.shipped_rates()

    def quiet(self) -> None:
        super().quiet()
        try:
            from absl import logging as absl_logging
        except ImportError:  # absl comes with TensorFlow; without it there is nothing to quiet
            return
        absl_logging.set_verbosity(absl_logging.ERROR)
        absl_logging.set_stderrthreshold("error")
        if "tensorflow" not in sys.modules:
            _import_silently("tensorflow")

    def threads(self) -> int:
        import tensorflow as tf

        return tf.config.threading.get_intra_op_parallelism_threads() or super().threads()

    def limit_threads(self, count: int) -> None:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(count)

    def peak_device_bytes(self) -> int | None:
        import tensorflow as tf

        if not tf.config.list_physical_devices("GPU"):
            return None
        try:
            return int(tf.config.experimental.get_memory_info("GPU:0")["peak"])
        except (ValueError, KeyError):
            return None

    def out_of_memory(self, exc: BaseException) -> bool:
        import tensorflow as tf

        return isinstance(exc, tf.errors.ResourceExhaustedError) or super().out_of_memory(exc)

    def op_split(
        self, model: Any, x: Any, y: Any, batch: int, step_seconds: float | None
    ) -> dict[str, float]:
        from probes.profile import op_split

        return op_split(model, x, y, batch, step_seconds=step_seconds)


class Jax(Backend):
    name = "jax"
    distributions = ("jax",)
    loggers = ("jax", "jax._src", "absl", "keras", "h5py")

    def extra(self, gpu: bool) -> str:
        return "jax-cuda" if gpu else "jax"

    def quiet(self) -> None:
        super().quiet()
        if "jax" not in sys.modules:
            _import_silently("jax")

    def accelerator_hidden(self) -> bool:
        platforms = os.environ.get("JAX_PLATFORMS", "").strip().lower()
        return super().accelerator_hidden() or platforms == "cpu"

    def peak_device_bytes(self) -> int | None:
        import jax

        device = jax.devices()[0]
        if device.platform == "cpu":
            return None
        stats = device.memory_stats() or {}
        peak = stats.get("peak_bytes_in_use")
        return int(peak) if peak is not None else None

    def out_of_memory(self, exc: BaseException) -> bool:
        # XlaRuntimeError (JaxRuntimeError in newer jax) is one class for every runtime failure
        return "RESOURCE_EXHAUSTED" in str(exc) or super().out_of_memory(exc)


class Torch(Backend):
    name = "torch"
    distributions = ("torch",)
    loggers = ("torch", "keras", "h5py")

    def threads(self) -> int:
        import torch

        return int(torch.get_num_threads())

    def limit_threads(self, count: int) -> None:
        super().limit_threads(count)
        import torch

        torch.set_num_threads(count)

    def peak_device_bytes(self) -> int | None:
        import torch

        if not torch.cuda.is_available():
            return None
        return int(torch.cuda.max_memory_allocated())

    def out_of_memory(self, exc: BaseException) -> bool:
        import torch

        error = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
        return isinstance(exc, error) or super().out_of_memory(exc)


BACKENDS: dict[str, Backend] = {b.name: b for b in (TensorFlow(), Jax(), Torch())}
NAMES = tuple(BACKENDS)


def requested() -> str:
    """The backend this process asks for: ``KERAS_BACKEND``, else TensorFlow (a usage error
    for a name advisor cannot probe with)."""
    name = os.environ.get(VARIABLE, "").strip().lower() or DEFAULT
    if name not in BACKENDS:
        raise UsageError(
            f"unknown Keras backend {display.quoted(name)} in {VARIABLE} (expected one of "
            f"{', '.join(NAMES)})"
        )
    return name


def active() -> Backend:
    """The backend of this process (``select`` it first to change it)."""
    return BACKENDS[requested()]


def for_lookup() -> Backend:
    """The backend whose stored probes a command reads: ``active()``, or TensorFlow with one
    warning line when ``KERAS_BACKEND`` names none (only a new probe needs a real name; it
    refuses this one before it starts)."""
    try:
        return active()
    except UsageError as exc:
        warnings.warn(
            f"{exc}; stored probes of the {DEFAULT} backend are read (a new probe would stop here)",
            BackendIgnored,
            stacklevel=2,
        )
        return BACKENDS[DEFAULT]


class BackendIgnored(UserWarning):
    """``KERAS_BACKEND`` names no backend, and a command that only reads went on without it."""


def select(name: str | None = None) -> Backend:
    """Make ``name`` (None: ``KERAS_BACKEND``, else TensorFlow) this process's backend before
    Keras is imported; exported, so child processes (thread scaling, the app's probe) follow.

    Keras fixes its backend at its first import: once it is imported with another backend, a
    different one is refused in one line. So is a backend that is not installed."""
    if name is not None:
        name = name.strip().lower()
        if name not in BACKENDS:
            raise UsageError(
                f"unknown backend {display.quoted(name)} (expected one of {', '.join(NAMES)})"
            )
    chosen = BACKENDS[name or requested()]
    loaded = _loaded_keras_backend()
    if loaded is not None and loaded != chosen.name:
        raise UsageError(
            f"Keras is already imported with the {loaded} backend in this process; "
            f"the {chosen.name} backend needs a fresh process (set {VARIABLE}={chosen.name})"
        )
    if not chosen.installed():
        raise AdvisorError(
            f"the {chosen.name} backend is not installed here (pip install 'advisor[{chosen.name}]')"
        )
    os.environ[VARIABLE] = chosen.name
    return chosen


def calibrated(name: str) -> bool:
    """Whether predictions from a probe under backend ``name`` rest on calibrated ratios."""
    return name in CALIBRATED


def _loaded_keras_backend() -> str | None:
    keras = sys.modules.get("keras")
    if keras is None:
        return None
    try:
        return str(keras.backend.backend())
    except AttributeError:  # a half-imported Keras
        return None


def verbose_requested() -> bool:
    """Whether ``ADVISOR_VERBOSE`` asks for the frameworks' own logging."""
    return os.environ.get(VERBOSE_VARIABLE, "").strip().lower() not in {"", "0", "false", "no"}


def logical_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _import_silently(module: str) -> None:
    """Import ``module`` with file descriptor 2 closed off: some C++ libraries (TensorFlow's,
    XLA's) log (``All log messages before absl::InitializeLog()``, ``cuInit``) before any
    setting is read. Its Python errors still raise at the caller's own import."""
    try:
        with stderr_silenced():
            importlib.import_module(module)
    except ImportError:
        pass  # the caller's own import says what is missing


@contextlib.contextmanager
def stderr_silenced() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null for the block (Python's errors still raise): for
    work that may import TensorFlow under another backend (a Keras layer that needs it, such as
    ``StringLookup``, loaded under JAX), whose C++ start-up lines no setting silences."""
    if verbose_requested():
        yield  # asked to see them
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
