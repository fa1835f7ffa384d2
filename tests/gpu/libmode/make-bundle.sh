#!/usr/bin/env bash
# Bundle for the after-fix proof (fixproof.py), from the project root:
#   bash tests/gpu/libmode/make-bundle.sh ORIG_SITE FIXED_SITE APIS_FILE
# ORIG_SITE / FIXED_SITE: directories holding the unfixed and the fixed flashinfer/ (0.7.2.post1);
# APIS_FILE: the API qualnames the fix changed, one a line.  Writes .gpu/ (git-ignored):
#   flashinfer.tar.xz        flashinfer's Python sources + the headers its JIT needs (as ../shared/gpu/make-bundle.sh)
#   flashinfer-fixed.tar.xz  the .py files the fix changed (the fixed tree is the original with these replaced)
#   fixed-apis.txt           APIS_FILE
#   apache-tvm-ffi wheel     for the device's Python 3.12
set -euo pipefail
orig=$1 fixed=$2 apis=$3
out=.gpu
mkdir -p "$out"
rm -f "$out"/*.whl "$out"/flashinfer*.tar.xz
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d "$out" "apache-tvm-ffi==0.1.15.post2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(
  cd "$orig"
  {
    find flashinfer -name '*.py' -not -path 'flashinfer/data/*'
    find flashinfer -name '*.json' -not -path 'flashinfer/data/*'
    for d in flashinfer/data/include flashinfer/data/csrc/nv_internal flashinfer/data/csrc/xqa flashinfer/data/cutlass/include \
             flashinfer/data/cutlass/tools/util/include flashinfer/data/spdlog flashinfer/data/cccl; do
      [ -d "$d" ] && find "$d" -type f
    done
    find flashinfer/data/csrc -maxdepth 1 -type f
  } | sort -u > "$work/list"
  tar cJf "$OLDPWD/$out/flashinfer.tar.xz" -T "$work/list"
)
(cd "$fixed" && find flashinfer -name '*.py' -not -path 'flashinfer/data/*' | sort) > "$work/py"
: > "$work/changed"
while read -r f; do cmp -s "$orig/$f" "$fixed/$f" || echo "$f" >> "$work/changed"; done < "$work/py"
tar cJf "$out/flashinfer-fixed.tar.xz" -C "$fixed" -T "$work/changed"
cp "$apis" "$out/fixed-apis.txt"
echo "changed files: $(wc -l < "$work/changed")"
ls -la "$out"; du -sh "$out"
