"""Issue 48, hostile input round four: the cases ``benchmarks/robustness.py`` adds for it.

Malformed LLM probe names, the app without a terminal, model paths that are devices or pipes,
a layer size that is no number, binary on standard input, a count said as typed, and the
many-device options of the scale-out work. Built by ``round_four(Case)`` with the runner's own
``Case`` (this module imports nothing of it).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.inputs import dense_config


def _fifo(name: str) -> Callable[[Path], None]:
    def make(work: Path) -> None:
        os.mkfifo(work / name)

    return make


def _sized(name: str, units: object) -> Callable[[Path], None]:
    """A .keras file whose one Dense layer's ``units`` is ``units`` (written as JSON)."""

    def make(work: Path) -> None:
        config = dense_config(4, 4)
        config["config"]["layers"][1]["config"]["units"] = units
        with zipfile.ZipFile(work / name, "w") as archive:
            archive.writestr("metadata.json", json.dumps({"keras_version": "3.12.0"}))
            archive.writestr("config.json", json.dumps(config))
            archive.writestr("model.weights.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 64)

    return make


def round_four(case: Callable[..., Any]) -> list[Any]:
    keras_args = ("--samples", "100", "--epochs", "1")
    llm = ("recommend", "--model", "llama3-8b", "--tokens", "1M", "--deadline", "8h")
    rec = ("recommend", "--model", "mlp", "--top", "2")
    return [
        # 1. tracebacks
        case("probe an llm: name whose length is no number",
             ("probe", "--model", "llm:qwen2.5-0.5b:lora:r16-all:abc"), 2,
             says="not an LLM probe name"),
        case("probe an llm: name whose rank lacks its r",
             ("probe", "--model", "llm:qwen2.5-0.5b:lora:16-all:2048"), 2,
             says="not an LLM probe name"),
        case("the app with standard input closed", (), 2, stdin_closed=True,
             says="the app needs a terminal"),
        case("the app with no terminal (</dev/null >/dev/null)", (), 2, stdin="",
             max_seconds=5.0, says="the app needs a terminal"),
        # 2. and 3. memory and hangs: a device, a pipe
        case("recommend a .keras that links to /dev/zero", ("recommend", "--model",
             "{dir}/z.keras", *keras_args, "--deadline", "8h"), 2,
             links={"z.keras": "/dev/zero"}, max_seconds=2.0, max_rss_mb=200.0,
             says="is not a regular file"),
        case("probe a .keras that is a named pipe", ("probe", "--model", "{dir}/f.keras",
             *keras_args), 2, make=_fifo("f.keras"), max_seconds=2.0,
             says="is not a regular file"),
        # 6. unclear errors
        case("probe a .keras whose units are -3", ("probe", "--model", "{dir}/neg.keras",
             *keras_args), 1, make=_sized("neg.keras", -3), max_seconds=2.0,
             says="layer 'dense' has units -3"),
        case("probe a .keras whose units are a string", ("probe", "--model",
             "{dir}/str.keras", *keras_args), 1, make=_sized("str.keras", "64"),
             max_seconds=2.0, says="has units '64'"),
        case("import binary with carriage returns from stdin", ("import", "-"), 2,
             stdin=b'a\rb\rc"x\r\x00\xff', says="not CSV text"),
        case("recommend --tokens 1e30", (*llm[:3], "--tokens", "1e30", "--deadline", "8h"), 2,
             says="1e30 is not from 1 to"),
        # the scale-out options
        case("recommend --max-nodes 33", (*rec, "--max-nodes", "33"), 2, says="33 must be"),
        case("recommend --global-batch 0", (*rec, "--global-batch", "0"), 2, says="0 must be"),
        case("recommend an LLM with --global-batch", (*llm, "--global-batch", "64"), 2,
             says="--global-batch is for the zoo's models"),
        case("recommend --global-batch 256 --max-nodes 1", (*rec, "--global-batch", "256",
             "--max-nodes", "1"), 0),
    ]  # fmt: skip
