"""Library mode against the GPU: compile-lint's table for flashinfer 0.7.2.post1 (PyPI, cached) scored against
Dynamo on an NVIDIA H200 (tests/realworld/gpu_truth/).  Prints precision, recall, how often the first hazard
shown is the line Dynamo stopped at, and every disagreement.

    python bench/libmode.py [--cache-dir DIR]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from compile_lint.engine import ScanOptions, scan  # noqa: E402
from compile_lint.library import verdicts  # noqa: E402
from realworld.libmode_truth import CUDA_VERSION, NOT_INSTALLED, TARGET_ARCH, TORCH_VERSION, innermost_frames, load_truth, score  # noqa: E402
from realworld.pypi_fixtures import site_root  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", type=Path, default=None, help="compile-lint's cache (default: none)")
    args = ap.parse_args()
    site = site_root("current")
    t0 = time.monotonic()
    result = scan(ScanOptions(paths=[site / "flashinfer"], search_path=[site], use_environment=False,
                              cache_dir=args.cache_dir, public_api=["flashinfer"], target_arch=TARGET_ARCH,
                              cuda_version=CUDA_VERSION, torch_version=TORCH_VERSION,
                              not_installed=list(NOT_INSTALLED)))
    table = {v.api: v for v in verdicts(result)}
    root = str(site) + "/"
    s = score(table, load_truth(), lambda p: str(p).removeprefix(root), innermost_frames())
    print(f"library mode on flashinfer 0.7.2.post1 ({len(table)} public APIs, {time.monotonic() - t0:.0f} s) "
          f"vs the H200:")
    print("  " + s.line())
    for m in s.misses:
        print("  " + m)
    for api in s.unlisted:
        print(f"  {api}: has a GPU truth, not listed by library mode")
    if s.wrong_first:
        print("where the first hazard shown is not Dynamo's stop:")
        for m in s.wrong_first:
            print("  " + m)
    return 0


if __name__ == "__main__":
    sys.exit(main())
