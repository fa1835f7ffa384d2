#!/usr/bin/env bash
# Run the GPU proof on a bare GPU machine (torch + nvcc + ninja + triton + pytest, no network, no flashinfer,
# no libcst).  Prepare here first:  ../shared/gpu/make-bundle.sh   (writes .gpu/: flashinfer.tar.xz +
# apache-tvm-ffi wheel), plus the libcst wheel for Python 3.12:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d .gpu libcst==1.9.0
# then, on the device, from the repo root with .gpu carried:  bash tests/gpu/run_on_device.sh
# compile-lint itself is imported from the working tree through a symlink farm (/tmp/shim/compile_lint:
# lint/* + rules + fixers), the package mapping of pyproject.toml.  Results go to $OUT (default ./gpu-out).
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT" /tmp/site /tmp/fisite /tmp/shim/compile_lint /tmp/clcache
python3 -m pip install -q --no-index --no-deps --upgrade --target /tmp/site .gpu/*.whl || exit 1
[ -d /tmp/fisite/flashinfer ] || tar xJf .gpu/flashinfer.tar.xz -C /tmp/fisite || exit 1
for e in lint/*; do ln -sfn "$PWD/$e" /tmp/shim/compile_lint/; done
ln -sfn "$PWD/rules" /tmp/shim/compile_lint/rules
ln -sfn "$PWD/fixers" /tmp/shim/compile_lint/fixers
export PYTHONPATH=/tmp/site:/tmp/fisite:/tmp/shim:$PWD PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} \
  FLASHINFER_NVCC_THREADS=${FLASHINFER_NVCC_THREADS:-4} COMPILE_LINT_GPU_SCAN_CACHE=/tmp/clcache
nvidia-smi > "$OUT/smi.txt" 2>&1
python3 - > "$OUT/versions.txt" 2>&1 <<'PY'
import importlib, sys
print("python", sys.version.split()[0])
for name in ("torch", "triton", "flashinfer", "tvm_ffi", "libcst", "click", "compile_lint"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "?"), getattr(m, "__file__", ""))
    except Exception as e:
        print(name, "NOT IMPORTABLE:", type(e).__name__, e)
import torch
print("cuda", torch.version.cuda, "available", torch.cuda.is_available())
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(), "capability", torch.cuda.get_device_capability())
PY
start=$(date +%s)
for f in tests/gpu/test_gpu_*.py; do
  echo "=== $f ($(( $(date +%s) - start )) s)"
  timeout "${PER_FILE_TIMEOUT:-300}" python3 -m pytest -m gpu "$f" -q -rA -p no:cacheprovider --durations=0 2>&1
  echo "=== $f exit $? ($(( $(date +%s) - start )) s)"
done > "$OUT/gpu.log"
grep -E "^(=== |PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS|\[gpu-proof\])|^E  |[0-9]+ (passed|failed|skipped)" "$OUT/gpu.log" | cut -c1-400
ls "${HOME}/.cache/flashinfer" -R 2>/dev/null | grep -E "\.so$" > "$OUT/jit-modules.txt"
