"""Fixtures of the GPU proof.  The tests are marked ``gpu`` (deselected by default, see pyproject.toml) except
``test_gpu_0_static.py``'s predictions, which run on CPU when FlashInfer's sources are on disk."""
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def scan_cache(tmp_path_factory):
    """One summary cache for every scan (FlashInfer is read once); ``$COMPILE_LINT_GPU_SCAN_CACHE`` shares it
    between pytest processes (the device run starts one per file)."""
    env = os.environ.get("COMPILE_LINT_GPU_SCAN_CACHE")
    if env:
        Path(env).mkdir(parents=True, exist_ok=True)
        return Path(env)
    return tmp_path_factory.mktemp("compile_lint_cache")
