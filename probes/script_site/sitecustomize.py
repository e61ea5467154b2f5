"""Loaded first by the Python of a script under ``advisor probe -- COMMAND`` (its folder leads
``PYTHONPATH``): installs ``advisor.probe``'s hooks, then runs the ``sitecustomize`` this one
hides, if the interpreter has one. advisor's own folder is put last on ``sys.path``, so the
script's packages keep their precedence."""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.environ.get("ADVISOR_PROBE_ROOT", "")
if _ROOT and _ROOT not in sys.path:
    sys.path.append(_ROOT)
try:
    import advisor.probe

    advisor.probe.install()
except Exception as error:  # never stop the user's script
    sys.stderr.write(f"advisor: the step hooks are not installed ({error})\n")

_others = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _others)
if _spec is not None and _spec.loader is not None:
    _module = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_module)
