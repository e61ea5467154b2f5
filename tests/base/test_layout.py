"""Where things live: tests import the library, never a benchmark script (issue 45)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_no_test_imports_a_benchmark_script() -> None:
    """A benchmark is run as its user runs it (a process of its own); what a test and a
    benchmark share lives in the library or in tests/."""
    files = sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) > 100
    found = {
        str(path.relative_to(ROOT)): name
        for path in files
        for name in _imports(path)
        if name == "benchmarks" or name.startswith("benchmarks.")
    }
    assert found == {}
    others = [p for p in files if p != Path(__file__).resolve()]
    assert not [p for p in others if "sys.path.insert" in p.read_text(encoding="utf-8")]


def test_the_architecture_names_every_module() -> None:
    """docs/ARCHITECTURE.md, "Every module", names each module of the library as it is: none
    missing, none that is gone."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    index = text[text.index("## Every module") :]
    modules = {
        str(path.relative_to(ROOT))
        for package in ("advisor", "probes", "pricing")
        for path in (ROOT / package).rglob("*.py")
    }
    assert len(modules) > 100
    named = set(re.findall(r"^\| `([\w/]+\.py)` \|", index, flags=re.M))
    assert sorted(modules - named) == [] and sorted(named - modules) == []


def test_no_library_function_runs_over_80_lines() -> None:
    """A reader follows a function on one screen or two: every function of the library, from its
    ``def`` to its last line (docstring included), is at most 80 lines."""
    long = []
    for package in ("advisor", "probes", "pricing"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > 80:
                        long.append(f"{path.relative_to(ROOT)}:{node.name} {lines}")
    assert long == []


def test_the_headline_table_holds_short_cells() -> None:
    """docs/BENCHMARKS.md's "Where every figure stands": the figure, its target, the command and
    the date, each cell at most 300 characters (the history is in BENCHMARKS-ARCHIVE.md)."""
    text = (ROOT / "docs" / "BENCHMARKS.md").read_text(encoding="utf-8")
    table = text[text.index("## Where every figure stands") :].split("\n\n")[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 40
    cells = [cell for row in rows for cell in re.split(r"(?<!\\)\|", row.strip("|"))]
    assert max(len(cell.strip()) for cell in cells) <= 300


def test_nothing_cites_a_reference_file_outside_the_repository() -> None:
    """The project's origin kept its reference notes beside the repository (WORKLOADS.md,
    PRICE-SOURCES.md, SPOT.md, reference/README.md); what the code, data and docs take from
    them is written out in docs/SOURCES.md, and cited from there or from the public source."""
    outside = re.compile(r"WORKLOADS\.md|PRICE-SOURCES\.md|SPOT\.md|reference/README\.md|shared/")
    files = [
        path
        for folder in ("advisor", "probes", "pricing", "data", "docs", "tests")
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".md", ".csv")
        and path.name != "BENCHMARKS-ARCHIVE.md"
        and path != Path(__file__).resolve()
    ]
    assert len(files) > 200
    found = [
        str(p.relative_to(ROOT)) for p in files if outside.search(p.read_text(errors="replace"))
    ]
    assert found == []
