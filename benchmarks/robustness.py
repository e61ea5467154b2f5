"""Hostile inputs against the real command line: exit codes, tracebacks and data loss.

    .venv/bin/python benchmarks/robustness.py           # print the table
    .venv/bin/python benchmarks/robustness.py --write   # and regenerate docs/BENCHMARKS.md's
                                                        # "Robustness, round three" table

Every case runs ``python -m advisor ...`` in a subprocess against a copy of one prepared
``ADVISOR_HOME`` (the seed prices, two hostile catalog rows written through the real ingest
path, a sane stored probe of ``mlp`` on this machine and one poisoned stored row of another
device), and records the exit code, whether stderr held a traceback, whether stdout or stderr
held a raw control character (a terminal escape, a bidi override), whether a CSV cell would run
as a spreadsheet formula, the process's peak memory and time, and whether price or probe rows
were lost (counted before and after). Refresh cases talk to a real HTTP server on 127.0.0.1
that misbehaves on cue (stalls, trickles, loops, bombs). Cases marked ``slow`` import
TensorFlow or take more than ten seconds; ``tests/base/test_robustness.py`` runs the others.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.robustness_four import round_four  # noqa: E402
from benchmarks.robustness_three import round_three  # noqa: E402
from tests.fixtures import disks  # noqa: E402
from tests.fixtures.pricing.server import FixtureServer, Reply  # noqa: E402
from tests.inputs import (  # noqa: E402
    CLAIMS_2_31,
    MEASURED,
    result_csv,
    string_input_model,
)

DOC = ROOT / "docs" / "BENCHMARKS.md"
START, END = "<!-- robustness:start -->", "<!-- robustness:end -->"
THREE = ("<!-- robustness-three:start -->", "<!-- robustness-three:end -->")
THREE_HEADING = "Robustness, round three"
FOUR = ("<!-- robustness-four:start -->", "<!-- robustness-four:end -->")
FOUR_HEADING = "Robustness, round four"
HUGE = "99999999999999999999"


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
    """Imports TensorFlow or takes more than ten seconds: the unit test leaves it out."""
    links: dict[str, str] = field(default_factory=dict)
    """Symbolic links to create: name -> target (inside the scratch folder)."""
    stdout: str = "pipe"
    """``pipe``, ``closed`` (``>&-``) or ``full`` (``> /dev/full``)."""
    stdin_closed: bool = False
    home: str = "copy"
    """``copy`` of the prepared home, ``loop`` (a symlink to itself), ``long`` (5,000
    characters), or a copy on a ``full`` or ``read-only`` disk (``tests/fixtures/disks``)."""
    damage: str | None = None
    """``blob``: a garbage offer-group row; ``middle``: bytes overwritten mid-file; ``claims``:
    every provider's groups but GCP's five bytes that claim 2**31 - 1 items; ``schema``: a table
    dropped by hand; ``version``: a schema version of ``'abc'``."""
    script: dict[str, list[dict]] = field(default_factory=dict)
    """Loopback server replies (path -> ``Reply`` fields); ``{server}`` in args and config."""
    max_seconds: float | None = None
    """The command must end within this (a deadline plus 5 s)."""
    max_rss_mb: float | None = None
    verify: str | None = None
    """SQL on the home's database after the command whose answer must be 0."""
    config_link: str | None = None
    """Make config.toml a symbolic link to this (an endless device)."""
    make: Callable[[Path], None] | None = None
    """Builds a file in the scratch folder first (a model that needs Keras to write)."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables set for the command (``KERAS_BACKEND=garbage``)."""
    says: str | None = None
    """Text stderr must hold (the error line names what it must name)."""
    written: str | None = None
    """A file (``{dir}``) the command must leave behind."""


@dataclass(frozen=True)
class Outcome:
    case: Case
    code: int
    traceback: bool
    one_line: bool
    lost_prices: int
    lost_probes: int
    seconds: float
    control: bool = False
    """A raw control character (C0 but tab and newline, DEL, C1, bidi) on stdout or stderr."""
    formulas: int = 0
    """CSV cells on stdout a spreadsheet would run as a formula."""
    rss_mb: float = 0.0
    verified: bool = True
    internal: bool = False
    """TensorFlow's or SQLite's own text (a C++ log line, ``disk I/O error``) on stderr."""
    long_line: bool = False
    """A line of stderr over 2,000 characters (a value echoed whole)."""

    @property
    def in_time(self) -> bool:
        return self.case.max_seconds is None or self.seconds <= self.case.max_seconds

    @property
    def in_memory(self) -> bool:
        return self.case.max_rss_mb is None or self.rss_mb <= self.case.max_rss_mb

    @property
    def ok(self) -> bool:
        return (
            self.code == self.case.expect
            and not self.traceback
            and self.lost_prices == 0
            and self.lost_probes == 0
            and not self.control
            and self.formulas == 0
            and self.in_time
            and self.in_memory
            and self.verified
            and not self.internal
            and not self.long_line
        )


def cases() -> list[Case]:
    rec = ("recommend", "--model", "mlp")
    imp = ("import", "{dir}/in.csv")

    def poisoned(name: str, **facts: str) -> Case:
        return Case(name, imp, 2, files={"in.csv": result_csv(**facts)})

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
        Case("import with a UTF-8 BOM", imp, 0, files={"in.csv": "\ufeff" + result_csv()}),
        Case("import from stdin (-)", ("import", "-"), 0, stdin=result_csv()),
        Case(
            "import older than stored",
            imp,
            1,
            files={"in.csv": result_csv(created="2026-01-01T00:00:00+00:00")},
        ),
        Case(
            "import older --replace",
            ("import", "--replace", "{dir}/in.csv"),
            0,
            files={"in.csv": result_csv(created="2026-01-01T00:00:00+00:00")},
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
        ),
        *round_two(),
        *round_three(Case),
        *round_four(Case),
    ]


CSV_HOSTILE = ("=cmd|' /C calc'!A0", "@SUM(1+1)\x08\x9b31m")
"""Instance types of the two hostile catalog rows ``prepare`` stores (formula, backspace, CSI)."""
REGION_HOSTILE = "us-east-1\x1b]0;owned\x07\x1b[2J\u202e"
"""Region of the first: an OSC that sets the window title, a clear screen, a bidi override."""
GCP = "/skypilot/gcp/vms.csv"


def _refresh(name: str, expect: int, replies: dict[str, list[dict]], *sources: str,
             refresh: str = "deadline_seconds = 2\nstall_seconds = 1\n", limit: float = 7.0,
             rss: float | None = None, verify: str | None = None, slow: bool = False) -> Case:  # fmt: skip
    """A refresh against the loopback server: ``replies`` script it, ``[refresh]`` sets the
    deadlines; the command must end within ``limit`` (its deadline + 5 s)."""
    config = (
        f'[refresh]\n{refresh}[sources]\nskypilot_url = "{{server}}/skypilot"\n'
        'azure-retail_url = "{server}/azure-retail/loop.json"\n'
    )
    args = ["prices", "refresh", *(["--allow-shrink"] if expect == 0 else [])]
    for source in sources or ("skypilot/gcp",):
        args += ["--source", source]
    return Case(name, tuple(args), expect, config=config, script=replies, max_seconds=limit,
                max_rss_mb=rss, verify=verify, slow=slow)  # fmt: skip


def _catalog(*rows: str) -> bytes:
    fixture = ROOT / "tests" / "fixtures" / "pricing" / GCP.lstrip("/")
    return (fixture.read_text() + "".join(f"{row}\n" for row in rows)).encode()


def _zip(entries: dict[str, bytes], lie: int | None = None) -> bytes:
    """A zip archive; ``lie`` overwrites the unpacked size its central directory states (a bomb
    that declares what it would inflate to, as zip tools do)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    data = bytearray(buffer.getvalue())
    if lie is not None:
        at = data.index(b"PK\x01\x02")
        data[at + 24 : at + 28] = lie.to_bytes(4, "little")
    return bytes(data)


def _validate_rows(count: int, distinct: bool = True, value: str = "1000") -> str:
    """A reference file of ``count`` CPU rows of mlp in one source (distinct runs by batch)."""
    from probes import exchange

    lines = [",".join(exchange.COLUMNS)]
    row = dict.fromkeys(exchange.COLUMNS, "")
    row.update(source="s", workload="mlp", device="CPU", vcpus="8", software="tensorflow-2.16",
               precision="fp32", metric="samples_per_second", value=value)  # fmt: skip
    for n in range(count):
        row["batch_size"] = str(n + 1 if distinct else 32)
        lines.append(",".join(row[c] for c in exchange.COLUMNS))
    return "\n".join(lines) + "\n"


def round_two() -> list[Case]:
    """Issue 22: escapes, formulas, stalls, overwrites, bombs, closed streams, damaged files."""
    rec = ("recommend", "--model", "mlp")
    probe_mlp = ("probe", "--model", "mlp", "--budget", "5")
    keras_args = ("--samples", "8", "--epochs", "1")
    sixty_four_mib_of_lines = gzip.compress(_catalog() + b"\n" * (64 * 1024 * 1024), 9)
    wide = (",".join(f"c{n}" for n in range(200_000)) + "\n").encode()
    loop = b'{"Items": [], "NextPageLink": "{BASE}/azure-retail/loop.json"}'
    return [
        # 1. catalog strings on every output path: no raw control byte, no live formula
        Case("recommend (table) of hostile catalog rows", (*rec, "--top", "3"), 0),
        Case("recommend --csv of hostile catalog rows", (*rec, "--top", "3", "--csv"), 0),
        Case("recommend --json of hostile catalog rows", (*rec, "--top", "3", "--json"), 0),
        Case("recommend --explain of a hostile row", (*rec, "--top", "1", "--explain"), 0),
        Case(
            "prices list --csv of hostile rows", ("prices", "list", "--csv", "--provider", "aws"), 0
        ),
        Case("prices list of hostile rows", ("prices", "list", "--provider", "aws"), 0),
        Case("prices show a hostile instance", ("prices", "show", CSV_HOSTILE[0], "--csv"), 0),
        Case("recommend --emit of a hostile row", (*rec, "--emit", "skypilot", "{dir}/t.yaml"), 0),
        # 2. probe --export follows --emit's rules (the stored mlp probe: no TensorFlow)
        Case(
            "probe --export over an existing file",
            (*probe_mlp, "--export", "{dir}/p.csv"),
            2,
            files={"p.csv": "keep"},
        ),
        Case(
            "probe --export --force over a file",
            (*probe_mlp, "--export", "{dir}/p.csv", "--force"),
            0,
            files={"p.csv": "old"},
        ),
        Case(
            "probe --export through a symlink",
            (*probe_mlp, "--export", "{dir}/link.csv"),
            2,
            files={"target": "keep"},
            links={"link.csv": "target"},
        ),
        Case("probe --export into a missing folder", (*probe_mlp, "--export", "{dir}/no/p.csv"), 2),
        Case("probe --export to /dev/full", (*probe_mlp, "--export", "/dev/full", "--force"), 2),
        Case("probe --export a new file", (*probe_mlp, "--export", "{dir}/new.csv"), 0),
        # 3. refresh: deadlines hold while streaming, loops end, bombs stay small
        _refresh("refresh: 1 byte every 5 s", 1, {GCP: [{"trickle": 5.0}]}),
        _refresh("refresh: stall after the headers", 1, {GCP: [{"stall": 60.0}]}),
        _refresh(
            "refresh: four stalled sources",
            1,
            {
                f"/skypilot/{u}/vms.csv": [{"stall": 60.0}]
                for u in ("gcp", "aws", "azure", "lambda")
            },
            "skypilot/gcp",
            "skypilot/aws",
            "skypilot/azure",
            "skypilot/lambda",
            refresh="deadline_seconds = 20\ncommand_deadline_seconds = 3\nstall_seconds = 30\n",
            limit=8.0,
        ),
        _refresh(
            "refresh: HTTP 429 Retry-After 99999",
            1,
            {GCP: [{"status": 429, "body": b"", "headers": {"Retry-After": "99999"}}]},
        ),
        _refresh("refresh: a header of 200,000 columns", 1, {GCP: [{"body": wide}]}),
        _refresh(
            "refresh: Azure NextPageLink to itself",
            1,
            {"/azure-retail/loop.json": [{"body": loop}]},
            "azure-retail",
        ),
        _refresh(
            "refresh: gzip of 64 MiB of empty lines",
            0,
            {GCP: [{"body": sixty_four_mib_of_lines, "headers": {"Content-Encoding": "gzip"}}]},
            refresh="deadline_seconds = 120\n",
            limit=125.0,
            rss=300.0,
            slow=True,
        ),
        _refresh(
            "refresh: vCPUs 1e308, $1e-320/h, '1_0'",
            0,
            {
                GCP: [
                    {
                        "body": _catalog(
                            "big-1,1e308,30.0,,,,us-central1,us-central1-a,0.38,0.09",
                            "tiny-1,8.0,30.0,,,,us-central1,us-central1-a,1e-320,",
                            "under-1,8.0,30.0,,,,us-central1,us-central1-a,1_0,",
                        )
                    }
                ]
            },
            refresh="deadline_seconds = 20\n",
            limit=25.0,
            verify="SELECT count(*) FROM offerings WHERE vcpus > 4096 OR instance_type IN "
            "('tiny-1', 'under-1', 'big-1')",
        ),
        # 4. model files checked before loading; dates parsed as dates
        Case(
            "probe a .keras zip bomb (3.75 GiB declared)",
            ("probe", "--model", "{dir}/b.keras", *keras_args),
            1,
            files={"b.keras": _zip({"model.weights.h5": b"\0" * 1024}, lie=0xF0000000)},
        ),
        Case(
            "probe a .keras of 1,000 entries",
            ("probe", "--model", "{dir}/m.keras", *keras_args),
            1,
            files={"m.keras": _zip({f"e{n}": b"" for n in range(1000)})},
        ),
        Case(
            "probe a .keras with a ../ entry",
            ("probe", "--model", "{dir}/e.keras", *keras_args),
            1,
            files={"e.keras": _zip({"../../evil": b"x"})},
        ),
        Case(
            "probe a folder named x.keras",
            ("probe", "--model", "{dir}/x.keras", *keras_args),
            2,
            files={"x.keras": None},
        ),
        Case(
            "probe a 10,000-character path",
            ("probe", "--model", "/tmp/" + "m" * 10_000 + ".keras", *keras_args),
            2,
        ),
        Case(
            "probe a model with a string input",
            ("probe", "--model", "{dir}/text.keras", *keras_args),
            1,
            slow=True,
            make=string_input_model,
        ),
        Case(
            "import created_at=not-a-date",
            ("import", "{dir}/in.csv"),
            2,
            files={"in.csv": result_csv(created="not-a-date")},
        ),
        # 5. validate bounds its work
        Case(
            "validate: 5,000 distinct runs (25M pairs)",
            ("validate", "--reference", "{dir}/v.csv"),
            0,
            files={"v.csv": _validate_rows(5_000)},
            max_seconds=60,
            max_rss_mb=600,
        ),
        Case(
            "validate: 60,000 rows (over the 50,000 cap)",
            ("validate", "--reference", "{dir}/v.csv"),
            2,
            files={"v.csv": _validate_rows(60_000, distinct=False)},
            max_rss_mb=300,
        ),
        Case(
            "validate: a row with value 1e300",
            ("validate", "--reference", "{dir}/v.csv", "--json"),
            0,
            files={"v.csv": _validate_rows(3) + _validate_rows(1, value="1e300").split("\n", 1)[1]},
        ),
        # 6. closed and full streams, broken homes and databases
        Case(
            "prices list >&- (stdout closed)",
            ("prices", "list", "--limit", "3"),
            1,
            stdout="closed",
        ),
        Case("prices list > /dev/full", ("prices", "list", "--limit", "3"), 1, stdout="full"),
        Case(
            "prices list --json > /dev/full",
            ("prices", "list", "--limit", "3", "--json"),
            1,
            stdout="full",
        ),
        Case("import - with stdin closed", ("import", "-"), 2, stdin_closed=True),
        Case("config.toml is /dev/zero", ("prices",), 1, config_link="/dev/zero"),
        Case("ADVISOR_HOME a symlink loop", ("prices", "list", "--limit", "1"), 1, home="loop"),
        Case(
            "ADVISOR_HOME of 5,000 characters", ("prices", "list", "--limit", "1"), 1, home="long"
        ),
        Case("database: a garbage offer-group blob", (*rec, "--top", "2"), 0, damage="blob"),
        Case(
            "database: damaged in the middle",
            ("prices", "list", "--limit", "3"),
            1,
            damage="middle",
        ),
        Case("prices history ''", ("prices", "history", ""), 2),
        Case("prices show ' '", ("prices", "show", " "), 2),
    ]


def prepare(home: Path) -> None:
    """The shared starting state: seed prices, a sane probe, a poisoned row of another device."""
    env = {**os.environ, "ADVISOR_HOME": str(home)}
    run = [sys.executable, "-m", "advisor"]
    subprocess.run([*run, "prices", "list", "--limit", "1", "--json"], env=env, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*run, "import", "-"], env=env, input=result_csv(), text=True, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([sys.executable, "-c", _HOSTILE_ROWS], env=env, check=True,
                   capture_output=True, cwd=ROOT)  # fmt: skip
    # closed here, not whenever the collector gets to it: a connection that closes late
    # deletes its -wal and -shm files under a case's copy of this folder (shutil.Error)
    with closing(sqlite3.connect(database(home))) as conn, conn:
        row = conn.execute("SELECT * FROM probe_results").fetchone()
        blob = json.loads(row[-1])
        blob["predicted_interval"] = [1e308, float("nan")]
        conn.execute(
            "INSERT INTO probe_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*row[:5], "poisoned-device", "import:old", "2027-01-01", json.dumps(blob)],
        )


_HOSTILE_ROWS = f"""
from advisor import locations
from pricing import database, ingest, materialise
from pricing.observations import Observation
db = database.connect(locations.database_path())
rows = [
    Observation("aws", {REGION_HOSTILE!r}, "", {CSV_HOSTILE[0]!r}, 8.0, 32.0, "T4", 1, 16.0,
                False, "spot", 0.01),
    Observation("aws", "us-east-1", "", {CSV_HOSTILE[1]!r}, 8.0, 32.0, "T4", 1, 16.0, False,
                "on_demand", 0.02),
]
with db.conn:
    db.conn.execute("BEGIN IMMEDIATE")
    database.load_billing_rules(db)
    materialise.load_hosts(db)
    ingest.write(db, "aws", rows, source="hostile", fetched_at=database.now(), run_id=None)
"""
"""Two catalog rows written through the real ingest path, as a hostile catalog would send."""


def database(home: Path) -> Path:
    (found,) = home.rglob("advisor.sqlite")
    return found


def counts(home: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(database(home))) as conn, conn:
        prices = conn.execute("SELECT count(*) FROM prices").fetchone()[0]
        probes = conn.execute("SELECT count(*) FROM probe_results").fetchone()[0]
    return int(prices), int(probes)


_CONTROL = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa0-\xa9]"
)
"""Raw control characters as UTF-8 bytes: C0 but tab and newline, DEL, C1, zero-width and
bidirectional marks, embeddings, overrides and isolates."""
_FORMULA = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def formula_cells(out: bytes) -> int:
    """CSV cells on ``out`` that a spreadsheet would run as a formula (0 when not CSV)."""
    text = out.decode("utf-8", errors="replace")
    if "," not in text.split("\n", 1)[0]:
        return 0
    try:
        cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    except csv.Error:
        return 0
    return sum(1 for c in cells if c.startswith(_FORMULA) and not _NUMBER.fullmatch(c))


def _home(case: Case, base: Path, scratch: Path) -> Path:
    """The case's ADVISOR_HOME: a copy of the prepared one, a link loop, or a 5,000-char path."""
    scratch.mkdir(parents=True, exist_ok=True)
    if case.home == "loop":
        loop = scratch / "loop"
        loop.symlink_to(loop)
        return loop
    if case.home == "long":
        return scratch / ("h" * 5_000)
    if case.home in ("full", "read-only"):  # mounted there, in the command's own namespace
        disk = scratch / "disk"
        disk.mkdir()
        return disk
    home = scratch / "home"
    shutil.copytree(base, home)
    return home


_DAMAGE = {
    "blob": ("UPDATE rentable_groups SET groups = x'deadbeef00ff' WHERE provider = 'aws'", ()),
    "claims": ("UPDATE rentable_groups SET groups = ? WHERE provider != 'gcp'", (CLAIMS_2_31,)),
    "schema": ("DROP TABLE rentable_groups", ()),
    "version": ("UPDATE schema_versions SET version = 'abc' WHERE component = 'pricing'", ()),
}
"""Damage written with SQL, as a hand (or another program) could."""


def _damage(home: Path, how: str) -> None:
    path = database(home)
    if how in _DAMAGE:
        sql, parameters = _DAMAGE[how]
        with closing(sqlite3.connect(path)) as conn, conn:
            conn.execute(sql, parameters)
        return
    size = path.stat().st_size
    with path.open("r+b") as handle:  # a page in the middle, overwritten
        for at in range(size // 4, size * 3 // 4, 4096 * 3):
            handle.seek(at)
            handle.write(b"\xa5" * 2048)


def run_case(case: Case, base: Path, scratch: Path, server_url: str = "") -> Outcome:
    home, work = _home(case, base, scratch), scratch / "work"
    real = home if case.home == "copy" else None
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
    if case.make is not None:
        case.make(work)
    if real is not None and (case.config is not None or case.config_link):
        config = real / "config" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        if case.config_link:
            config.symlink_to(case.config_link)
        else:
            text = case.config if isinstance(case.config, bytes) else str(case.config).encode()
            config.write_bytes(text.replace(b"{server}", server_url.encode()))
    before = counts(real) if real is not None else (0, 0)
    if real is not None and case.damage:
        _damage(real, case.damage)
    args = [arg.replace("{dir}", str(work)).replace("{server}", server_url) for arg in case.args]
    env = {**os.environ, "ADVISOR_HOME": str(home), "TF_CPP_MIN_LOG_LEVEL": "3", **case.env}
    peak = scratch / "peak"
    command = [sys.executable, "-c", MEASURED, str(peak), *args]
    if case.home in ("full", "read-only"):  # a copy of the home on such a disk, kept after
        real, before = scratch / "kept", counts(base)
        real.mkdir()
        command = disks.on_disk(command, str(home), str(base), case.home, str(real))
    code, out, err, seconds = _run(command, case, env, work)
    rss = float(peak.read_text()) / 1024 if peak.exists() else 0.0
    after = counts(real) if real is not None and not case.damage else before
    text = err.decode("utf-8", "replace")
    errors = [line for line in text.splitlines() if line.startswith("advisor: error")]
    verified = _verify(real, case.verify) and (case.says is None or case.says in text)
    if case.written is not None:
        verified = verified and Path(case.written.replace("{dir}", str(work))).is_file()
    return Outcome(
        case, code, b"Traceback (most recent call last)" in err,
        one_line=len(errors) <= 1, lost_prices=max(0, before[0] - after[0]),
        lost_probes=max(0, before[1] - after[1]), seconds=seconds,
        control=bool(_CONTROL.search(out) or _CONTROL.search(err)),
        formulas=formula_cells(out), rss_mb=rss, verified=verified,
        internal=bool(INTERNAL.search(text)),
        long_line=any(len(line) > 2_000 for line in text.splitlines()),
    )  # fmt: skip


def _verify(home: Path | None, sql: str | None) -> bool:
    if sql is None or home is None:
        return True
    with closing(sqlite3.connect(database(home))) as conn, conn:
        return bool(conn.execute(sql).fetchone()[0] == 0)


INTERNAL = re.compile(
    r"^[IWEF]\d{4} \d\d:\d\d:\d\d|absl::InitializeLog|\{\{function_node|OOM when allocating|"
    r"disk I/O error|database or disk is full|no such (table|column)|disk image is malformed|"
    r"attempt to write a readonly database|already exists|sqlite3\.|OperationalError",
    re.MULTILINE,
)
"""TensorFlow's log lines and error text, SQLite's error text: what the user must never read."""


def _run(
    command: list[str], case: Case, env: dict[str, str], cwd: Path
) -> tuple[int, bytes, bytes, float]:
    """Run ``command`` with the case's stdin and stdout (closed, full or a file); its exit code,
    stdout, stderr and seconds. A shell closes the streams a case wants closed."""
    stdin = case.stdin.encode() if isinstance(case.stdin, str) else (case.stdin or b"")
    closing = (" <&-" if case.stdin_closed else "") + (" >&-" if case.stdout == "closed" else "")
    with tempfile.TemporaryFile() as given, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err, open("/dev/full", "wb") as full:  # fmt: skip
        given.write(stdin)
        given.seek(0)
        started = time.perf_counter()
        done = subprocess.run(
            ["sh", "-c", f'exec "$@"{closing}', "sh", *command], stdin=given,
            stdout=full if case.stdout == "full" else out, stderr=err, env=env, cwd=cwd,
            timeout=300, check=False,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        return done.returncode, out.read(), err.read(), seconds


def run_all(
    selected: list[Case], on_done: Callable[[Outcome], None] | None = None
) -> list[Outcome]:
    with tempfile.TemporaryDirectory() as folder, loopback() as server:
        base = Path(folder) / "base"
        prepare(base)
        outcomes = []
        for number, case in enumerate(selected):
            server.scripts.clear()
            for path, replies in case.script.items():
                server.script(path, *(Reply(**_ready(reply)) for reply in replies))
            outcome = run_case(case, base, Path(folder) / f"case{number}", server.url)
            outcomes.append(outcome)
            if on_done is not None:
                on_done(outcome)
        return outcomes


def _ready(reply: dict) -> dict:
    """A scripted reply with its body made now when it is a function (a catalog of a million
    rows is built for its case only, not whenever the cases are listed)."""
    body = reply.get("body")
    return {**reply, "body": body()} if callable(body) else reply


@contextmanager
def loopback() -> Iterator[FixtureServer]:
    """The price fixtures' HTTP server on 127.0.0.1, scripted per case."""
    with FixtureServer().running() as server:
        yield server


def table(outcomes: list[Outcome]) -> str:
    lines = [
        "| input | expected exit | exit | traceback | error lines | raw control bytes | "
        "live formulas | internal text | seconds (bound) | peak MB (bound) | prices lost | "
        "probes lost | ok |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        bound = f" (<= {o.case.max_seconds:g})" if o.case.max_seconds else ""
        memory = f" (<= {o.case.max_rss_mb:g})" if o.case.max_rss_mb else ""
        name = o.case.name.replace("|", "\\|")
        lines_said = "long" if o.long_line else "one" if o.one_line else "several"
        lines.append(
            f"| {name} | {o.case.expect} | {o.code} | {'yes' if o.traceback else 'no'} | "
            f"{lines_said} | {'YES' if o.control else 'no'} | {o.formulas} | "
            f"{'YES' if o.internal else 'no'} | {o.seconds:.1f}{bound} | {o.rss_mb:.0f}{memory} | "
            f"{o.lost_prices} | {o.lost_probes} | {'yes' if o.ok else 'NO'} |"
        )
    passed = sum(o.ok for o in outcomes)
    lines.append("")
    lines.append(
        f"{passed} of {len(outcomes)} cases as expected; "
        f"{sum(o.traceback for o in outcomes)} tracebacks, "
        f"{sum(o.lost_prices + o.lost_probes for o in outcomes)} rows lost, "
        f"{sum(o.control for o in outcomes)} outputs with raw control bytes, "
        f"{sum(o.formulas for o in outcomes)} live formula cells, "
        f"{sum(o.internal for o in outcomes)} with TensorFlow or SQLite text."
    )
    return "\n".join(lines)


def summary(outcomes: list[Outcome]) -> str:
    """The last line of ``table``."""
    return table(outcomes).rsplit("\n", 1)[1]


def write_doc(
    text: str, markers: tuple[str, str] = (START, END), heading: str = "Robustness"
) -> None:
    """``text`` between ``markers`` in docs/BENCHMARKS.md (a new section at its end, when the
    markers are not there yet)."""
    start, end = markers
    doc = DOC.read_text(encoding="utf-8")
    block = f"{start}\n{text}\n{end}"
    if start in doc and end in doc:
        head, rest = doc.split(start, 1)
        doc = head + block + rest.split(end, 1)[1]
    else:
        doc = doc.rstrip("\n") + f"\n\n## {heading}\n\n" + _INTRO + "\n\n" + block + "\n"
    DOC.write_text(doc, encoding="utf-8")


_INTRO = (
    "Hostile inputs against the real command line (`benchmarks/robustness.py`, which regenerates "
    "the table between the markers): exit code, traceback, one error line, raw control bytes on "
    "stdout or stderr, live CSV formulas, seconds and peak memory against each case's bound, and "
    "price and probe rows lost. Exit codes: 0 ok, 1 failure, 2 usage error. "
    "`tests/base/test_robustness.py` runs every case that is not marked slow."
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
    print(table(outcomes))
    if write:  # rounds three and four in sections of their own, with the count of every round
        names = {case.name for case in round_three(Case)}
        three = table([o for o in outcomes if o.case.name in names])
        write_doc(f"{three}\n\nAll rounds: {summary(outcomes)}", THREE, THREE_HEADING)
        names = {case.name for case in round_four(Case)}
        four = table([o for o in outcomes if o.case.name in names])
        write_doc(f"{four}\n\nAll rounds: {summary(outcomes)}", FOUR, FOUR_HEADING)
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
