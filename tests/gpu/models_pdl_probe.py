"""A miniature of SGLang's PDL probe (sglang 0.5.23, ``sglang/kernels/jit/utils/arch.py``), reached from a
compiled function.

SGLang's JIT kernels ask ``is_arch_support_pdl()`` while they are traced; cold, that runs
``_init_jit_cuda_arch_once`` -> ``_cuda_arch_suffix``, and on compute capability 12.0 only it runs
``nvcc --version`` in a subprocess (``_jit_cuda_version``) to choose the ``f`` target.  The shape (a dict-based
``cache_once``, the ``major == 12`` branch, the subprocess) is SGLang's; SGLang itself is not needed.
compile-lint with ``target_arch="sm120"`` predicts the subprocess; with ``sm90`` the branch is pruned.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

import torch


def cache_once(fn):
    result_map = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in result_map:
            result_map[key] = fn(*args, **kwargs)
        return result_map[key]

    return wrapper


@cache_once
def _jit_cuda_version() -> tuple:
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if cuda_home is None:
        nvcc_path = shutil.which("nvcc")
        cuda_home = os.path.dirname(os.path.dirname(nvcc_path)) if nvcc_path is not None else "/usr/local/cuda"
    output = subprocess.check_output([os.path.join(cuda_home, "bin", "nvcc"), "--version"], text=True)
    match = re.search(r"release (\d+)\.(\d+)", output)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _cuda_arch_suffix(major: int, minor: int) -> str:
    if major == 9:
        return "a"
    if major == 12:
        if minor == 0 and _jit_cuda_version() >= (12, 9):
            return "f"
        return "a"
    if major >= 10:
        return "a"
    return ""


_CUDA_ARCH = None


@cache_once
def _init_jit_cuda_arch_once():
    global _CUDA_ARCH
    major, minor = torch.cuda.get_device_capability()
    _CUDA_ARCH = (major, minor, _cuda_arch_suffix(major, minor))


def get_jit_cuda_arch():
    _init_jit_cuda_arch_once()
    return _CUDA_ARCH


@cache_once
def is_arch_support_pdl() -> bool:
    return get_jit_cuda_arch()[0] >= 9


@torch.compile(fullgraph=True, backend="eager")
def norm_with_pdl(x):
    if is_arch_support_pdl():
        return x * 2
    return x
