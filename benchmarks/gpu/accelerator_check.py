"""The CPU-to-GPU check: probe on this machine's CPU, predict its GPU, measure the GPU.

One command on a GPU machine that has PyTorch and/or JAX with CUDA and no TensorFlow (docs/
ACCELERATOR.md says which wheels to carry and how to install them without internet):

    python3 benchmarks/gpu/accelerator_check.py --out results/      # on the GPU machine, < 9 min
    python3 benchmarks/gpu/accelerator_check.py --cpu-only --out /tmp/rehearsal   # a rehearsal here
    python3 benchmarks/gpu/accelerator_check.py --rescore RESULTS_FOLDER ...      # here, no GPU

For every workload (the zoo and the local-accuracy benchmark's user models, at sizes that give
several epoch boundaries) and every Keras backend installed (``--backends``), in three lanes that
run side by side on disjoint CPU cores:

- ``cpu-2``, ``cpu-8``: the probe on 2 and 8 CPU cores with the GPU hidden (a stand-in for a
  user's laptop), then ``advisor.estimate.predict`` of that probe to this machine's GPU;
- ``gpu``: the probe on the GPU, then a real training run of the same configuration on the GPU
  (the ground truth: its epochs after the first, timed one by one).

It writes to ``--out``: ``summary.md`` and ``summary.json`` (per workload and backend: each CPU
probe's prediction, the GPU probe's, the measured GPU time, their errors), ``probes.csv`` (every
probe in the exchange format: ``advisor import probes.csv``), ``measured.csv`` (the real GPU runs
as exchange rows for ``data/``) and ``not-run.txt`` (what it could not run, and why). Lanes stop
taking workloads at the deadline (``--minutes``, 8.5 by default): the cheapest workloads run first,
and what did not fit is listed. ``--cpu-only`` runs the same code with the CPU in the GPU's place
(the prediction's target is then ``--target``, H100 by default), at small sizes: the rehearsal
the test suite runs (tests/bench/test_accelerator_check.py). ``--rescore`` predicts a finished
check's real runs again from the CPU probes it took (its ``probes.csv`` and ``measured.csv``), by
today's model.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run from a checkout, advisor installed or not
    sys.path.insert(0, str(ROOT))

from benchmarks.user_runs import make_user_models  # noqa: E402
from probes.device import siblings_of  # noqa: E402
from probes.lanes import Lane, by_core, lanes_for  # noqa: E402
from probes.real import real_run  # noqa: E402

CHECK_EPOCHS = 4
"""Epochs of every check run: three boundaries after the first (compiling) epoch."""


@dataclass(frozen=True)
class Case:
    """One workload at the check's sizes: ``steps`` training batches an epoch."""

    name: str
    model: str
    """Zoo id, or a user model's file name (made by ``make_user_models``)."""
    batch_size: int
    steps: int
    validation_steps: int = 0
    cost: float = 1.0
    """Rough relative cost, to run the cheap ones first."""

    def sizes(self, small: bool) -> dict[str, int]:
        steps = max(3, self.steps // 8) if small else self.steps
        validation = max(1, self.validation_steps // 8) if small and self.validation_steps else 0
        if not small:
            validation = self.validation_steps
        return {"batch_size": self.batch_size, "samples": steps * self.batch_size,
                "validation_samples": validation * self.batch_size, "epochs": CHECK_EPOCHS}  # fmt: skip


CASES = (
    Case("mnist_mlp", "mnist_mlp", 128, 200, 20, 1),
    Case("imdb_fasttext", "imdb_fasttext", 32, 200, 20, 1.5),
    Case("user_wide_dense", "wide_dense.keras", 128, 200, 20, 1.5),
    Case("user_conv1d", "conv1d.keras", 128, 200, 20, 1.5),
    Case("mnist_cnn", "mnist_cnn", 128, 200, 20, 2),
    Case("cifar10_cnn", "cifar10_cnn", 32, 200, 20, 2),
    Case("user_attention", "attention.keras", 128, 100, 10, 2),
    Case("lstm_text_generation", "lstm_text_generation", 128, 100, 0, 3),
    Case("user_gru", "gru.keras", 128, 100, 10, 3),
    Case("imdb_bilstm", "imdb_bilstm", 32, 100, 10, 3),
    Case("resnet32_cifar10", "resnet32_cifar10", 128, 100, 10, 4),
    Case("alexnet", "alexnet", 512, 20, 0, 6),
    Case("inception3", "inception3", 32, 50, 0, 8),
    Case("resnet50", "resnet50", 64, 40, 0, 8),
    Case("vgg16", "vgg16", 64, 30, 0, 9),
    Case("resnet152", "resnet152", 32, 40, 0, 10),
)
SMALL_CASES = ("mnist_mlp", "user_conv1d", "lstm_text_generation")
"""The rehearsal's workloads (``--cpu-only``): a dense, a convolutional and a recurrent one."""


# --- the worker: one lane, one backend, in a process of its own ------------------------------


def worker(lane: dict[str, Any], cases: list[dict[str, Any]], models: str, budget: float) -> None:
    """Run ``cases`` in this process and print one JSON line per result (the parent keeps what
    was printed if the lane is stopped). The environment already chose the backend and hid the
    GPU where the lane is a CPU one."""
    if lane["cpus"]:
        os.sched_setaffinity(0, lane["cpus"])
    from probes import backend

    framework = backend.select()
    framework.limit_threads(lane["threads"])
    _emit({"case": "*", "kind": "note", "note": _lane_cores(lane)})
    from probes import history
    from probes.run import probe
    from probes.spec import spec_for

    for case in cases:
        model = (
            str(Path(models) / case["model"]) if case["model"].endswith(".keras") else case["model"]
        )
        try:
            spec = spec_for(model, **case["sizes"])
            result = probe(spec, budget_seconds=budget, profile_ops=False)
            _emit(
                {
                    "case": case["name"],
                    "kind": "probe",
                    "result": json.loads(history.to_json(result)),
                }
            )
            if lane["gpu"]:
                _emit({"case": case["name"], "kind": "real", "real": real_run(spec)})
        except Exception as exc:  # one workload's failure is a line of the report, not the end
            text = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
            _emit({"case": case["name"], "kind": "error", "error": text})
    if framework.name != "tensorflow" and "tensorflow" in sys.modules:
        _emit({"case": "*", "kind": "note", "note": f"TensorFlow was imported on the {framework.name} "
               "path (Keras imports it to read and write .keras files when it is installed)"})  # fmt: skip


def _lane_cores(lane: dict[str, Any]) -> str:
    """What a lane's logical CPUs are: the SMT siblings Linux names for each, and the reference
    product's rate on them. A cloud VM's vCPUs are hyperthreads, two to a core; a lane of whole
    cores is faster than a VM of as many vCPUs (the 2026-11-26 check did not record it)."""
    from probes import reference

    siblings = {siblings_of(cpu).strip() or "?" for cpu in lane["cpus"]}
    rate = reference.flops_per_second(reference.reference_seconds()) / 1e9
    return (
        f"lane {lane['name']}: CPUs {lane['cpus'] or 'all'}, SMT sibling sets "
        f"{' '.join(sorted(siblings)) or '?'}; reference product {rate:.0f} GFLOP/s"
    )


def _emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


# --- the parent: lanes side by side, a deadline, the report ----------------------------------


def run_lane(lane: Lane, framework: str, cases: list[Case], small: bool, models: Path,
             budget: float, log: Path) -> subprocess.Popen[str]:  # fmt: skip
    """Start ``lane``'s worker for ``framework``: the GPU hidden unless the lane is the GPU's."""
    env = {**os.environ, "KERAS_BACKEND": framework, "PYTHONPATH": _pythonpath(),
           "PYTHONUNBUFFERED": "1", "TF_CPP_MIN_LOG_LEVEL": "3"}  # fmt: skip
    if not lane.gpu or lane.name != "gpu":
        env.update({"CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cpu"})
    payload = [{"name": c.name, "model": c.model, "sizes": c.sizes(small)} for c in cases]
    command = [sys.executable, __file__, "--worker", json.dumps(asdict(lane)),
               json.dumps(payload), str(models), str(budget)]  # fmt: skip
    handle = log.open("a")
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=handle, text=True, env=env)


def _pythonpath() -> str:
    return os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])


def collect(running: dict[tuple[str, str], subprocess.Popen[str]], deadline: float,
            results: dict[tuple[str, str], list[dict[str, Any]]]) -> list[str]:  # fmt: skip
    """Read every lane's lines until each ends or the deadline passes (then it is killed)."""
    import selectors

    stopped: list[str] = []
    selector = selectors.DefaultSelector()
    for key, process in running.items():
        assert process.stdout is not None
        selector.register(process.stdout, selectors.EVENT_READ, key)
    open_streams = len(running)
    while open_streams:
        left = deadline - time.monotonic()
        if left <= 0:
            for key, process in running.items():
                if process.poll() is None:
                    process.kill()
                    stopped.append(f"{key[1]} {key[0]}: stopped at the deadline")
            break
        for item, _ in selector.select(timeout=min(left, 1.0)):
            line = item.fileobj.readline()  # type: ignore[union-attr]
            if not line:
                selector.unregister(item.fileobj)
                open_streams -= 1
                continue
            try:
                results.setdefault(item.data, []).append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a framework's stray print
    for process in running.values():
        process.wait()
    return stopped


def summarise(results: dict[tuple[str, str], list[dict[str, Any]]], cases: list[Case],
              backends: list[str], lanes: list[Lane], target: str,
              on_target: bool) -> tuple[list[dict[str, Any]], list[str]]:  # fmt: skip
    """Per workload and backend: each CPU probe's prediction to ``target``, the accelerator
    lane's probe and its real run; and every workload that has no result, with why."""
    from advisor.estimate.predict import predict
    from advisor.estimate.prediction import Target
    from probes.history import from_json

    rows: list[dict[str, Any]] = []
    missing = sorted({f"{key[1]} {key[0]}: {m['note']}" for key, messages in results.items()
                      for m in messages if m["kind"] == "note"})  # fmt: skip
    for framework in backends:
        for case in cases:
            row: dict[str, Any] = {"workload": case.name, "backend": framework, "target": target}
            for lane in lanes:
                found = [
                    m for m in results.get((lane.name, framework), []) if m["case"] == case.name
                ]
                if not found:
                    missing.append(f"{framework} {lane.name} {case.name}: not reached (deadline)")
                for message in found:
                    if message["kind"] == "error":
                        missing.append(f"{framework} {lane.name} {case.name}: {message['error']}")
                    elif message["kind"] == "probe":
                        probe = from_json(json.dumps(message["result"]))
                        epochs = probe.config.epochs
                        row[f"{lane.name}_probe_per_epoch"] = probe.predicted_seconds / epochs
                        # the host's floor as this lane measured it: on the accelerator's lane
                        # the chain of tiny layers runs on the GPU, its host cost per layer
                        row[f"{lane.name}_dispatch_ms"] = probe.dispatch_seconds * 1e3
                        row[f"{lane.name}_layer_us"] = probe.layer_dispatch_seconds * 1e6
                        if not lane.gpu:
                            guess = predict(  # the real run feeds its arrays unaugmented
                                probe, Target(accelerator=target, accelerator_count=1),
                                augmented=False,
                            )  # fmt: skip
                            row[f"{lane.name}_predicted_per_epoch"] = (
                                guess.seconds / epochs if math.isfinite(guess.seconds) else None
                            )
                            row[f"{lane.name}_extrapolated"] = guess.extrapolated
                    elif message["kind"] == "real":
                        row["measured_per_epoch"] = message["real"]["per_epoch"]
                        row["measured_total"] = message["real"]["total"]
            _errors(row, lanes, on_target)
            rows.append(row)
    return rows, missing


def _errors(row: dict[str, Any], lanes: list[Lane], on_target: bool) -> None:
    """Each figure's error against the measured run: the GPU probe's always, the CPU probes'
    predictions only when their target is the device measured (not in the rehearsal, where
    they aim at a GPU the machine does not have)."""
    measured = row.get("measured_per_epoch")
    if not measured:
        return
    for lane in lanes:
        for kind in ("predicted", "probe"):
            value = row.get(f"{lane.name}_{kind}_per_epoch")
            if value and (kind == "predicted") != lane.gpu and (on_target or lane.gpu):
                row[f"{lane.name}_{kind}_error"] = value / measured - 1


def markdown(rows: list[dict[str, Any]], lanes: list[Lane], missing: list[str], header: str) -> str:
    cpu = [lane.name for lane in lanes if not lane.gpu]
    accelerator = next(lane.name for lane in lanes if lane.gpu)
    titles = [f"{name} -> target s/epoch (error)" for name in cpu]
    lines = [header, "", "| workload | backend | " + " | ".join(titles) +
             f" | {accelerator} probe s/epoch (error) | measured s/epoch |",
             "|---|---|" + "---|" * (len(cpu) + 2)]  # fmt: skip
    for row in rows:
        measured = row.get("measured_per_epoch")
        cells = [row["workload"], row["backend"], *(_cell(row, f"{name}_predicted") for name in cpu),
                 _cell(row, f"{accelerator}_probe"), f"{measured:.3g}" if measured else "-"]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    for name in [*[f"{n}_predicted" for n in cpu], f"{accelerator}_probe"]:
        errors = [abs(r[f"{name}_error"]) for r in rows if f"{name}_error" in r]
        if errors:
            lines.append(f"\n{name}: median |error| {statistics.median(errors):.0%}, worst "
                         f"{max(errors):.0%} over {len(errors)} workloads")  # fmt: skip
    for lane in lanes:  # the host's work per step and per layer, by lane
        per_layer = [r[f"{lane.name}_layer_us"] for r in rows if r.get(f"{lane.name}_layer_us")]
        dispatch = [
            r[f"{lane.name}_dispatch_ms"] for r in rows if r.get(f"{lane.name}_dispatch_ms")
        ]
        if per_layer and dispatch:
            lines.append(f"\n{lane.name} host: dispatch {statistics.median(dispatch):.2f} ms a step, "
                         f"{statistics.median(per_layer):.0f} us a layer (medians over {len(per_layer)} probes)")  # fmt: skip
    if missing:
        lines += ["", "Not run:", *[f"- {m}" for m in missing]]
    return "\n".join(lines) + "\n"


def _cell(row: dict[str, Any], prefix: str) -> str:
    value = row.get(f"{prefix}_per_epoch")
    if value is None:
        return "-"
    error = row.get(f"{prefix}_error")
    mark = " x" if row.get(prefix.replace("_predicted", "_extrapolated")) else ""
    return f"{value:.3g}{mark}" + (f" ({error:+.0%})" if error is not None else "")


def write_exchange(
    out: Path, results: dict[tuple[str, str], list[dict[str, Any]]], stamp: str
) -> None:
    """``probes.csv``: every probe, for ``advisor import``; ``measured.csv``: every real run."""
    from probes import exchange
    from probes.history import from_json

    probes, measured = [], []
    for (_, _), messages in results.items():
        probe_of: dict[str, Any] = {}
        for message in messages:
            if message["kind"] == "probe":
                probe_of[message["case"]] = from_json(json.dumps(message["result"]))
                probes.append(probe_of[message["case"]])
            elif message["kind"] == "real" and message["case"] in probe_of:
                measured.append((probe_of[message["case"]], message["real"]))
    exchange.write_csv(out / "probes.csv", probes)
    rows = []
    for probe, real in measured:
        base = exchange.to_rows(probe)[0]
        ran = real["steps_per_epoch"]
        base.update({"source": f"accelerator-check-{stamp}",
                     "notes": f"measured by benchmarks/gpu/accelerator_check.py: the median of epochs "
                              f"2-{probe.config.epochs} of {ran} steps, per step, times the "
                              f"configured {probe.config.steps_per_epoch}"})  # fmt: skip
        rows.append({**base, "metric": "seconds_per_epoch", "value": real["per_epoch"]})
        if ran == probe.config.steps_per_epoch:  # a whole run of the configuration
            rows.append({**base, "metric": "seconds_total", "value": real["total"]})
    import csv

    with (out / "measured.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=exchange.COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def rescore(folder: Path) -> list[dict[str, Any]]:
    """Each CPU probe of a finished check (``folder``'s ``probes.csv``) predicted again by
    today's model for the GPU whose real runs ``measured.csv`` holds: the user's path re-scored
    without a GPU, as the device model changes."""
    from advisor.estimate.predict import predict
    from advisor.estimate.prediction import Target
    from probes import exchange

    real = {}
    for row in exchange.read_csv(folder / "measured.csv"):
        if row.metric == "seconds_per_epoch":
            real[(row.workload, row.backend)] = (row.device, row.value)
    rows = []
    for probe in exchange.from_rows(exchange.read_csv(folder / "probes.csv")):
        found = real.get((probe.config.workload, probe.device.backend))
        if probe.device.accelerator or found is None:
            continue
        device, measured = found
        guess = predict(probe, Target(device, 1), augmented=False)  # as the real run fed it
        per_epoch = guess.seconds / probe.config.epochs
        rows.append({"workload": probe.config.workload, "backend": probe.device.backend,
                     "cores": probe.device.threads, "target": device,
                     "predicted_per_epoch": per_epoch, "measured_per_epoch": measured,
                     "error": per_epoch / measured - 1})  # fmt: skip
    return rows


def print_rescore(rows: list[dict[str, Any]]) -> None:
    print("| workload | backend | cores | predicted s/epoch | measured | error |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['workload']} | {r['backend']} | {r['cores']} | "
              f"{r['predicted_per_epoch']:.3g} | {r['measured_per_epoch']:.3g} | {r['error']:+.0%} |")  # fmt: skip
    factors = [max(1 + r["error"], 1 / (1 + r["error"])) for r in rows]
    if factors:
        signed = statistics.median(r["error"] for r in rows)
        print(f"\n{len(rows)} predictions: median {statistics.median(factors):.2f}x, "
              f"worst {max(factors):.2f}x, median signed {signed:+.0%}")  # fmt: skip


def installed_backends() -> list[str]:
    from probes.backend import BACKENDS

    return [name for name, framework in BACKENDS.items() if framework.installed()]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        worker(json.loads(argv[1]), json.loads(argv[2]), argv[3], float(argv[4]))
        return 0
    if argv[:1] == ["--models"]:
        make_user_models(Path(argv[1]))
        return 0
    if argv[:1] == ["--rescore"]:
        folders = [Path(a) for a in argv[1:]]
        bad = [str(f) for f in folders if not (f / "probes.csv").is_file()]
        if not folders or bad:
            print(
                f"--rescore: folders with a probes.csv and a measured.csv, not {bad}",
                file=sys.stderr,
            )
            return 2
        from advisor.errors import AdvisorError

        try:
            rows = [row for folder in folders for row in rescore(folder)]
        except AdvisorError as error:  # a malformed export: one line, as the CLI says it
            print(f"--rescore: {error}", file=sys.stderr)
            return 2
        if not rows:
            print("--rescore: no CPU probe of a measured run in those folders", file=sys.stderr)
            return 1
        print_rescore(rows)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "accelerator-check")
    parser.add_argument("--backends", help="comma-separated (default: every one installed; "
                        "--cpu-only: jax)")  # fmt: skip
    parser.add_argument(
        "--threads", default=None, help="CPU lanes' cores (default 2,8; --cpu-only 1)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds per probe (20, the product's default; --cpu-only 3)",
    )
    parser.add_argument("--minutes", type=float, default=8.5, help="deadline for the whole check")
    parser.add_argument("--cpu-only", action="store_true", help="the rehearsal: no GPU")
    parser.add_argument("--target", help="GPU to predict (default: this machine's; else H100)")
    parser.add_argument("--cases", help="comma-separated workloads (default: all; --cpu-only: 3)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    deadline = started + args.minutes * 60
    small = args.cpu_only
    installed = installed_backends()
    wanted = args.backends.split(",") if args.backends else (["jax"] if small else installed)
    backends = [b for b in wanted if b in installed]
    skipped = [f"{b}: not installed" for b in wanted if b not in installed]
    names = args.cases.split(",") if args.cases else (list(SMALL_CASES) if small else None)
    cases = sorted((c for c in CASES if names is None or c.name in names), key=lambda c: c.cost)
    threads = [int(n) for n in (args.threads or ("1" if small else "2,8")).split(",")]
    budget = args.budget or (3.0 if small else 20.0)
    cpus = by_core(sorted(os.sched_getaffinity(0)))
    from probes.device import gpu

    if not args.cpu_only and gpu()[0] is None:
        print("no GPU found (nvidia-smi): --cpu-only runs the rehearsal", file=sys.stderr)
        return 2
    target = args.target or (None if args.cpu_only else gpu()[0]) or "H100"
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    models = Path(tempfile.mkdtemp(prefix="advisor-check-models-"))
    log = out / "workers.log"
    if not backends:
        (out / "not-run.txt").write_text("".join(f"{line}\n" for line in skipped))
        print("no Keras backend installed to check: " + "; ".join(skipped), file=sys.stderr)
        return 1
    with log.open("a") as errors:  # the user models, saved once (a failure: their cases fail)
        subprocess.run([sys.executable, __file__, "--models", str(models)], check=False, stderr=errors,
                       env={**os.environ, "PYTHONPATH": _pythonpath(), "KERAS_BACKEND": backends[0],
                            "CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cpu"})  # fmt: skip
    waves = lanes_for(threads, args.cpu_only, cpus)
    lanes = [lane for wave in waves for lane in wave]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    stopped: list[str] = []
    share = (deadline - time.monotonic()) / max(1, len(waves) * len(backends))
    for framework in backends:
        for wave in waves:
            wave_deadline = min(deadline, time.monotonic() + share)
            running = {(lane.name, framework):
                       run_lane(lane, framework, cases, small, models, budget, log)
                       for lane in wave}  # fmt: skip
            stopped += collect(running, wave_deadline, results)
    rows, missing = summarise(results, cases, backends, lanes, target, not args.cpu_only)
    stamp = time.strftime("%Y%m%d", time.gmtime())
    write_exchange(out, results, stamp)
    header = (f"accelerator check {stamp}: target {target}, backends {', '.join(backends) or 'none'}, "
              f"probe budget {budget:g} s, lanes " + ", ".join(f"{lane.name} ({len(lane.cpus)} cores)" for lane in lanes)
              + f"; {time.monotonic() - started:.0f} s; x: prediction flagged extrapolated")  # fmt: skip
    not_run = [*skipped, *stopped, *missing]
    (out / "summary.json").write_text(
        json.dumps({"header": header, "rows": rows, "not_run": not_run}, indent=1)
    )
    (out / "not-run.txt").write_text("".join(f"{line}\n" for line in not_run))
    text = markdown(rows, lanes, not_run, header)
    (out / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
