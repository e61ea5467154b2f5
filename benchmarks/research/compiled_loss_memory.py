"""What a logit costs at the loss, by where the loss runs and whether it is compiled (issue "The
training stack": our compiled H100 run of Qwen2.5 1.5B peaked 24.6% under the count, which gave
every compiled step's plain loss the eager 10 bytes a logit).

Each case runs one training step of Qwen2.5 1.5B's output end (its 151,936-token vocabulary,
tied embeddings, bf16 weights, no layer between the embedding and the final norm) on this
machine's CPU under PyTorch's profiler, which records every allocation, and reads the most bytes
live at once. The step runs at two token counts; the difference of the peaks over the difference
of the logits is what a logit costs where the step peaks, every fixed cost (weights, their
gradients) cancelled. The width is 256, not 1.5B's 1,536: a logit's bytes do not depend on it,
and narrower weights keep their gradients' phase below the loss's, so both counts peak there.
The cases:

* ``hf eager``: Hugging Face's model computes its loss in its forward (``ForCausalLMLoss``: an
  fp32 copy of the logits, ``cross_entropy``), eager;
* ``hf compiled``: the same model under ``model.compile()``, the loss compiled with it;
* ``compiled loss over fp32 logits``: the model upcasts its output, a loss compiled apart
  (torchtune's recipes);
* ``compiled loss over bf16 logits``: a loss compiled apart upcasts inside (torchtitan's).

Allocation is the allocator's, not the GPU's, and Inductor writes C++ here, Triton there; what
the step keeps is AOTAutograd's choice, made before either. docs/PREDICTION.md holds the figures
against the H100 and torchtune's published runs.

    .venv/bin/python benchmarks/research/compiled_loss_memory.py [--tokens 2048,4096] [--json F]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CASES = (
    "hf eager",
    "hf compiled",
    "compiled loss over fp32 logits",
    "compiled loss over bf16 logits",
)
HIDDEN, VOCAB = 256, 151_936
"""A narrow width, and Qwen2.5 1.5B's vocabulary (``data/llm-architectures.csv``)."""


def step_peak(case: str, tokens: int) -> int:
    """Most bytes live at once during one step of ``case`` (after two unmeasured steps)."""
    import torch
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (1, tokens))
    if case.startswith("hf"):
        config = Qwen2Config(
            hidden_size=HIDDEN, num_hidden_layers=0, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=4 * HIDDEN, vocab_size=VOCAB, tie_word_embeddings=True, use_cache=False,
        )  # fmt: skip
        torch.set_default_dtype(torch.bfloat16)
        model = Qwen2ForCausalLM(config)
        torch.set_default_dtype(torch.float32)
        if case == "hf compiled":
            model.compile()

        def loss() -> torch.Tensor:
            return model(input_ids=ids, labels=ids).loss
    else:
        hidden = torch.randn(tokens, HIDDEN, dtype=torch.bfloat16, requires_grad=True)
        head = (torch.randn(VOCAB, HIDDEN, dtype=torch.bfloat16) * 0.02).requires_grad_()
        labels = ids.view(-1)
        upcast_first = case == "compiled loss over fp32 logits"
        if upcast_first:
            compiled = torch.compile(lambda logits, y: F.cross_entropy(logits, y))
        else:
            compiled = torch.compile(lambda logits, y: F.cross_entropy(logits.float(), y))

        def loss() -> torch.Tensor:
            logits = hidden @ head.t()
            return compiled(logits.float() if upcast_first else logits, labels)

    def step() -> None:
        loss().backward()

    for _ in range(2):
        step()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        step()
    changes = sorted(
        (event.start_ns(), event.nbytes())
        for event in profiler.profiler.kineto_results.events()
        if event.name() == "[memory]"
    )
    live = peak = 0
    for _, change in changes:
        live += change
        peak = max(peak, live)
    return peak


def measure(case: str, counts: list[int]) -> dict[str, object]:
    peaks = {}
    for tokens in counts:  # each in its own process: nothing compiled or cached carries over
        line = subprocess.run(
            [sys.executable, __file__, "--one", case, "--tokens", str(tokens)],
            check=True, capture_output=True, text=True,
        ).stdout.strip().splitlines()[-1]  # fmt: skip
        peaks[tokens] = int(line)
    low, high = counts[0], counts[-1]
    per_logit = (peaks[high] - peaks[low]) / ((high - low) * VOCAB)
    return {"case": case, "peak_bytes": peaks, "bytes_per_logit": round(per_logit, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="2048,4096", help="two token counts, comma-separated")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(step_peak(args.one, int(args.tokens)))
        return
    counts = sorted(int(count) for count in args.tokens.split(","))
    import torch
    import transformers

    rows = []
    for case in CASES:
        row = measure(case, counts)
        rows.append(row)
        print(f"{case:32} {row['bytes_per_logit']:5.2f} bytes a logit", flush=True)
    if args.json:
        environment = {"torch": torch.__version__, "transformers": transformers.__version__,
                       "date": time.strftime("%Y-%m-%d", time.gmtime())}  # fmt: skip
        with open(args.json, "w") as handle:
            json.dump(
                {"environment": environment, "tokens": counts, "cases": rows}, handle, indent=2
            )


if __name__ == "__main__":
    main()
