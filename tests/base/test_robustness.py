"""The robustness cases of ``benchmarks/robustness.py`` that need no TensorFlow, through the
real command line: expected exit codes, no traceback, one error line, no price or probe lost."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "robustness.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("robustness", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["robustness"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_hostile_inputs_fail_cleanly_and_lose_nothing() -> None:
    robustness = load()
    selected = [case for case in robustness.cases() if not case.slow]
    assert len(selected) >= 120  # round three's fast cases included
    outcomes = robustness.run_all(selected)
    wrong = [
        (o.case.name, o.code, o.traceback, o.control, o.formulas, round(o.seconds, 1), o.verified)
        for o in outcomes
        if not (o.ok and o.one_line)
    ]
    assert wrong == []
    assert any(o.case.max_seconds for o in outcomes)  # the loopback refresh cases ran


def test_the_checks_can_fail() -> None:
    """The raw-control and formula detectors see what they must (so 0 means 0)."""
    robustness = load()
    assert robustness._CONTROL.search(b"us-east-1\x1b]0;x\x07")
    assert robustness._CONTROL.search("a\u202eb".encode())
    assert robustness._CONTROL.search("\x9b31m".encode())
    assert not robustness._CONTROL.search(b"us-east-1\\x1b plain\n")
    assert robustness.formula_cells(b"a,b\n=cmd|x,-1.5\n") == 1
    assert robustness.formula_cells(b"a,b\n'=cmd|x,@SUM(1)\n") == 1
    internal = robustness.INTERNAL
    assert internal.search("W0000 00:00:1795645652.01 port.cc:153] oneDNN custom operations")
    assert internal.search("WARNING: All log messages before absl::InitializeLog() is called")
    assert internal.search("advisor: error: /home/a/advisor.sqlite: disk I/O error")
    assert internal.search("{{function_node __wrapped__Mul}} OOM when allocating tensor")
    assert not internal.search("advisor: error: the disk holding /home/a is full (0 bytes free)")


def test_table_is_regenerated_between_its_markers(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    robustness = load()
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# Benchmarks\n\ntext\n")
    monkeypatch.setattr(robustness, "DOC", doc)
    robustness.write_doc("first")
    robustness.write_doc("second")
    text = doc.read_text()
    assert text.count("## Robustness") == 1 and "second" in text and "first" not in text
