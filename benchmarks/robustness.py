"""Hostile inputs against the real command line: exit codes, tracebacks and data loss.

    .venv/bin/python benchmarks/robustness.py           # print the table
    .venv/bin/python benchmarks/robustness.py --write   # and regenerate docs/BENCHMARKS.md's table

Every case runs ``python -m advisor ...`` in a subprocess against a copy of one prepared
``ADVISOR_HOME`` (the seed prices, a sane stored probe of ``mlp`` on this machine and one
poisoned stored row of another device), and records the exit code, whether stderr held a
traceback, and whether price or probe rows were lost (counted before and after). Cases marked
``slow`` import TensorFlow; ``tests/base/test_robustness.py`` runs the others.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "BENCHMARKS.md"
START, END = "<!-- robustness:start -->", "<!-- robustness:end -->"
HUGE = "99999999999999999999"
STORED_AT = "2026-06-01T00:00:00+00:00"


@dataclass(frozen=True)
class Case:
    """One hostile input: ``args`` (``{dir}`` is the case's scratch folder), what stdin holds,
    the files to create first (name -> content; ``None`` makes a folder), the exit code expected."""

    name: str
    args: tuple[str, ...]
    expect: int
    stdin: str | bytes | None = None
    files: dict[str, str | bytes | None] = field(default_factory=dict)
    config: str | bytes | None = None
    slow: bool = False
    links: dict[str, str] = field(default_factory=dict)
    """Symbolic links to create: name -> target (inside the scratch folder)."""


@dataclass(frozen=True)
class Outcome:
    case: Case
    code: int
    traceback: bool
    one_line: bool
    lost_prices: int
    lost_probes: int
    seconds: float

    @property
    def ok(self) -> bool:
        return (
            self.code == self.case.expect
            and not self.traceback
            and self.lost_prices == 0
            and self.lost_probes == 0
        )


def _result(created: str = STORED_AT, **facts: str) -> str:
    """An export (exchange CSV) of a sane probe of ``mlp`` on this machine, with ``facts`` of its
    notes replaced by hostile values."""
    from probes import exchange
    from probes.device import fingerprint
    from probes.result import ProbeResult
    from probes.spec import spec_for

    config = spec_for("mlp").config
    step = 0.01
    steps = config.steps_per_epoch * config.epochs
    result = ProbeResult(
        config=config, device=fingerprint(), step_seconds=step, step_interval=(0.009, 0.011),
        validation_step_seconds=0.003, epoch_overhead_seconds=0.05, startup_seconds=2.0,
        predicted_seconds=steps * step, predicted_interval=(steps * 0.009, steps * 0.011),
        samples_per_second=config.batch_size / step, probe_seconds=10.0,
        flops_per_sample=1e6, parameters=100_000, peak_host_bytes=10**8,
        batch_scaling={config.batch_size: step}, created_at=created,
    )  # fmt: skip
    rows = exchange.to_rows(result)
    parts = rows[0]["notes"].split("; ")
    for key, value in facts.items():
        if key == "value":
            rows[0]["value"] = value
            continue
        parts = [f"{key}={value}" if p.startswith(f"{key}=") else p for p in parts]
    rows[0]["notes"] = "; ".join(parts)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=exchange.COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def cases() -> list[Case]:
    rec = ("recommend", "--model", "mlp")
    imp = ("import", "{dir}/in.csv")

    def poisoned(name: str, **facts: str) -> Case:
        return Case(name, imp, 2, files={"in.csv": _result(**facts)})

    return [
        Case("recommend --budget nan", (*rec, "--budget", "nan"), 2),
        Case("recommend --budget inf", (*rec, "--budget", "inf"), 2),
        Case("recommend --budget -inf", (*rec, "--budget", "-inf"), 2),
        Case("recommend --budget 1e400", (*rec, "--budget", "1e400"), 2),
        Case("recommend --budget 0", (*rec, "--budget", "0"), 2),
        Case("recommend --confidence nan", (*rec, "--confidence", "nan"), 2),
        Case("recommend --confidence 1.5", (*rec, "--confidence", "1.5"), 2),
        Case("recommend --epochs 10^20", (*rec, "--epochs", HUGE), 2),
        Case("recommend --samples -5", (*rec, "--samples", "-5"), 2),
        Case("recommend --batch-size 0", (*rec, "--batch-size", "0"), 2),
        Case("recommend --top 10^20", (*rec, "--top", HUGE), 2),
        Case("recommend --max-accelerators nan", (*rec, "--max-accelerators", "nan"), 2),
        Case("recommend --deadline 10^20d", (*rec, "--deadline", HUGE + "d"), 2),
        Case("recommend --deadline 366d", (*rec, "--deadline", "366d"), 2),
        Case("recommend --deadline '1h 30'", (*rec, "--deadline", "1h 30"), 2),
        Case("recommend --deadline of 5000 digits", (*rec, "--deadline", "9" * 5000 + "s"), 2),
        Case("prices --ttl-days nan", ("prices", "--ttl-days", "nan"), 2),
        Case("prices --ttl-days inf", ("prices", "--ttl-days", "inf"), 2),
        Case("prices --ttl-days 0", ("prices", "--ttl-days", "0"), 2),
        Case("prices list --max-price nan", ("prices", "list", "--max-price", "nan"), 2),
        Case("prices list --max-price inf", ("prices", "list", "--max-price", "inf"), 2),
        Case("prices list --limit 10^20", ("prices", "list", "--limit", HUGE), 2),
        Case("prices list --limit 0", ("prices", "list", "--limit", "0"), 2),
        Case("prices list --min-count 1e3", ("prices", "list", "--min-count", "1e3"), 2),
        Case("prices list --limit 3 --json", ("prices", "list", "--limit", "3", "--json"), 0),
        Case("probe --budget nan", ("probe", "--model", "mlp", "--budget", "nan"), 2),
        Case("probe --epochs 1e9", ("probe", "--model", "mlp", "--epochs", "1e9"), 2),
        poisoned("import step_s=0", step_s="0"),
        poisoned("import step_s=1e308", step_s="1e308"),
        poisoned("import step_s=-1", step_s="-1"),
        poisoned("import step_s=inf", step_s="inf"),
        poisoned("import low=nan", low="nan"),
        poisoned("import high=1e308", high="1e308"),
        poisoned("import step_low > step_high", step_low="5", step_high="1"),
        poisoned("import samples=0", samples="0"),
        poisoned("import parameters=10^20", parameters=HUGE),
        poisoned("import value=nan", value="nan"),
        poisoned("import notes without fields", step_s="x; garbage"),
        Case("import binary garbage", imp, 2, files={"in.csv": b"\x00\xff\xfe" * 50}),
        Case("import empty file", imp, 2, files={"in.csv": ""}),
        Case("import a folder", ("import", "{dir}/folder"), 2, files={"folder": None}),
        Case("import a missing file", ("import", "{dir}/missing.csv"), 2),
        Case("import with a UTF-8 BOM", imp, 0, files={"in.csv": "\ufeff" + _result()}),
        Case("import from stdin (-)", ("import", "-"), 0, stdin=_result()),
        Case(
            "import older than stored",
            imp,
            1,
            files={"in.csv": _result(created="2026-01-01T00:00:00+00:00")},
        ),
        Case(
            "import older --replace",
            ("import", "--replace", "{dir}/in.csv"),
            0,
            files={"in.csv": _result(created="2026-01-01T00:00:00+00:00")},
        ),
        Case(
            "validate --reference - (garbage)",
            ("validate", "--reference", "-"),
            2,
            stdin="a,b\n1,2\n",
        ),
        Case(
            "validate --reference folder",
            ("validate", "--reference", "{dir}/f"),
            2,
            files={"f": None},
        ),
        Case("config ttl_days = nan", ("prices",), 1, config="[prices]\nttl_days = nan\n"),
        Case("config ttl_days = inf", ("prices",), 1, config="[prices]\nttl_days = inf\n"),
        Case("config prices = 3", ("prices",), 1, config="prices = 3\n"),
        Case("config not UTF-8", ("prices",), 1, config=b"\xff\xfe[prices]"),
        Case("recommend with a poisoned stored probe", (*rec, "--top", "2"), 0),
        Case(
            "recommend --emit over an existing file",
            (*rec, "--emit", "skypilot", "{dir}/task.yaml"),
            2,
            files={"task.yaml": "keep"},
        ),
        Case(
            "recommend --emit through a symlink",
            (*rec, "--emit", "skypilot", "{dir}/link.yaml"),
            2,
            files={"target": "keep"},
            links={"link.yaml": "target"},
        ),
        Case(
            "recommend --emit into a folder",
            (*rec, "--emit", "skypilot", "{dir}/f"),
            2,
            files={"f": None},
        ),
        Case("recommend --emit a new file", (*rec, "--emit", "skypilot", "{dir}/new.yaml"), 0),
        Case(
            "probe a .keras file of garbage",
            ("probe", "--model", "{dir}/bad.keras", "--samples", "8", "--epochs", "1"),
            1,
            files={"bad.keras": b"PK\x03\x04 not a zip"},
            slow=True,
        ),
    ]


def prepare(home: Path) -> None:
    """The shared starting state: seed prices, a sane probe, a poisoned row of another device."""
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    run = [sys.executable, "-m", "advisor"]
    subprocess.run([*run, "prices", "list", "--limit", "1", "--json"], env=env, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*run, "import", "-"], env=env, input=_result(), text=True, check=True,
                   capture_output=True)  # fmt: skip
    with sqlite3.connect(database(home)) as conn:
        row = conn.execute("SELECT * FROM probe_results").fetchone()
        blob = json.loads(row[-1])
        blob["predicted_interval"] = [1e308, float("nan")]
        conn.execute(
            "INSERT INTO probe_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*row[:5], "poisoned-device", "import:old", "2027-01-01", json.dumps(blob)],
        )


def database(home: Path) -> Path:
    (found,) = home.rglob("advisor.sqlite")
    return found


def counts(home: Path) -> tuple[int, int]:
    with sqlite3.connect(database(home)) as conn:
        prices = conn.execute("SELECT count(*) FROM prices").fetchone()[0]
        probes = conn.execute("SELECT count(*) FROM probe_results").fetchone()[0]
    return int(prices), int(probes)


def run_case(case: Case, base: Path, scratch: Path) -> Outcome:
    home, work = scratch / "home", scratch / "work"
    shutil.copytree(base, home)
    work.mkdir()
    for name, content in case.files.items():
        if content is None:
            (work / name).mkdir()
        elif isinstance(content, bytes):
            (work / name).write_bytes(content)
        else:
            (work / name).write_text(content, encoding="utf-8")
    for name, target in case.links.items():
        (work / name).symlink_to(work / target)
    if case.config is not None:
        config = home / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        data = case.config if isinstance(case.config, bytes) else case.config.encode()
        config.write_bytes(data)
    before = counts(home)
    args = [arg.replace("{dir}", str(work)) for arg in case.args]
    stdin = case.stdin.encode() if isinstance(case.stdin, str) else case.stdin
    env = {**os.environ, "ADVISOR_HOME": str(home), "TF_CPP_MIN_LOG_LEVEL": "3"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "advisor", *args], env=env, cwd=work, input=stdin or b"",
        capture_output=True, timeout=300,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    after = counts(home)
    err = done.stderr.decode("utf-8", errors="replace")
    errors = [line for line in err.splitlines() if line.startswith("advisor: error")]
    return Outcome(
        case, done.returncode, "Traceback (most recent call last)" in err,
        one_line=len(errors) <= 1, lost_prices=max(0, before[0] - after[0]),
        lost_probes=max(0, before[1] - after[1]), seconds=seconds,
    )  # fmt: skip


def run_all(
    selected: list[Case], on_done: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "base"
        prepare(base)
        outcomes = []
        for number, case in enumerate(selected):
            outcome = run_case(case, base, Path(folder) / f"case{number}")
            outcomes.append(outcome)
            if on_done is not None:
                on_done(outcome)
        return outcomes


def table(outcomes: list[Outcome]) -> str:
    lines = [
        "| input | expected exit | exit | traceback | error lines | prices lost | probes lost | ok |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        lines.append(
            f"| {o.case.name} | {o.case.expect} | {o.code} | {'yes' if o.traceback else 'no'} | "
            f"{'one' if o.one_line else 'several'} | {o.lost_prices} | {o.lost_probes} | "
            f"{'yes' if o.ok else 'NO'} |"
        )
    passed = sum(o.ok for o in outcomes)
    lines.append("")
    lines.append(f"{passed} of {len(outcomes)} cases as expected.")
    return "\n".join(lines)


def write_doc(text: str) -> None:
    doc = DOC.read_text(encoding="utf-8")
    block = f"{START}\n{text}\n{END}"
    if START in doc and END in doc:
        head, rest = doc.split(START, 1)
        doc = head + block + rest.split(END, 1)[1]
    else:
        doc = doc.rstrip("\n") + "\n\n## Robustness\n\n" + _INTRO + "\n\n" + block + "\n"
    DOC.write_text(doc, encoding="utf-8")


_INTRO = (
    "Hostile inputs against the real command line (`benchmarks/robustness.py`, which regenerates "
    "the table between the markers): each runs `python -m advisor ...` against a copy of one "
    "prepared home (seed prices, a sane stored probe, one poisoned stored row), and the table "
    "says the exit code, whether stderr held a traceback, whether the error was one line, and "
    "how many price and probe rows were lost. Exit codes: 0 ok, 1 failure, 2 usage error. "
    "`tests/base/test_robustness.py` runs every case that needs no TensorFlow."
)


def main() -> int:
    write = "--write" in sys.argv[1:]

    def progress(outcome: Outcome) -> None:
        mark = "ok" if outcome.ok else "FAILED"
        print(
            f"{mark:6} {outcome.code:3} {outcome.seconds:5.1f}s  {outcome.case.name}",
            file=sys.stderr,
        )

    outcomes = run_all(cases(), progress)
    text = table(outcomes)
    print(text)
    if write:
        write_doc(text)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
