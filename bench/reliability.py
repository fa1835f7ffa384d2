"""The reliability run: every .py file of sglang 0.5.23, flashinfer 0.7.2.post1, vllm 0.33.0 (PyPI, cached) and
the installed torch through the engine's own pipeline, with a full scan of sglang + flashinfer; no exception
may escape (tests/test_reliability.py, which prints its figures).  About 6.5 minutes on 2 cores: too long for
CI's 30-minute budget beside the rest, so the bench runs it.

    python bench/reliability.py
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    env = dict(os.environ, COMPILE_LINT_RELIABILITY="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests/test_reliability.py"]
    return subprocess.call(cmd, cwd=REPO, env=env)


if __name__ == "__main__":
    sys.exit(main())
