#!/usr/bin/env bash
# A GPU session's call under JAX (docs/ACCELERATOR.md, "A session with a GPU"): the accelerator
# check under JAX, a framework that compiles its step as TensorFlow does; then three LLM jobs'
# proxies probed on the GPU beside the same jobs trained for real (benchmarks/gpu/llm_probe_gpu.py,
# benchmarks/gpu/llm_gpu_check.py --only 0,1,2); then, if TORCH_MINUTES is set, a short check under
# PyTorch. Falls back to PyTorch alone if Keras does not run on the image's JAX. Writes under
# $OUT: smoke.txt, jax/{summary.md,summary.json,probes.csv,measured.csv}, llm/{llm-probes.csv,
# llm-gpu.jsonl}, logs.tgz (8 files, the device tool's most; the PyTorch check's files go into
# logs.tgz). Ran 2026-11-26 on an H200 without the LLM step (354 s with TORCH_MINUTES=1.3), and on
# an H100 with it (367 s with LLM_SECONDS=90). LLM_PRECISION=mixed probes the LLM jobs under
# mixed_bfloat16, their own precision (the H100 session probed them in float32).
#
#   device run, carry [".whl"], timeout_s 600:  LLM_SECONDS=90 bash benchmarks/gpu/gpu_session_jax.sh
set -uo pipefail
OUT=${OUT:-/tmp/gpu-session}
LLM_SECONDS=${LLM_SECONDS:-110}
mkdir -p "$OUT" /tmp/check/llm
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv || exit 2
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 2
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
KERAS_BACKEND=jax timeout 120 python3 - >"$OUT/smoke.txt" 2>&1 <<'PY'
import time
import jax, keras, numpy as np
print("jax", jax.__version__, "keras", keras.__version__, jax.devices())
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                          keras.layers.Dense(1)])
model.compile("adam", "mse")
started = time.perf_counter()
model.fit(np.zeros((256, 32)), np.zeros((256, 1)), batch_size=32, epochs=2, verbose=0)
print(f"ok {time.perf_counter() - started:.1f} s")
PY
tail -n 3 "$OUT/smoke.txt"
check() {  # backend, minutes, cases, output folder
    timeout "$(python3 -c "print(int($2 * 60 + 40))")" python3 benchmarks/gpu/accelerator_check.py \
        --backends "$1" --minutes "$2" --out "$4" --cases "$3" 2>&1 \
        | grep -v -E "^(I0000|W0000|WARNING)" | tail -c 5000
}
CASES=mnist_mlp,mnist_cnn,cifar10_cnn,resnet32_cifar10,alexnet,resnet50,vgg16,inception3,resnet152
if grep -q "^ok" "$OUT/smoke.txt"; then
    check jax "${JAX_MINUTES:-4.0}" "$CASES" /tmp/check/jax
    if [ "$LLM_SECONDS" != 0 ]; then
        KERAS_BACKEND=jax timeout "$((LLM_SECONDS + 40))" python3 benchmarks/gpu/llm_probe_gpu.py \
            --out /tmp/check/llm/llm-probes.csv --seconds "$LLM_SECONDS" \
            --precision "${LLM_PRECISION:-fp32}" 2>&1 \
            | grep -v -E "^(I0000|W0000|WARNING)" | tail -c 2000
        timeout 120 python3 benchmarks/gpu/llm_gpu_check.py --only 0,1,2 \
            --out /tmp/check/llm/llm-gpu.jsonl 2>&1 | grep -v -i warn | tail -c 2000
    fi
    if [ "${TORCH_MINUTES:-0}" != 0 ]; then
        check torch "$TORCH_MINUTES" mnist_mlp,resnet50 /tmp/check/torch
    fi
else
    check torch "${JAX_MINUTES:-4.0}" "$CASES" /tmp/check/jax
fi
mkdir -p "$OUT/jax" "$OUT/llm"
for f in summary.md summary.json probes.csv measured.csv; do cp /tmp/check/jax/$f "$OUT/jax/" 2>/dev/null; done
cp /tmp/check/llm/* "$OUT/llm/" 2>/dev/null
tar -czf "$OUT/logs.tgz" -C /tmp check
ls -la "$OUT" "$OUT/jax" "$OUT/llm"
