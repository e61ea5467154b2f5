"""An LLM probe's name: what probe_name writes reads back as its job, and nothing else does."""

from __future__ import annotations

import pytest

from advisor.errors import UsageError
from advisor.workloads.llm_job import job_for, job_of_probe, probe_name


@pytest.mark.parametrize(
    "name",
    [
        "llm:qwen2.5-0.5b:lora:r16-all:abc",  # a length that is no number
        "llm:qwen2.5-0.5b:lora:16-all:2048",  # a rank without its r (read as 6 before)
        "llm:qwen2.5-0.5b:lora:r16-all:2048:junk",
        "llm:qwen2.5-0.5b:full:r16-all:2048",  # adapters on a full fine-tune
        "llm:qwen2.5-0.5b:lora:r99999-all:2048",
        "llm:qwen2.5-0.5b:lora:r16-all:99999999",
        "llm:qwen2.5-0.5b:lora:r16-all:0",
        "llm:",
        "llm:qwen2.5-0.5b:lora",
    ],
)
def test_a_malformed_probe_name_is_one_usage_error(name: str) -> None:
    with pytest.raises(UsageError, match="not an LLM probe name"):
        job_of_probe(name, 16, 1, 1)


def test_every_probe_name_reads_back_as_its_job() -> None:
    for method, rank in (("full", None), ("lora", 16), ("qlora", 64)):
        job = job_for("qwen2.5-0.5b", method=method, rank=rank, examples=16, sequence=512)
        name = probe_name(job)
        assert probe_name(job_of_probe(name, 16, 1, 1)) == name
