"""Local accuracy: the probe's prediction of a whole ``model.fit`` here against the real one.

Each pair is a probe (fresh process, default 20 s budget) then the real training of the same
configuration (another fresh process: build, then a stopwatch around ``model.fit`` with no
callback of ours on the steps). Pairs are interleaved across cases (case 1, 2, ..., 7, then again)
so a slow minute of this shared machine hits several cases instead of one, and the fixed
reference kernel (``probes.reference``) is timed beside each probe and each real run: when both
sides of a pair saw the same machine speed, a miss is the method's, not the machine's.

Cases: the zoo's mnist_mlp, mnist_cnn and imdb_bilstm (their kinds were in the fit of the
iterator-teardown rates, ``benchmarks/research/fit_anatomy.py``), and four user .keras models of kinds the
zoo lacks, never used in any fit: a wide tabular MLP on large NumPy arrays, a GRU text classifier,
a small attention model and a 1-D convnet. Sizes make each real run 20-120 s on two cores.

    .venv/bin/python benchmarks/local_accuracy.py [CASE ...] [--pairs N] [--out FILE]
    .venv/bin/python benchmarks/local_accuracy.py --table [FILE ...]    # the docs' table
                                                         # (several passes pooled per case)
    .venv/bin/python benchmarks/local_accuracy.py --rescore [FILE ...]  # the same pairs with
                                                         # the shipped teardown rates
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.user_runs import make_user_models  # noqa: E402
from probes.real import real_fit  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "local_accuracy.json"
Z80 = 1.2815516
CASES: dict[str, tuple[str, dict[str, int]]] = {
    # name: (model, sizes of a 20-120 s real run on two cores)
    "mnist_mlp": ("mnist_mlp", {"samples": 60_000, "validation_samples": 10_000, "epochs": 12}),
    "mnist_cnn": ("mnist_cnn", {"samples": 25_600, "validation_samples": 5_120, "epochs": 3}),
    "imdb_bilstm": ("imdb_bilstm", {"samples": 12_800, "validation_samples": 3_200, "epochs": 3}),
    "user_tabular": ("tabular.keras", {"samples": 200_000, "validation_samples": 20_000,
                                       "epochs": 5, "batch_size": 256}),
    "user_gru": ("gru.keras", {"samples": 25_600, "validation_samples": 3_200, "epochs": 3}),
    "user_attention": ("attention.keras", {"samples": 12_800, "validation_samples": 1_600,
                                           "epochs": 3}),
    "user_conv1d": ("conv1d.keras", {"samples": 51_200, "validation_samples": 6_400,
                                     "epochs": 3}),
}  # fmt: skip
HELD_OUT = {name for name in CASES if name.startswith("user_")}
"""Cases of kinds no fit of the probe ever saw."""


def worker_probe(model: str, sizes: dict[str, int]) -> dict:
    from advisor.estimate.predict import probe_log_sigma
    from probes.run import probe, spec_for

    result = probe(spec_for(model, **sizes))
    return {
        "fit": result.fit_seconds, "predicted": result.predicted_seconds,
        "startup": result.startup_seconds, "teardown": result.teardown_seconds,
        "probe_log_sigma": probe_log_sigma(result), "machine_drift": result.machine_drift,
        "reference": list(result.reference_seconds), "step": result.step_seconds,
        "epoch_overhead": result.epoch_overhead_seconds,
        "validation_step": result.validation_step_seconds,
        "probe_seconds": result.probe_seconds, "extrapolated": result.extrapolated,
    }  # fmt: skip


def worker_real(model: str, sizes: dict[str, int]) -> dict:
    """Train the configuration for real, as a user would, with a stopwatch around ``fit``, the
    reference kernel timed before and after."""
    from probes import quiet

    quiet.prepare()
    from probes.reference import reference_seconds
    from probes.spec import spec_for

    before = reference_seconds()
    run = real_fit(spec_for(model, **sizes))
    return {**run, "reference": [before, reference_seconds()]}


def run_worker(kind: str, model: str, sizes: dict[str, int]) -> dict:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, __file__, "--worker", kind, model, json.dumps(sizes)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"{kind} {model} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def interval80(pair: dict) -> tuple[float, float, float]:
    """The 80% interval a fresh machine (no probe history) shows with the shipped spread, and
    its relative half-width: recomputed from the probe's parts, so a refit of the default
    spread (``advisor.fitting.run_spread``) is judged on the same runs."""
    from advisor.estimate.predict import spread_of_local

    probed = pair["probe"]
    sigma = spread_of_local(probed["probe_log_sigma"], probed["machine_drift"])
    return (probed["fit"] * math.exp(-Z80 * sigma), probed["fit"] * math.exp(Z80 * sigma),
            math.sinh(Z80 * sigma))  # fmt: skip


def inside(pair: dict) -> bool:
    low, high, _ = interval80(pair)
    return low <= pair["real"]["fit"] <= high


def pair_error(pair: dict) -> float:
    return pair["probe"]["fit"] / pair["real"]["fit"] - 1


def drift(pair: dict) -> float:
    """The machine's speed change from the probe to the real run, by the reference kernel."""
    probe_ref, real_ref = pair["probe"]["reference"][1], pair["real"]["reference"][0]
    return real_ref / probe_ref - 1 if probe_ref > 0 and real_ref > 0 else math.nan


def summary(rows: dict[str, list[dict]], names: list[str]) -> dict[str, float]:
    pairs = [p for name in names for p in rows[name]]
    cases = [statistics.median(pair_error(p) for p in rows[name]) for name in names]
    held = [inside(p) for p in pairs]
    return {
        "pairs": len(pairs),
        "median_signed": statistics.median(pair_error(p) for p in pairs),
        "median_abs_case": statistics.median(abs(c) for c in cases),
        "worst_case": max(cases, key=abs),
        "coverage80": sum(held) / len(held),
        "half_width80": statistics.median(interval80(p)[2] for p in pairs),
        "median_signed_without_teardown": statistics.median(
            (p["probe"]["fit"] - p["probe"]["teardown"]) / p["real"]["fit"] - 1 for p in pairs
        ),
        "one_sided_cases": sum(
            all(pair_error(p) > 0.10 for p in rows[n])
            or all(pair_error(p) < -0.10 for p in rows[n])
            for n in names
        ),
    }


def table(rows: dict[str, list[dict]]) -> str:
    lines = [
        "| case | sizes | pairs | predicted fit s (min-max) | real fit s (min-max) | errors of the pairs "
        "| case error | drift probe->real | in 80% | probe s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, pairs in rows.items():
        errors = [pair_error(p) for p in pairs]
        sizes = ", ".join(f"{k}={v}" for k, v in pairs[0]["sizes"].items())
        covered = sum(inside(p) for p in pairs)
        held = " (held out)" if name in HELD_OUT else ""
        lines.append(
            f"| {name}{held} | {sizes} | {len(pairs)} | {_spread([p['probe']['fit'] for p in pairs])} "
            f"| {_spread([p['real']['fit'] for p in pairs])} | "
            f"{' '.join(f'{e:+.0%}' for e in errors)} | {statistics.median(errors):+.1%} | "
            f"{' '.join(f'{drift(p):+.0%}' for p in pairs)} | {covered}/{len(pairs)} | "
            f"{statistics.median(p['probe']['probe_seconds'] for p in pairs):.1f} |"
        )
    groups = {"all": list(rows), "zoo (in the teardown fit)": [n for n in rows if n not in HELD_OUT],
              "user models (held out)": [n for n in rows if n in HELD_OUT]}  # fmt: skip
    lines += ["", "| cases | pairs | median signed error | median abs error (cases) | worst case "
              "| cases one-sided > 10% | 80% interval holds | median half-width "
              "| median signed error without the teardown term |",
              "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for label, names in groups.items():
        if not names:
            continue
        s = summary(rows, names)
        lines.append(
            f"| {label} | {s['pairs']} | {s['median_signed']:+.1%} | {s['median_abs_case']:.1%} | "
            f"{s['worst_case']:+.1%} | {s['one_sided_cases']} | {s['coverage80']:.0%} | "
            f"{s['half_width80']:.0%} | {s['median_signed_without_teardown']:+.1%} |"
        )
    return "\n".join(lines)


def pooled(files: list[Path]) -> dict[str, list[dict]]:
    """The pairs of several passes, case by case, in the order of the files (only the cases
    this benchmark runs)."""
    rows: dict[str, list[dict]] = {}
    for file in files:
        try:
            passed = json.loads(file.read_text())
        except (OSError, ValueError) as exc:
            _refuse(f"cannot read {file}: {exc}")
        if not isinstance(passed, dict) or not set(passed) <= set(CASES):
            _refuse(f"{file} is not a pass of this benchmark")
        for name, pairs in passed.items():
            rows.setdefault(name, []).extend(pairs)
    return rows


def rescored(rows: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The pairs as the shipped teardown rates (``data/fit-teardown.json``) would have predicted
    them: each prediction less the teardown term it was made with, plus the term at today's
    rates (``probes.run.with_teardown``) from the probe's own readings. The probes and the real
    runs stay as they were, so a refit of the rates is judged on the same runs."""
    from probes.fitting import Measurement
    from probes.result import WorkloadConfig
    from probes.run import with_teardown
    from probes.teardown import shipped_rates

    rates = shipped_rates()
    out: dict[str, list[dict]] = {}
    for name, pairs in rows.items():
        for pair in pairs:
            probed = pair["probe"]
            sizes = pair["sizes"]
            config = WorkloadConfig(name, sizes["samples"], sizes["validation_samples"],
                                    sizes["epochs"], batch_size(name, sizes))  # fmt: skip
            readings = Measurement(
                step_seconds=probed["step"], step_interval=(probed["step"], probed["step"]),
                validation_step_seconds=probed["validation_step"],
                epoch_overhead_seconds=probed["epoch_overhead"], startup_seconds=0.0,
                predicted_seconds=0.0, predicted_interval=(0.0, 0.0), batch_scaling={},
            )  # fmt: skip
            term = with_teardown(readings, config, rates).teardown_seconds
            fit = probed["fit"] - probed["teardown"] + term
            again = {**pair, "probe": {**probed, "fit": fit, "teardown": term}}
            out.setdefault(name, []).append(again)
    return out


def _refuse(message: str) -> NoReturn:
    """A bad argument: one line, exit 2."""
    print(f"local_accuracy: {message}", file=sys.stderr)
    raise SystemExit(2)


def batch_size(name: str, sizes: dict[str, int]) -> int:
    """The batch a case trains with: its own, else its zoo workload's or a user model's default
    (``probes.spec``)."""
    from advisor.workloads import zoo
    from probes.spec import USER_BATCH_SIZE

    model = CASES[name][0]
    default = USER_BATCH_SIZE if model.endswith(".keras") else zoo.get(model).batch_size
    return sizes.get("batch_size", default)


def _spread(seconds: list[float]) -> str:
    return f"{statistics.median(seconds):.1f} ({min(seconds):.1f}-{max(seconds):.1f})"


def main(argv: list[str]) -> None:
    if argv[:1] in (["--table"], ["--rescore"]):
        rows = pooled([Path(a) for a in argv[1:]] or [OUT])
        print(table(rescored(rows) if argv[0] == "--rescore" else rows))
        return
    if argv[:1] == ["--worker"]:
        kind, model, sizes = argv[1], argv[2], json.loads(argv[3])
        if kind == "models":
            make_user_models(Path(model))
            print("{}")
            return
        work = worker_probe if kind == "probe" else worker_real
        print(json.dumps(work(model, sizes)))
        return
    out_file = Path(argv[argv.index("--out") + 1]) if "--out" in argv else OUT
    pairs = int(argv[argv.index("--pairs") + 1]) if "--pairs" in argv else 3
    names = [a for a in argv if a in CASES] or list(CASES)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT, check=False).stdout.strip()  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="advisor-bench-"))
    run_worker("models", str(folder), {})
    rows: dict[str, list[dict]] = json.loads(out_file.read_text()) if out_file.exists() else {}
    for _ in range(pairs):
        for name in names:  # interleaved: every case once, then again
            model, sizes = CASES[name]
            if model.endswith(".keras"):
                model = str(folder / model)
            load = os.getloadavg()[0]
            probed = run_worker("probe", model, sizes)
            real = run_worker("real", model, sizes)
            pair = {"sizes": sizes, "probe": probed, "real": real, "load": round(load, 2),
                    "commit": commit, "at": time.strftime("%H:%M", time.gmtime())}  # fmt: skip
            rows.setdefault(name, []).append(pair)
            low, high, _ = interval80(pair)
            print(f"{name:15s} predicted {probed['fit']:6.1f} s  real {real['fit']:6.1f} s  "
                  f"error {pair_error(pair):+6.1%}  drift {drift(pair):+5.1%}  "
                  f"80% [{low:.1f}, {high:.1f}]  load {load:.2f}", flush=True)  # fmt: skip
            out_file.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
