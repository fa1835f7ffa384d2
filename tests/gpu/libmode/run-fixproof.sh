#!/usr/bin/env bash
# Device entry point (project root, .gpu carried; see make-bundle.sh):  bash tests/gpu/libmode/run-fixproof.sh [DEADLINE_S] [args]
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT" /tmp/deps /tmp/fi_orig /tmp/fi_fixed
python3 -m pip install -q --no-index --no-deps --upgrade --target /tmp/deps .gpu/*.whl || exit 1
[ -d /tmp/fi_orig/flashinfer ] || tar xJf .gpu/flashinfer.tar.xz -C /tmp/fi_orig || exit 1
if [ ! -d /tmp/fi_fixed/flashinfer ]; then
  cp -rs /tmp/fi_orig/flashinfer /tmp/fi_fixed/flashinfer   # unchanged files: symlinks (one JIT cache for both)
  tar tJf .gpu/flashinfer-fixed.tar.xz | while read -r f; do rm -f "/tmp/fi_fixed/$f"; done
  tar xJf .gpu/flashinfer-fixed.tar.xz -C /tmp/fi_fixed || exit 1
fi
export FIXPROOF_DEPS=/tmp/deps PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} FLASHINFER_NVCC_THREADS=${FLASHINFER_NVCC_THREADS:-4}
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader > "$OUT/env.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__, torch.cuda.get_device_capability())" >> "$OUT/env.txt"
nvcc --version | tail -1 >> "$OUT/env.txt"
cat "$OUT/env.txt"
dl=${1:-520}; shift || true
python3 tests/gpu/libmode/fixproof.py "$OUT" --orig /tmp/fi_orig --fixed /tmp/fi_fixed --apis .gpu/fixed-apis.txt \
  --deadline "$dl" "$@" 2>&1 | tee "$OUT/fixproof.log"
