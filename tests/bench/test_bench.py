"""`advisor bench` without a cloud: no cloud is reachable from the tests.

What runs for real: the price database (a SQLite file seeded from the shipped prices), the
planning and costing, the task YAML (parsed by SkyPilot's own ``sky.Task.from_yaml``), the
exchange CSV, ``advisor import``, ``advisor recommend``. The one stand-in is ``StandIn``, for
SkyPilot's launch call (``advisor.bench.launch.Cloud``: launch a task, tear a cluster down);
no other part is replaced. The tests that need SkyPilot run where it is installed
(``make test-skypilot``: it pins click<8.2, older than the rest of the suite expects).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

import pytest
from click.testing import CliRunner

from advisor.bench import launch, plan, task
from advisor.bench.launch import Preempted
from advisor.cli import cli
from advisor.cli.bench import INSTALL_HINT
from advisor.errors import UsageError
from advisor.estimate import catalog
from pricing import database, ingest, materialise
from pricing.observations import Observation
from probes import exchange, history
from probes.device import fingerprint
from probes.result import Fingerprint, ProbeResult, WorkloadConfig
from tests.bench.sky_catalog import sky_runtime  # noqa: F401 (a fixture)

HAS_SKY = importlib.util.find_spec("sky") is not None
needs_sky = pytest.mark.skipif(not HAS_SKY, reason="SkyPilot not installed: make test-skypilot")
MLP = WorkloadConfig("mnist_mlp", 60_000, 10_000, 20, 128)
T4 = Fingerprint("Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz", 4, 4, "T4", 15.0,
                 "2.21.0", True, False, "fp32")  # fmt: skip


def invoke(*args: str) -> tuple[int, str, str]:
    """Run the CLI; stdout and stderr apart under any click (SkyPilot pins an older one)."""
    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click >= 8.2 keeps them apart already
        runner = CliRunner()
    result = runner.invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def probe_on(device: Fingerprint, seconds: float, config: WorkloadConfig = MLP) -> ProbeResult:
    """A probe of mnist_mlp (figures of a real 2-vCPU run, the total set to ``seconds``)."""
    return ProbeResult(
        config=config, device=device, step_seconds=0.0062, step_interval=(0.0061, 0.0063),
        validation_step_seconds=0.0021, epoch_overhead_seconds=0.05, startup_seconds=1.2,
        predicted_seconds=seconds, predicted_interval=(seconds * 0.95, seconds * 1.05),
        samples_per_second=20_645.0, probe_seconds=9.0, flops_per_sample=4.0e6,
        parameters=669_706, peak_host_bytes=600_000_000,
        op_split={"matmul_conv": 0.55, "elementwise": 0.2, "overhead": 0.25},
        batch_scaling={128: 0.0062}, created_at="2026-11-21T05:00:00+00:00",
    )  # fmt: skip


def recommend(*args: str) -> dict[str, Any]:
    code, out, err = invoke("recommend", "--model", "mlp", *args, "--json")
    assert code == 0, err
    payload: dict[str, Any] = json.loads(out)
    return payload


class StandIn:
    """The stand-in for SkyPilot's launch call (the only part of a bench replaced here).

    It answers each cluster as the node would: with the job's log holding the export of a probe
    on the rented device, or with a failure or a preemption, and records every teardown.
    """

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.launched: dict[str, dict[str, Any]] = {}
        self.downed: list[str] = []

    def launch(self, config: dict[str, Any], cluster: str, log: TextIO) -> int:
        self.launched[cluster] = config
        answer = self.answers[config["resources"].get("accelerators", {"CPU": 0}).popitem()[0]]
        if isinstance(answer, Exception):
            raise answer
        path = Path(log.name).with_suffix(".node.csv")
        exchange.write_csv(path, [answer])
        log.write("(setup) installing advisor\n")
        for line in path.read_text().splitlines():
            log.write(f"(task, pid=1234) {task.EXPORT_MARK}{line}\n")
        return 0

    def down(self, cluster: str) -> None:
        self.downed.append(cluster)


def test_plan_rents_the_cheapest_matching_offering_and_costs_it() -> None:
    db = database.connect()
    found = plan.plan(db, gpus=["t4", "L4"], cpus=[8], spot=True, probe_seconds=20, tag="ab12")
    t4, l4, cpu = found
    assert (t4.label, t4.rentable.accelerator, t4.rentable.pricing) == ("T4", "T4", "spot")
    assert t4.rentable.usd_per_hour == min(
        r.usd_per_hour for r in database_rows(db, "T4", "spot") if r.accelerator_count == 1
    )
    assert cpu.rentable.accelerator is None and cpu.rentable.vcpus == 8
    assert t4.cluster == "advisor-bench-t4-ab12" and cpu.cluster == "advisor-bench-8-vcpu-ab12"
    for c in found:  # start-up, set-up and the probe, at the offering's price
        assert 600 < c.expected_seconds < 1200
        assert c.expected_usd == pytest.approx(c.rentable.usd_per_hour * c.expected_seconds / 3600)
    assert l4.expected_seconds > cpu.expected_seconds  # CUDA libraries take longer to install


def database_rows(db: Any, accelerator: str, pricing: str) -> list[Any]:
    from pricing import query

    return query.rentables(db, accelerator=accelerator, pricing=pricing)


def test_plan_refuses_what_it_cannot_bench() -> None:
    db = database.connect()
    assert plan.parse_gpus("T4, A100:8,H100:1") == [("T4", 1), ("A100", 8), ("H100", 1)]
    for hostile in ("T4:0", "T4:17", "T4:x", "T4:-1", "T4:1e3", "T4:８"):
        with pytest.raises(UsageError, match="a count is 1-16 accelerators of one machine"):
            plan.parse_gpus(hostile)
    for nodes in (0, 33):
        with pytest.raises(UsageError, match="--nodes must be 1-32"):
            plan.plan(db, gpus=["A100"], cpus=[], spot=False, probe_seconds=20, tag="x",
                      nodes=nodes)  # fmt: skip
    for cpus, spot in (([8], False), ([], True)):
        with pytest.raises(UsageError, match="clusters of on-demand GPU machines"):
            plan.plan(db, gpus=["A100"], cpus=cpus, spot=spot, probe_seconds=20, tag="x", nodes=2)
    with pytest.raises(UsageError, match="vCPU counts"):
        plan.parse_cpus("eight")
    with pytest.raises(UsageError, match="nothing to bench"):
        plan.plan(db, gpus=[], cpus=[], spot=False, probe_seconds=20, tag="x")
    with pytest.raises(UsageError, match="unknown accelerator 'T5'"):
        plan.plan(db, gpus=["T5"], cpus=[], spot=False, probe_seconds=20, tag="x")
    with pytest.raises(UsageError, match="no spot offering of 3 vCPU"):
        plan.plan(db, gpus=[], cpus=[3], spot=True, probe_seconds=20, tag="x")


@pytest.mark.skipif(HAS_SKY, reason="SkyPilot is installed here; the message is for without it")
def test_without_skypilot_a_dry_run_writes_its_tasks_and_a_real_one_says_how_to_install(
    tmp_path: Path,
) -> None:
    code, out, err = invoke(
        "bench", "--model", "mlp", "--gpus", "T4", "--dry-run", "--out", str(tmp_path)
    )
    assert code == 0 and "sky launch --yes" in out and len(list(tmp_path.glob("*.yaml"))) == 1
    assert err.strip().endswith("pip install 'advisor[skypilot]'")
    code, out, err = invoke("bench", "--model", "mlp", "--gpus", "T4", "--yes")
    assert code == 2 and out == ""
    assert err == "advisor: error: advisor bench needs SkyPilot: pip install 'advisor[skypilot]'\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--model", "nope", "--gpus", "T4"), "unknown model 'nope'"),
        (("--model", "mlp", "--gpus", "T5"), "unknown accelerator 'T5'"),
        (("--model", "mlp", "--gpus", "T4:99"), "a count is 1-16 accelerators of one machine"),
        (("--model", "mlp", "--cpus", "eight"), "--cpus takes vCPU counts"),
        (("--model", "mlp", "--cpus", "9" * 5_000), "(5,000 characters)"),
        (("--model", "mlp"), "nothing to bench"),
        (("--model", "mlp", "--gpus", "T4", "--wheel", "x.whl", "--index-url", "y"), "exist"),
    ],
)
def test_arguments_are_checked_before_skypilot_is_asked_for(
    args: tuple[str, ...], says: str
) -> None:
    """With SkyPilot or without it, a bad argument is its own one line (exit 2), never the
    install hint that used to stop every dry run first."""
    code, out, err = invoke("bench", *args, "--dry-run")
    assert code == 2 and out == "" and says in err and INSTALL_HINT not in err
    assert len(err.splitlines()) == 1


@needs_sky
def test_hostile_dry_run_inputs_with_skypilot(tmp_path: Path) -> None:
    """The inputs a dry run takes, tried where SkyPilot is installed (make test-skypilot)."""
    bench = ("bench", "--model", "mlp", "--gpus", "T4", "--dry-run")
    folder = tmp_path / "b\x1b[2Jx"  # a name that clears the screen when printed raw
    code, text, err = invoke(*bench, "--out", str(folder))
    assert code == 0, err
    assert len(list(folder.glob("*.yaml"))) == 1
    assert "\x1b" not in text and "b\\x1b[2Jx" in text
    (tmp_path / "afile").write_text("keep")
    code, _, err = invoke(*bench, "--out", str(tmp_path / "afile"))
    assert code == 2 and "is a file" in err and (tmp_path / "afile").read_text() == "keep"
    code, _, err = invoke(*bench, "--max-cost", "0.0001")
    assert code == 1 and "more than --max-cost" in err and len(err.splitlines()) == 1
    code, _, err = invoke(*bench, "--out", str(tmp_path / ("o" * 5_000)))
    assert code == 1 and "(5,0" in err and len(err.splitlines()) == 1


@needs_sky
@pytest.mark.parametrize("spot", [True, False])
def test_dry_run_tasks_parse_with_skypilot_and_rent_what_was_planned(
    tmp_path: Path,
    spot: bool,
    sky_runtime: Path,  # noqa: F811
) -> None:
    import sky

    out = tmp_path / "bench"
    flag = "--spot" if spot else "--no-spot"
    code, text, err = invoke("bench", "-m", "mlp", "--epochs", "2", "--gpus", "T4,L4,A100-80GB",
                             "--cpus", "8", flag, "--dry-run", "--out", str(out))  # fmt: skip
    assert code == 0, err
    assert "expected cost: $" in text and "sky launch --yes --cluster advisor-bench-t4-" in text
    assert "pip wheel --quiet --no-deps" in text and "advisor import" in text
    written = sorted(out.glob("*.yaml"))
    assert len(written) == 4
    seen = set()
    for path in written:
        parsed = sky.Task.from_yaml(str(path))
        (resources,) = parsed.resources
        accelerators = resources.accelerators or {}
        seen.add(next(iter(accelerators), f"{resources.cpus or resources.instance_type}"))
        assert resources.use_spot is spot
        assert all(count == 1 for count in accelerators.values())
        assert "advisor probe --model mnist_mlp --epochs 2" in parsed.run.replace("env/bin/", "")
        (wheel,) = parsed.file_mounts.values()
        assert wheel.endswith(task.wheel_name())
        assert ("[cuda]" in parsed.setup) is bool(accelerators)
    assert {"T4", "L4", "A100-80GB"} <= seen


@needs_sky
def test_a_cluster_task_parses_with_skypilot_as_two_nodes_of_eight(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sky_runtime: Path,  # noqa: F811
) -> None:
    import sky

    # --backend exports its choice (for the probe's children): undone after this test
    monkeypatch.setenv("KERAS_BACKEND", os.environ.get("KERAS_BACKEND", "tensorflow"))

    out = tmp_path / "bench"
    code, _, err = invoke("bench", "-m", "resnet50", "--gpus", "A100:8", "--nodes", "2",
                          "--backend", "jax", "--dry-run", "--out", str(out))  # fmt: skip
    assert code == 0, err
    (path,) = out.glob("*.yaml")
    parsed = sky.Task.from_yaml(str(path))
    (resources,) = parsed.resources
    assert parsed.num_nodes == 2 and resources.accelerators == {"A100": 8}
    assert "--data-parallel --nodes" in parsed.run and "[jax-cuda]" in parsed.setup


def test_catalog_names_reach_the_yaml_as_data(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with SkyPilot")
    db = database.connect()
    (candidate,) = plan.plan(db, gpus=["T4"], cpus=[], spot=False, probe_seconds=20, tag="x")
    odd = candidate.rentable._replace(instance_type="g4dn.xlarge\nrun: rm -rf ~")
    config = task.task_config(
        replace(candidate, rentable=odd), task.ProbeArgs("mnist_mlp"),
        task.Install(wheel=tmp_path / "a wheel; rm -rf ~.whl"),
    )  # fmt: skip
    path = task.write_yaml(tmp_path / "t.yaml", config, comment="line one\nline two")
    assert yaml.safe_load(path.read_text()) == config
    assert "'a wheel; rm -rf ~.whl[cuda]'" in config["setup"]  # quoted for the shell too


def test_launch_path_with_a_failure_and_a_preemption(tmp_path: Path) -> None:
    """Three candidates launched at once: one measured, one failed, one preempted; every
    cluster torn down; the measurement imported and ranked as measured by recommend."""
    db = database.connect()
    local = probe_on(fingerprint(), 66.0)
    history.save(db, local)
    found = plan.plan(db, gpus=["T4", "L4"], cpus=[8], spot=True, probe_seconds=20, tag="t")
    install = task.Install(wheel=tmp_path / task.wheel_name())
    configs = {c.cluster: task.task_config(c, task.ProbeArgs("mnist_mlp"), install) for c in found}
    cloud = StandIn({
        "T4": probe_on(replace(T4, accelerator="T4"), 30.0),
        "L4": RuntimeError("ResourcesUnavailableError: no L4 capacity in europe-west4"),
        "CPU": Preempted("the spot VM was taken back"),
    })  # fmt: skip
    lines: list[str] = []
    outcomes = launch.import_results(
        db, launch.bench(found, configs, cloud, tmp_path / "out", report=lines.append)
    )
    by_label = {o.candidate.label: o for o in outcomes}
    assert by_label["T4"].status == "measured" and by_label["T4"].csv is not None
    assert by_label["L4"].status == "failed" and "no L4 capacity" in by_label["L4"].message
    assert by_label["8 vCPU"].status == "preempted"
    assert sorted(cloud.downed) == sorted(c.cluster for c in found)
    assert all(o.torn_down for o in outcomes)
    assert any("launching T4" in line for line in lines)
    (imported,) = by_label["T4"].results
    assert imported.device.accelerator == "T4"
    assert exchange.read_csv(by_label["T4"].csv)[0].device == "T4"  # a real exchange file

    payload = recommend("--accelerator", "T4", "--no-spot", "--max-accelerators", "1")
    assert payload["options"]
    for option in payload["options"]:  # one T4: measured; more of them: predicted
        assert option["measured"] is True
        assert option["predicted_hours"] - overhead_hours(option) == pytest.approx(
            (30.0 + 1.2) / 3600, abs=1e-4
        )  # + start-up, after the machine's own start, set-up and checkpoints
    # on spot the same measured run, plus the measured wait for a spot machine
    spot = recommend("--accelerator", "T4", "--spot", "--max-accelerators", "1")
    assert all(o["measured"] is True for o in spot["options"])
    assert all(
        o["predicted_hours"] - overhead_hours(o) >= 31.2 / 3600 - 1e-4 for o in spot["options"]
    )
    other = recommend("--cpu-only", "--top", "3")
    assert all(option["measured"] is False for option in other["options"])


def overhead_hours(option: dict) -> float:
    """What ``option``'s time holds besides its training, billed: the machine's start, its
    set-up, the data set and the checkpoints."""
    return sum(
        option[k] for k in ("boot_hours", "setup_hours", "staging_hours", "checkpoint_hours")
    )


def _run_hours(payload: dict) -> float:
    """The first option's predicted hours without what its machine does besides training."""
    first = payload["options"][0]
    return first["predicted_hours"] - overhead_hours(first)


def test_a_measurement_corrects_the_devices_not_benched() -> None:
    """The T4 measured at twice its prediction: every other GPU moves by the same factor, the
    CPUs do not, and --explain says so."""
    db = database.connect()
    history.save(db, probe_on(fingerprint(), 66.0))
    # on-demand: a spot option's time also holds the wait for a spot machine; the machine's own
    # start (boot_hours) is no part of the training a measurement corrects
    before = _run_hours(recommend("--accelerator", "L4", "--top", "1", "--no-spot"))
    cpu_before = _run_hours(recommend("--cpu-only", "--top", "1", "--no-spot"))
    t4_predicted = _run_hours(recommend("--accelerator", "T4", "--top", "1", "--no-spot"))
    history.save(db, probe_on(T4, 2 * t4_predicted * 3600), source="bench:test")

    after = recommend("--accelerator", "L4", "--top", "1", "--no-spot")
    assert after["options"][0]["measured"] is False
    # 4 decimals of hours, and the start-up is not scaled: within 2%
    assert _run_hours(after) == pytest.approx(2 * before, rel=0.02)
    assert _run_hours(recommend("--cpu-only", "--top", "1", "--no-spot")) == cpu_before
    code, text, _ = invoke("recommend", "-m", "mlp", "--accelerator", "L4", "--explain")
    assert code == 0
    assert "corrected by the measurement on T4: measured/predicted x2" in text
    assert "applied to every GPU not measured" in text
    code, text, _ = invoke("recommend", "-m", "mlp", "--accelerator", "T4", "--top", "1")
    assert "(T4) \u2713, on-demand" in text  # the answer and the table mark any T4 machine
    assert "\u2713 time measured on that machine (advisor bench)" in text  # the mark's meaning


def test_a_bench_names_the_device_as_the_offering_rented() -> None:
    db = database.connect()
    a100, cpu = plan.plan(db, gpus=["A100-80GB"], cpus=[8], spot=False, probe_seconds=20, tag="x")
    named = launch.as_rented(probe_on(replace(T4, accelerator="A100"), 10.0), a100)
    assert named.device.accelerator == "A100-80GB"  # nvidia-smi says A100
    hidden = replace(T4, accelerator=None, cpu_model="Intel(R) Xeon(R) CPU @ 2.20GHz")
    named = launch.as_rented(probe_on(hidden, 10.0), cpu)
    assert named.device.cpu_model == cpu.rentable.cpu_family
    known = replace(hidden, cpu_model="AMD EPYC 7B13")
    assert launch.as_rented(probe_on(known, 10.0), cpu).device.cpu_model == "AMD EPYC 7B13"


LIKE_THIS_MACHINE = {"milan": "c6a.large", "genoa": "c7a.large", "turin": "c8a.large"}
"""A 2-vCPU AWS VM of each AMD EPYC family the development VMs have been."""


def add_offering_like_this_machine(db: Any, instance: str) -> None:
    """A 2-vCPU AMD EPYC VM of this machine's family at c6a.large's us-east-1 list price, so
    this machine's probe has an offering it measured: the shipped prices start at 4 vCPUs."""
    row = Observation("aws", "us-east-1", "", instance, 2.0, 4.0, "", 0, None, False,
                      "on_demand", 0.0765)  # fmt: skip
    with db.conn:
        ingest.write(db, "aws", [row], source="test: c6a.large list price",
                     fetched_at="2026-11-21T00:00:00Z", run_id=None)  # fmt: skip
        materialise.rebuild(db, "aws")


@pytest.mark.tf
def test_the_run_commands_executed_as_the_node_would_are_imported_as_measured(
    tmp_path: Path,
) -> None:
    """The task's run commands, executed here in a home of their own with the advisor setup
    would install (this one), probe for real; their log holds an export that 'advisor import'
    accepts and that, imported by the bench, recommend then reports as measured."""
    db = database.connect()
    device = fingerprint()
    family, _ = catalog.family_of_cpu_model(device.cpu_model)
    instance = LIKE_THIS_MACHINE.get(family)
    if device.logical_cpus != 2 or "EPYC" not in device.cpu_model or device.accelerator:
        pytest.skip("the test's offering is a 2-vCPU AMD EPYC VM, like the machine it ran on")
    if instance is None:
        pytest.skip(f"no 2-vCPU AWS VM of this machine's family ({family}) in the test")
    add_offering_like_this_machine(db, instance)
    (candidate,) = plan.plan(db, gpus=[], cpus=[2], spot=False, probe_seconds=3, tag="tf")
    assert candidate.rentable.instance_type == instance
    args = task.ProbeArgs("mnist_mlp", epochs=1, samples=2048, validation_samples=0,
                          budget_seconds=3)  # fmt: skip
    config = task.task_config(candidate, args, task.Install(wheel=tmp_path / task.wheel_name()))
    node = tmp_path / "node"
    (node / "advisor-bench" / "env" / "bin").mkdir(parents=True)
    (node / "advisor-bench" / "env" / "bin" / "advisor").symlink_to(
        Path(sys.executable).parent / "advisor"
    )
    env = {**os.environ, "HOME": str(node)}
    env.pop("ADVISOR_HOME")
    done = subprocess.run(["bash", "-c", config["run"]], env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    csv = task.exported(done.stdout)
    assert csv is not None and csv.startswith(",".join(exchange.COLUMNS))
    path = tmp_path / "export.csv"
    path.write_text(csv)
    code, text, err = invoke("import", str(path))
    assert code == 0, err
    assert text.startswith("imported 1 probe result(s)")
    # what a bench does with the same file: import it, naming the device as the offering rented
    # ("AMD EPYC" alone does not say which family; the rented c6a.large does)
    (outcome,) = launch.import_results(db, [launch.Outcome(candidate, "measured", csv=path)])
    assert outcome.status == "measured" and outcome.results
    payload = recommend("--epochs", "1", "--samples", "2048", "--validation-samples", "0",
                        "--provider", "aws", "--cpu-only", "--no-spot")  # fmt: skip
    chosen = [o for o in payload["options"] if o["instance_type"] == instance]
    assert chosen and chosen[0]["measured"] is True


@pytest.mark.parametrize(
    ("backend", "gpu_extra", "cpu_extra"),
    [("tensorflow", "[cuda]", ""), ("jax", "[jax-cuda]", "[jax]"), ("torch", "[torch]", "[torch]")],
)
def test_a_bench_probes_with_its_backend_installed_by_its_extra(
    tmp_path: Path, backend: str, gpu_extra: str, cpu_extra: str
) -> None:
    db = database.connect()
    gpu, cpu = plan.plan(db, gpus=["T4"], cpus=[8], spot=False, probe_seconds=20, tag="b")
    args = task.ProbeArgs("mnist_mlp", backend=backend)
    install = task.Install(wheel=tmp_path / task.wheel_name())
    for candidate, extra in ((gpu, gpu_extra), (cpu, cpu_extra)):
        config = task.task_config(candidate, args, install)
        assert f"--backend {backend}" in config["run"]
        assert shlex.split(config["setup"])[-1].endswith(f"{task.wheel_name()}{extra}")


def test_a_cluster_bench_rents_every_node_and_probes_data_parallel(tmp_path: Path) -> None:
    """``--gpus A100:8 --nodes 2``: two on-demand machines of eight A100s whose network
    ``advisor recommend`` knows, both paid for; every node probes, data parallel, meeting at the
    first node SkyPilot lists, and only that one prints the export. One machine of eight probes
    data parallel alone; one GPU as before."""
    db = database.connect()
    (cluster,) = plan.plan(db, gpus=[("A100", 8)], cpus=[], spot=False, probe_seconds=20,
                           tag="c", nodes=2)  # fmt: skip
    r = cluster.rentable
    assert (cluster.label, cluster.nodes, r.accelerator_count) == ("2 nodes of 8x A100", 2, 8)
    assert catalog.node_network(r.provider, r.instance_type or "") is not None
    assert cluster.expected_usd == pytest.approx(
        2 * r.usd_per_hour * cluster.expected_seconds / 3600
    )
    (machine,) = plan.plan(db, gpus=[("A100", 8)], cpus=[], spot=False, probe_seconds=20, tag="m")
    (one,) = plan.plan(db, gpus=["A100"], cpus=[], spot=False, probe_seconds=20, tag="o")
    assert machine.rentable.usd_per_hour <= r.usd_per_hour  # any network will do for one
    args = task.ProbeArgs("resnet50", backend="jax")
    install = task.Install(wheel=tmp_path / task.wheel_name())
    config = task.task_config(cluster, args, install)
    assert config["num_nodes"] == 2 and config["resources"]["accelerators"] == {"A100": 8}
    run = config["run"]
    assert '--data-parallel --nodes "$SKYPILOT_NUM_NODES" --node-rank "$SKYPILOT_NODE_RANK"' in run
    assert 'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then sed' in run
    alone = task.task_config(machine, args, install)
    assert "num_nodes" not in alone and alone["run"].splitlines()[-2].endswith(" --data-parallel")
    single = task.task_config(one, args, install)
    assert "--data-parallel" not in single["run"] and "num_nodes" not in single


def test_a_cluster_bench_needs_jax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERAS_BACKEND", raising=False)  # the default, TensorFlow
    for gpus in (["--gpus", "A100:8"], ["--gpus", "A100:8", "--nodes", "2"]):
        code, _, err = invoke("bench", "--model", "mlp", *gpus, "--dry-run", "--out",
                              str(tmp_path))  # fmt: skip
        assert code == 2 and "runs on JAX only: add --backend jax" in err
        assert "Traceback" not in err


@pytest.mark.jax
def test_the_run_commands_of_a_cluster_executed_as_its_two_nodes_would(tmp_path: Path) -> None:
    """The task of a two-node bench run as SkyPilot runs it: the same run commands on two
    "nodes" (two processes here, each with its own home and SkyPilot's variables), which meet
    at the first node's address and train the workload data parallel for real (Keras's
    distribution API on JAX, gloo between the processes: one CPU device each). Only rank 0
    prints its export; it says two devices over two nodes, the global batch's steps, and
    imports. What cannot run here: the rented machines (the addresses are 127.0.0.1)."""
    (cluster,) = plan.plan(database.connect(), gpus=[("A100", 8)], cpus=[], spot=False,
                           probe_seconds=4, tag="n", nodes=2)  # fmt: skip
    args = task.ProbeArgs("mnist_mlp", epochs=2, samples=4096, validation_samples=512,
                          budget_seconds=4, backend="jax")  # fmt: skip
    run = task.task_config(cluster, args, task.Install(wheel=tmp_path / "w.whl"))["run"]
    nodes = []
    for rank in (0, 1):
        home = tmp_path / f"node{rank}"
        (home / "advisor-bench" / "env" / "bin").mkdir(parents=True)
        (home / "advisor-bench" / "env" / "bin" / "advisor").symlink_to(
            Path(sys.executable).parent / "advisor"
        )
        env = {**os.environ, "HOME": str(home), "SKYPILOT_NUM_NODES": "2",
               "SKYPILOT_NODE_RANK": str(rank), "SKYPILOT_NODE_IPS": "127.0.0.1\n127.0.0.1"}  # fmt: skip
        env.pop("ADVISOR_HOME")
        nodes.append(subprocess.Popen(["bash", "-c", run], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))  # fmt: skip
    (out0, err0), (out1, err1) = (node.communicate(timeout=300) for node in nodes)
    assert nodes[0].returncode == 0, err0[-2000:]
    assert nodes[1].returncode == 0, err1[-2000:]
    assert task.exported(out1) is None  # rank 1 trained, and said nothing
    assert "Gloo" not in out0 + out1  # its C++ talks on stderr, not in what the probe prints
    csv = task.exported(out0)
    assert csv is not None
    path = tmp_path / "cluster.csv"
    path.write_text(csv)
    (result,) = exchange.from_rows(exchange.read_csv(path))
    assert (result.device.devices, result.device.nodes, result.device.backend) == (2, 2, "jax")
    assert result.config.batch_size == 128 and result.global_batch == 256
    assert result.steps_per_epoch == 16  # 4,096 samples at 256 a step
    epoch = 16 * result.step_seconds + 2 * result.validation_step_seconds
    expected = 2 * (epoch + result.epoch_overhead_seconds)
    assert 0 < result.validation_step_seconds < result.step_seconds
    assert result.predicted_seconds == pytest.approx(expected, rel=1e-6)
    assert 0 < result.step_interval[0] <= result.step_seconds <= result.step_interval[1]
    assert result.probe_seconds < 4 + 30  # its rounds stop by the budget (start-up aside)


def test_a_cluster_measured_by_a_bench_stands_for_that_cluster_alone() -> None:
    """A probe of 2 x 8 A100s: that cluster's options are measured; one machine of eight and
    single A100s keep their predictions (a data-parallel measurement corrects no other)."""
    db = database.connect()
    history.save(db, probe_on(fingerprint(), 66.0))
    asked = ("--accelerator", "A100", "--no-spot", "--top", "200")
    before = {_shape(o): o for o in recommend(*asked)["options"]}
    a100 = replace(T4, accelerator="A100", accelerator_memory_gib=40.0, devices=16, nodes=2)
    history.save(db, probe_on(a100, 20.0), source="bench:test")
    after = recommend(*asked)["options"]
    measured = [o for o in after if o["measured"]]
    assert measured and all(_shape(o)[1:] == (8, 2) for o in measured)
    for option in measured:
        assert option["predicted_hours"] - overhead_hours(option) == pytest.approx(
            (20.0 + 1.2) / 3600, abs=1e-4
        )
    for option in after:
        if not option["measured"] and _shape(option) in before:
            assert option["predicted_hours"] == before[_shape(option)]["predicted_hours"]
    assert any(_shape(o)[1:] == (8, 1) and not o["measured"] for o in after)


def test_a_data_parallel_measurement_is_that_offering_and_says_so() -> None:
    """Measured on 2 x 8 A100s: used as it is there, said as such; one machine of eight, or
    eight machines of one, are other offerings (predicted)."""
    from advisor.estimate import predict
    from advisor.estimate.prediction import Target

    a100 = replace(T4, accelerator="A100", accelerator_memory_gib=40.0, devices=16, nodes=2)
    measured = probe_on(a100, 20.0)
    there = predict(measured, Target("A100", 8, nodes=2, network_gbps=100.0))
    assert there.measured and there.seconds == 20.0
    assert "measured by a probe on these 16 devices, data parallel over 2 nodes" in there.steps[0]
    for other in (Target("A100", 8), Target("A100", 2, nodes=8, network_gbps=100.0)):
        assert not predict(measured, other).measured
    # a cluster's export that claims the whole run in a microsecond is held at what 16 A100s can
    # do at their datasheet peaks for its global batch's steps, and says so
    claimed = probe_on(a100, 1e-6)
    held = predict(claimed, Target("A100", 8, nodes=2, network_gbps=100.0))
    assert held.measured and held.seconds == held.least_seconds > 1e-6
    assert "datasheet peaks: held there" in held.steps[-1]


def _shape(option: dict) -> tuple[str, int, int]:
    return (option["instance_type"], option["accelerator_count"], option["nodes"])
