"""The real-world tests too slow for CI's 30-minute budget (tests/conftest.py ``BENCH_TESTS``, marker
``bench``): whole-release scans of sglang + flashinfer and the seed chain's fix on all of sglang 0.5.9.
About 5 minutes on 2 cores (4 passed, 320 s, 2026-12-03, sharing the machine with other work).

    python bench/slow_tests.py
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    env = dict(os.environ, COMPILE_LINT_REALWORLD="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "bench", "--durations=0",
           "tests/test_realworld.py", "tests/test_fixers_realworld.py"]
    return subprocess.call(cmd, cwd=REPO, env=env)


if __name__ == "__main__":
    sys.exit(main())
