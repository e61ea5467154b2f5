"""Probe results in SQLite and in the exchange CSV: store, reuse, export, import."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from advisor.cli import cli
from advisor.errors import AdvisorError, UsageError
from advisor.store import connect, migrate, schema_version
from probes import exchange, history
from probes.device import fingerprint
from probes.result import Architecture, Fingerprint, ProbeResult, RecurrentLayer, WorkloadConfig
from tests.base.test_imports import imported_after
from tests.base.test_storage_faults import read_only_folder

CONFIG = WorkloadConfig("imdb_bilstm", 25_000, 25_000, 4, 32)


def result(
    config: WorkloadConfig = CONFIG,
    device: Fingerprint | None = None,
    created: str = "2026-01-01T00:00:00+00:00",
) -> ProbeResult:
    return ProbeResult(
        config=config, device=device or fingerprint(), step_seconds=0.0371,
        step_interval=(0.0363, 0.0379), validation_step_seconds=0.0117,
        epoch_overhead_seconds=0.0465, startup_seconds=3.85, predicted_seconds=150.25,
        predicted_interval=(140.5, 161.0), samples_per_second=862.5, probe_seconds=15.5,
        flops_per_sample=59e6, parameters=2_658_945, peak_host_bytes=793_169_920,
        thread_scaling={1: 0.06, 2: 0.0371}, batch_scaling={32: 0.0371}, created_at=created,
    )  # fmt: skip


def test_save_find_and_reuse(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db")
    here = fingerprint()
    assert history.find(db, CONFIG, here.key) is None
    history.save(db, result())
    assert schema_version(db, "probes") == len(history.STEPS)
    assert history.find(db, CONFIG, here.key) == result()
    assert history.find(db, dataclasses.replace(CONFIG, epochs=5), here.key) is None
    newer = dataclasses.replace(result(), predicted_seconds=141.0)
    history.save(db, newer)  # same key: replaced, not duplicated
    assert history.find(db, CONFIG, here.key) == newer
    assert len(history.latest(db, "imdb_bilstm")) == 1
    reopened = connect(tmp_path / "a.db")
    assert history.find(reopened, CONFIG, here.key) == newer


def test_latest_includes_other_devices(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db")
    gpu = dataclasses.replace(fingerprint(), accelerator="T4", accelerator_memory_gib=15.0)
    history.save(db, result())
    history.save(db, result(device=gpu, created="2026-02-01T00:00:00+00:00"), source="import:x.csv")
    found = history.latest(db, "imdb_bilstm")
    assert [r.device.accelerator for r in found] == ["T4", None]
    assert history.latest(db, "mnist_mlp") == []


def test_export_import_round_trip(tmp_path: Path) -> None:
    original = dataclasses.replace(result(), dispatch_seconds=0.0007, layer_dispatch_seconds=155e-6,
                                   host_layers=176, device_kernels=1066, keras=False)  # fmt: skip
    path = tmp_path / "probe.csv"
    assert exchange.write_csv(path, [original]) == 4
    rows = exchange.read_csv(path)
    assert [row.metric for row in rows] == list(exchange.METRICS)
    assert [row.line for row in rows] == [2, 3, 4, 5]
    (back,) = exchange.from_rows(rows)
    assert back.device == original.device and back.device.key == original.device.key
    assert back.config == original.config
    for name in ("step_seconds", "step_interval", "predicted_seconds", "predicted_interval",
                 "startup_seconds", "validation_step_seconds", "epoch_overhead_seconds",
                 "parameters", "flops_per_sample", "created_at", "extrapolated",
                 "dispatch_seconds", "layer_dispatch_seconds", "host_layers", "device_kernels",
                 "keras"):  # fmt: skip
        assert getattr(back, name) == getattr(original, name), name
    # a file from before the host's floor was exported reads it as not measured
    older = path.read_text().replace("; dispatch_s=0.0007", "").replace("; host_layers=176", "")
    path.write_text(older.replace("; keras=0", ""))
    (back,) = exchange.from_rows(exchange.read_csv(path))
    assert back.dispatch_seconds == 0 and back.host_layers == 0
    assert back.keras  # and a file from before scripts' own loops: Keras drove it
    # and one from before the topology was read: the family's, not a guess
    older = path.read_text().replace(f"; threads_per_core={original.device.threads_per_core}", "")
    path.write_text(older)
    (back,) = exchange.from_rows(exchange.read_csv(path))
    assert back.device.threads_per_core == 0 and back.device.key == original.device.key


def test_a_data_parallel_probe_round_trips_its_devices_and_nodes(tmp_path: Path) -> None:
    """Sixteen devices over two nodes come back as such; a file from before data-parallel
    probes reads as one device on one node, under the key it always had."""
    original = result()
    spread = dataclasses.replace(
        original, device=dataclasses.replace(original.device, devices=16, nodes=2)
    )
    path = tmp_path / "probe.csv"
    exchange.write_csv(path, [spread])
    (back,) = exchange.from_rows(exchange.read_csv(path))
    assert (back.device.devices, back.device.nodes) == (16, 2)
    assert back.device.key == spread.device.key != original.device.key
    exchange.write_csv(path, [original])
    path.write_text(path.read_text().replace("; devices=1; nodes=1", ""))
    assert "devices=" not in path.read_text()
    (back,) = exchange.from_rows(exchange.read_csv(path))
    assert (back.device.devices, back.device.nodes) == (1, 1)
    assert back.device.key == original.device.key


@pytest.mark.parametrize(
    ("devices", "nodes"),
    [("0", "1"), ("-1", "1"), ("70000", "1"), ("1.5", "1"), ("x", "1"), ("2", "3"), ("2", "0"),
     ("4096", "2000"), ("", "1"), ("nan", "1"), ("inf", "1"), ("2", "-inf"),
     ("9" * 5000, "1"), ("16; rm -rf ~", "2")],
)  # fmt: skip
def test_impossible_devices_or_nodes_in_an_export_are_one_usage_error(
    tmp_path: Path, devices: str, nodes: str
) -> None:
    path = tmp_path / "probe.csv"
    exchange.write_csv(path, [result()])
    text = path.read_text().replace("devices=1; nodes=1", f"devices={devices}; nodes={nodes}")
    path.write_text(text)
    with pytest.raises(UsageError, match=r"probe\.csv:2:"):
        exchange.from_rows(exchange.read_csv(path), str(path))


@pytest.mark.parametrize("value", ["-1", "65", "2.5", "two"])
def test_an_impossible_topology_in_an_export_is_one_usage_error(tmp_path: Path, value: str) -> None:
    one = dataclasses.replace(
        result(), device=dataclasses.replace(fingerprint(), threads_per_core=2)
    )
    path = tmp_path / "probe.csv"
    exchange.write_csv(path, [one])
    path.write_text(path.read_text().replace("threads_per_core=2", f"threads_per_core={value}"))
    with pytest.raises(UsageError, match=r"probe\.csv:2:"):
        exchange.from_rows(exchange.read_csv(path), str(path))


@pytest.mark.parametrize("value", ["2", "yes", ""])
def test_a_keras_flag_other_than_0_or_1_in_an_export_is_one_usage_error(
    tmp_path: Path, value: str
) -> None:
    path = tmp_path / "probe.csv"
    exchange.write_csv(path, [result()])
    path.write_text(path.read_text().replace("keras=1", f"keras={value}"))
    with pytest.raises(UsageError, match=r"probe\.csv:2: .*keras"):
        exchange.from_rows(exchange.read_csv(path), str(path))


HEADER = ",".join(exchange.LEGACY_COLUMNS)  # a file from before the backend column
PUBLISHED = "woolf,mnist_mlp,K80,,,tf-1.2,,128,20,seconds_total,65.1,from a blog"


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "bad.csv"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_a_published_row_reads_typed_and_is_no_probe_export(tmp_path: Path) -> None:
    (row,) = exchange.read_csv(write(tmp_path, HEADER, PUBLISHED))
    assert row == exchange.Row(
        source="woolf", workload="mnist_mlp", device="K80", vcpus=None, cpu_family=None,
        software="tf-1.2", precision="fp32", batch_size=128, epochs=20, metric="seconds_total",
        value=65.1, notes="from a blog", line=2,
    )  # fmt: skip
    with pytest.raises(AdvisorError, match="not an advisor probe export"):
        exchange.from_rows([row])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (PUBLISHED.replace("seconds_total", "minutes"), "unknown metric 'minutes' (expected one"),
        (PUBLISHED.replace(",,128", ",int3,128"), "unknown precision 'int3' (expected one"),
        (PUBLISHED.replace("65.1", "abc"), "value 'abc' is not a number"),
        (PUBLISHED.replace("65.1", "-5"), "value must be positive and finite, got -5"),
        (PUBLISHED.replace("65.1", "nan"), "value must be positive and finite, got nan"),
        (PUBLISHED.replace("65.1", ""), "value is empty"),
        (PUBLISHED.replace("128", "12.5"), "batch_size '12.5' is not a whole number"),
        (PUBLISHED.replace("128", ""), "batch_size is empty"),
        (PUBLISHED.replace(",20,", ",0,"), "epochs must be positive, got 0"),
        (PUBLISHED.replace(",20,", ",,"), "seconds_total needs epochs"),
        (PUBLISHED.replace("K80,,", "CPU,,"), "a CPU row needs vcpus"),
        (PUBLISHED.replace("K80,,", "CPU,2.5,"), "vcpus '2.5' is not a whole number"),
        (PUBLISHED.replace("mnist_mlp", " "), "workload is empty"),
        (PUBLISHED + ",extra", "wrong number of fields (expected 12)"),
        (PUBLISHED.rsplit(",", 1)[0], "wrong number of fields (expected 12)"),
    ],
)
def test_a_bad_row_is_one_usage_error_naming_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = write(tmp_path, HEADER, PUBLISHED, line, PUBLISHED)
    with pytest.raises(UsageError) as caught:
        exchange.read_csv(path)
    assert str(caught.value).startswith(f"{path}:3: {message}")


def test_line_numbers_count_blank_lines_and_quoted_line_breaks(tmp_path: Path) -> None:
    quoted = PUBLISHED.replace("from a blog", '"two\nlines"')
    path = write(tmp_path, HEADER, quoted, "", PUBLISHED.replace("65.1", "abc"))
    with pytest.raises(UsageError, match=rf"^{path}:5: value 'abc'"):
        exchange.read_csv(path)
    path.write_text(path.read_text().replace("abc", "65.1"))
    assert [row.line for row in exchange.read_csv(path)] == [3, 5]


@pytest.mark.parametrize(
    "header",
    [
        "workload,value",
        "",
        HEADER.replace(",notes", ""),
        HEADER + ",extra",
        HEADER.replace("source,workload", "workload,source"),
    ],
)
def test_the_header_must_be_the_exchange_columns_in_order(tmp_path: Path, header: str) -> None:
    path = write(tmp_path, header, PUBLISHED)
    expected = (
        f"{path}: not in the reference format: the header must be "
        f"{','.join(exchange.COLUMNS)} (or the same without backend)"
    )
    with pytest.raises(UsageError) as caught:
        exchange.read_csv(path)
    assert str(caught.value) == expected


def test_an_unreadable_file_is_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot read .*missing\.csv: No such file"):
        exchange.read_csv(tmp_path / "missing.csv")
    latin = tmp_path / "latin.csv"
    latin.write_bytes(f"{HEADER}\n{PUBLISHED}\n".replace("blog", "bl\u00f6g").encode("latin-1"))
    with pytest.raises(UsageError, match=r"latin\.csv: not a UTF-8 text file"):
        exchange.read_csv(latin)


def test_advisor_import_of_a_bad_file_exits_2_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER, PUBLISHED.replace("seconds_total", "minutes"))
    result = CliRunner().invoke(cli, ["import", str(path)])
    assert result.exit_code == 2
    assert f"{path}:2: unknown metric 'minutes'" in result.output


def test_the_format_module_imports_neither_estimation_nor_tensorflow() -> None:
    modules = imported_after("import probes.exchange")
    assert not {"tensorflow", "keras"} & modules
    assert not any(name.startswith("advisor.estimate") for name in modules)


def test_every_probe_is_kept_as_a_run_and_their_spread_is_measured(tmp_path: Path) -> None:
    """Repeated probes of one workload on one device: the stored result is the newest, every run
    counts towards this machine's spread (pooled over configurations, the newest ten of each)."""
    db = connect(tmp_path / "a.db")
    here = fingerprint()
    assert history.run_log_sigma(db, here.key) is None  # no history yet
    for i, seconds in enumerate((100.0, 120.0, 90.0, 110.0)):
        history.save(
            db,
            dataclasses.replace(
                result(created=f"2026-01-0{i + 1}T00:00:00+00:00"),
                predicted_seconds=seconds,
                predicted_interval=(seconds * 0.9, seconds * 1.1),
            ),
        )
    found = history.run_log_sigma(db, here.key)
    assert found is not None
    sigma, runs = found
    logs = [math.log(s) for s in (100.0, 120.0, 90.0, 110.0)]
    mean = sum(logs) / 4
    assert runs == 4
    assert sigma == pytest.approx(math.sqrt(sum((x - mean) ** 2 for x in logs) / 3))
    assert history.find(db, CONFIG, here.key).predicted_seconds == 110.0  # type: ignore[union-attr]
    assert history.run_log_sigma(db, "another-device") is None


def test_the_counted_architecture_survives_the_store_and_the_export(tmp_path: Path) -> None:
    layer = RecurrentLayer("lstm", 64, 128, 100, directions=2, cudnn=True)
    architecture = Architecture(5.9e7, 0.0, 9.0e4, (layer,), input_bytes=400.0, matmul_rows=128)
    counted = dataclasses.replace(result(), architecture=architecture)
    db = connect(tmp_path / "a.db")
    history.save(db, counted)
    assert history.find(db, CONFIG, counted.device.key) == counted
    exchange.write_csv(tmp_path / "x.csv", [counted])
    (back,) = exchange.from_rows(exchange.read_csv(tmp_path / "x.csv"))
    assert back.architecture == counted.architecture
    # an export from before the input bytes were counted still reads, without them
    older = exchange.architecture_of_note("5.9e+07|0|90000|")
    assert older.input_bytes == 0.0 and older.train_flops_per_sample == 5.9e7
    assert exchange.architecture_of_note("5.9e+07|0|90000||400").matmul_rows == 0.0


def test_a_stored_probe_without_the_architecture_loads_with_none() -> None:
    blob = history.to_json(result())
    raw = json.loads(blob)
    del raw["architecture"]
    assert history.from_json(json.dumps(raw)).architecture is None


def test_an_insane_architecture_is_refused() -> None:
    from probes.validity import problem

    bad = Architecture(float("nan"))
    assert "train_flops_per_sample" in (
        problem(dataclasses.replace(result(), architecture=bad)) or ""
    )
    negative = Architecture(1.0, input_bytes=-4.0)  # would pull a GPU step's floor down
    assert "input_bytes" in (problem(dataclasses.replace(result(), architecture=negative)) or "")
    rows = Architecture(1.0, matmul_rows=float("inf"))  # would widen every product
    assert "matmul_rows" in (problem(dataclasses.replace(result(), architecture=rows)) or "")
    odd = Architecture(1.0, recurrent=(RecurrentLayer("transformer", 1, 1, 1),))
    assert "cell" in (problem(dataclasses.replace(result(), architecture=odd)) or "")


def test_probe_json_shows_the_counted_architecture() -> None:
    from advisor.cli.probe import summary

    layer = RecurrentLayer("vanilla", 100, 1, 784)
    counted = dataclasses.replace(result(), architecture=Architecture(4.75e7, recurrent=(layer,)))
    shown = json.loads(json.dumps(summary(counted)))["architecture"]
    assert shown["recurrent"][0] == {
        "cell": "vanilla", "units": 100, "inputs": 1, "timesteps": 784,
        "directions": 1, "sequences": 1, "cudnn": False,
    }  # fmt: skip
    assert summary(result())["architecture"] is None


@pytest.mark.parametrize(
    "note",
    ["1e6|0|5", "1e6|0|5|lstm:64:128", "1e6|0|5|lstm:a:1:1:1:1:1", "nan|0|5|",
     "1e6|0|5|rnn:1:1:1:1:1:0", "1e6|0|5|lstm:1:1:1:3:1:1"],
)  # fmt: skip
def test_a_bad_architecture_note_is_one_usage_error(tmp_path: Path, note: str) -> None:
    counted = dataclasses.replace(result(), architecture=Architecture(1e6))
    exchange.write_csv(tmp_path / "x.csv", [counted])
    text = (tmp_path / "x.csv").read_text(encoding="utf-8")
    (tmp_path / "x.csv").write_text(text.replace("1e+06|0|0||0|0", note), encoding="utf-8")
    with pytest.raises(UsageError, match=r"x\.csv:2: "):
        exchange.from_rows(exchange.read_csv(tmp_path / "x.csv"), str(tmp_path / "x.csv"))


def test_an_llm_jobs_proxy_probe_survives_export_and_import(tmp_path: Path) -> None:
    """An exported LLM proxy probe (its workload the job's probe name) imports, found again
    by that name; a name that names no job, or not the way the job names itself, is refused."""
    from advisor.workloads import llm_job

    name = llm_job.probe_name(llm_job.job_for("qwen2.5-0.5b", method="lora", tokens=10**6))
    proxy = dataclasses.replace(result(), config=dataclasses.replace(CONFIG, workload=name))
    path = tmp_path / "llm.csv"
    exchange.write_csv(path, [proxy])
    (back,) = exchange.from_rows(exchange.read_csv(path))
    assert back.config.workload == name
    for hostile in (
        "llm:nope:lora:r16-all:2048",
        name + ":extra",
        "llm:qwen2.5-0.5b:lora:r16-all:1e99",
    ):
        path.write_text(path.read_text().replace(name, hostile))
        with pytest.raises(AdvisorError):
            exchange.from_rows(exchange.read_csv(path))
        path.write_text(path.read_text().replace(hostile, name))


def test_recent_probe_times_leave_out_a_scripts_own_run(tmp_path: Path) -> None:
    """What a probe here takes (announced before the next one) is the zoo's and files' probes:
    a training command's probe runs the user's script for its own budget, and is left out."""
    db = connect(tmp_path / "a.db")
    history.save(db, result())
    other = dataclasses.replace(CONFIG, epochs=5)
    history.save(db, dataclasses.replace(result(other), probe_seconds=22.0,
                                         created_at="2026-01-02T00:00:00+00:00"))  # fmt: skip
    script = dataclasses.replace(CONFIG, workload="script:train")
    history.save(db, dataclasses.replace(result(script), probe_seconds=900.0))
    assert history.recent_probe_seconds(db, fingerprint().key) == [22.0, 15.5]
    assert history.recent_probe_seconds(db, "another-machine") == []
    proxy = dataclasses.replace(CONFIG, workload="llm:llama3.1-70b:full:all:2048")
    history.save(db, dataclasses.replace(result(proxy), probe_seconds=24.0))
    assert history.recent_probe_seconds(db, fingerprint().key) == [22.0, 15.5]  # apart
    assert history.recent_probe_seconds(db, fingerprint().key, llm=True) == [24.0]


def test_a_fallback_is_stored_with_its_reason_until_a_probe_replaces_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A probe that could not run here is remembered, one clean line, per configuration and
    device; a read-only database from before the fallbacks' table reads as having none."""
    db = connect(tmp_path / "a.db")
    here = fingerprint().key
    assert history.find_fallback(db, CONFIG, here) is None
    saved = history.save_fallback(db, CONFIG, here, "does not fit\n  in memory " + "x" * 900)
    assert saved.reason.startswith("does not fit in memory x") and len(saved.reason) == 500
    assert history.find_fallback(db, CONFIG, here) == saved
    assert history.find_fallback(db, CONFIG, "another-machine") is None
    assert history.find_fallback(db, dataclasses.replace(CONFIG, epochs=5), here) is None
    history.save(db, result())
    assert history.find_fallback(db, CONFIG, here) is None
    folder = tmp_path / "older"
    migrate(connect(folder / "a.db"), "probes", history.STEPS[:2])  # before the fallbacks
    with read_only_folder(folder / "a.db", monkeypatch):
        assert history.find_fallback(connect(folder / "a.db"), CONFIG, here) is None
