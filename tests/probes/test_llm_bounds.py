"""An LLM job's probe keeps its bounds: its budget + 5 s and 4 GiB, whatever the model's size,
its proxy shrunk to fit rather than running out (``probes.loading.proxy_parameter_cap``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from advisor import service
from advisor.workloads.llm_job import Options
from probes import loading
from probes.child import child_command
from probes.limits import LLM_PROBE_MEMORY_BYTES, LLM_PROBE_OVERRUN_SECONDS
from probes.spec import spec_for


def test_the_proxy_cap_holds_the_memory_bound_and_the_budget() -> None:
    """What a weight takes at its peak (trained or frozen) times the cap fits beside the rest
    under the bound; a smaller budget steps fewer weights."""
    full = spec_for("llm:llama3.1-70b:full:all:2048", samples=100, epochs=1, batch_size=1)
    qlora = spec_for("llm:llama3.1-70b:qlora:r16-all:2048", samples=100, epochs=1, batch_size=1)
    assert full.workload is not None and qlora.workload is not None
    for spec, per_weight in ((full, loading.TRAINED_BYTES), (qlora, loading.FROZEN_BYTES)):
        cap = loading.proxy_parameter_cap(spec.workload, 1e6)
        assert cap * per_weight + loading.PROXY_BASELINE_BYTES <= LLM_PROBE_MEMORY_BYTES
        assert loading.proxy_parameter_cap(spec.workload, 5.0) < cap


def test_the_probe_child_counts_its_budget_from_its_own_start() -> None:
    """Its age includes what a process spends before the probe starts (Python's imports here,
    TensorFlow's in a probe): what the user waits for."""
    code = (
        "import time; time.sleep(0.6); from probes.child import _age_seconds; print(_age_seconds())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 0.6 <= float(done.stdout) < 30


@pytest.mark.tf
def test_a_70b_proxy_probe_keeps_its_budget_and_memory_bound() -> None:
    """The whole probe child (its start, TensorFlow's import, the build, the steps, the host's
    dispatch) of a 70B full fine-tune's proxy, which at its real width wanted 14.8 GiB and
    ran 220 s: within the budget + 5 s and under 4 GiB at its peak, narrowed and said so."""
    budget = 5.0
    request = service.Request("llama3.1-70b", finetune=Options(method="full", tokens=20_000_000))
    started = time.perf_counter()
    child = subprocess.Popen(
        child_command(service.spec_of(request), budget), stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdin is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.stdin.close()
    result = next(json.loads(x)["result"] for x in out.splitlines() if '"result"' in x)
    assert status == 0
    assert seconds <= budget + LLM_PROBE_OVERRUN_SECONDS
    assert usage.ru_maxrss * 1024 < LLM_PROBE_MEMORY_BYTES  # Linux reports KiB
    assert "of 8192 wide" in result["extrapolated_from"] and result["dispatch_seconds"] > 0
