"""Stability: does the same workload, probed afresh five times, give the same answer everywhere?

For each case (mnist_mlp, mnist_cnn, imdb_bilstm and a user's .keras model) this runs
``advisor probe --fresh --json`` in a fresh process, five rounds interleaved across the cases
(so a slow minute of the machine hits every case alike), each in its own ADVISOR_HOME, and a
fixed reference kernel beside every probe. From each probe it predicts the full training on a T4,
an L4, an A100 and an 8-vCPU Cascade Lake VM, and reports per case and target the max/min ratio
of the five predictions beside the local spread (max/min of the probes' own predictions) and
the reference kernel's spread (the machine's drift, not the method's).

Targets: every cross-device max/min <= 1.3 and <= 1.1 x the local max/min.

    .venv/bin/python benchmarks/probe_stability.py [--rounds 5] [--out FILE]
    .venv/bin/python benchmarks/probe_stability.py --table [FILE]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.inputs import run_keras  # noqa: E402

CASES = ("mnist_mlp", "mnist_cnn", "imdb_bilstm", "user_gru")
TARGETS = (("T4", 1, None, None), ("L4", 1, None, None), ("A100", 1, None, None),
           (None, 0, 8, "cascadelake"))  # fmt: skip


def make_user_model(folder: Path) -> Path:
    """A user's model of a kind the zoo lacks (a GRU classifier), saved as .keras."""
    path = folder / "gru.keras"
    code = (
        "import keras\nfrom keras import Input, Sequential, layers\n"
        "m = Sequential([Input((80,), dtype='int32'), layers.Embedding(10_000, 64), "
        "layers.GRU(96), layers.Dense(1, activation='sigmoid')], name='gru')\n"
        "m.compile('adam', 'binary_crossentropy')\n"
        f"m.save({str(path)!r})\n"
    )
    run_keras(code)
    return path


def probe_once(model: str, home: Path) -> dict:
    env = {**os.environ, "ADVISOR_HOME": str(home), "TF_CPP_MIN_LOG_LEVEL": "3"}
    extra = ["--samples", "25000", "--epochs", "10"] if model.endswith(".keras") else []
    out = subprocess.run(
        [sys.executable, "-m", "advisor", "probe", "--model", model, "--fresh", "--json", *extra],
        capture_output=True, text=True, env=env, cwd=ROOT, check=True,
    )  # fmt: skip
    payload = json.loads(out.stdout)
    return payload[0] if isinstance(payload, list) else payload


def predictions(home: Path, workload: str) -> dict[str, float]:
    """Each target's predicted full training from the probe stored in ``home``."""
    os.environ["ADVISOR_HOME"] = str(home)
    from advisor.estimate.predict import predict
    from advisor.estimate.prediction import Target
    from advisor.store import connect
    from probes import history

    (probe,) = history.latest(connect(), workload)
    found = {}
    for accelerator, count, vcpus, family in TARGETS:
        target = Target(accelerator, count, vcpus=vcpus, cpu_family=family)
        found[accelerator or f"{vcpus} vCPU"] = predict(probe, target).seconds
    return found


def reference() -> float:
    from probes.reference import reference_seconds

    return reference_seconds()


def run(rounds: int, out_file: Path) -> None:
    folder = Path(tempfile.mkdtemp(prefix="advisor-stability-"))
    user_model = make_user_model(folder)
    rows: dict[str, list[dict]] = {case: [] for case in CASES}
    for round_ in range(rounds):
        for case in CASES:
            model = str(user_model) if case == "user_gru" else case
            home = folder / f"{case}-{round_}"
            before = reference()
            probed = probe_once(model, home)
            after = reference()
            row = {
                "local": probed["predicted_seconds"],
                "step": probed["step_seconds"],
                "epoch_overhead": probed["epoch_overhead_seconds"],
                "machine_drift": probed.get("machine_drift", 0.0),
                "reference": [before, after],
                "targets": predictions(home, probed["workload"]),
                "at": time.strftime("%H:%M:%S", time.gmtime()),
                "load": round(os.getloadavg()[0], 2),
            }
            rows[case].append(row)
            print(f"{case:12s} round {round_ + 1}: local {row['local']:8.2f} s  "
                  + "  ".join(f"{k} {v:8.2f}" for k, v in row["targets"].items())
                  + f"  overhead {row['epoch_overhead']:.3f} s  ref {before * 1e3:.2f}/"
                  f"{after * 1e3:.2f} ms", flush=True)  # fmt: skip
            out_file.write_text(json.dumps(rows, indent=1))


def spread(values: list[float]) -> float:
    return max(values) / min(values)


def table(out_file: Path) -> str:
    rows = json.loads(out_file.read_text())
    lines = [
        "| case | probes | local max/min | reference max/min | T4 | L4 | A100 | 8 vCPU | "
        "worst / local |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case, runs in rows.items():
        if not runs:
            continue
        local = spread([r["local"] for r in runs])
        ref = spread([t for r in runs for t in r["reference"]])
        by_target = {
            name: spread([r["targets"][name] for r in runs]) for name in runs[0]["targets"]
        }
        worst = max(by_target.values())
        cells = " | ".join(f"{v:.2f}" for v in by_target.values())
        lines.append(
            f"| {case} | {len(runs)} | {local:.2f} | {ref:.2f} | {cells} | {worst / local:.2f} |"
        )
    overheads = [r["epoch_overhead"] for runs in rows.values() for r in runs]
    lines.append("")
    lines.append(
        f"Per-epoch overhead over all probes: median {statistics.median(overheads):.3f} s, "
        f"max {max(overheads):.3f} s."
    )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    out_file = ROOT / "benchmarks" / "results" / "probe_stability.json"
    if "--out" in argv:
        out_file = Path(argv[argv.index("--out") + 1])
    if "--table" in argv:
        print(table(out_file))
        return
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 5
    run(rounds, out_file)
    print(table(out_file))


if __name__ == "__main__":
    main(sys.argv[1:])
