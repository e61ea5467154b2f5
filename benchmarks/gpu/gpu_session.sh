#!/usr/bin/env bash
# Everything a session with a lent GPU measures, in one device call of under 9 minutes
# (docs/ACCELERATOR.md, "A session with a GPU"): the LLM fine-tuning check, then the accelerator
# check under PyTorch. Writes 7 files under $OUT (the device tool returns at most 8):
# llm-gpu.jsonl and check/{summary.md,summary.json,probes.csv,measured.csv,not-run.txt,workers.log}.
#
#   device run, carry [".whl"], timeout_s 590:  bash benchmarks/gpu/gpu_session.sh
set -uo pipefail
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv || exit 2
python3 -c "import torch, transformers, peft; print(torch.__version__, transformers.__version__, peft.__version__)"
# the LLM runs first: the image's own PyTorch, transformers and peft, no wheels needed
PYTHONUNBUFFERED=1 timeout "${LLM_SECONDS:-200}" python3 benchmarks/gpu/llm_gpu_check.py \
    --out "$OUT/llm-gpu.jsonl" 2>&1 | grep -v -i warn | tail -c 4000
# Keras and advisor's store travel as wheels (docs/ACCELERATOR.md lists them)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 2
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout "${CHECK_SECONDS:-340}" python3 \
    benchmarks/gpu/accelerator_check.py --backends torch --minutes "${CHECK_MINUTES:-5.2}" \
    --budget "${BUDGET:-15}" --out "$OUT/check" \
    --cases "${CASES:-mnist_mlp,mnist_cnn,cifar10_cnn,resnet32_cifar10,alexnet,inception3,resnet50,vgg16,resnet152}" 2>&1 | grep -v -E "^(I0000|W0000|WARNING)" | tail -c 6000
