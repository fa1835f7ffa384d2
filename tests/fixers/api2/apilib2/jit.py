"""The JIT loader: every step is a host side effect Dynamo cannot trace."""
import functools
import os
import pathlib
import subprocess

import tvm_ffi

JIT_DIR = pathlib.Path(os.environ.get("FXLIB_JIT_DIR", "/tmp/fxlib_jit"))


@functools.cache
def get_cuda_version() -> str:
    txt = subprocess.check_output(["nvcc", "--version"], text=True)
    return txt.rsplit("release ", 1)[-1].split(",", 1)[0]


@functools.cache
def get_module():
    get_cuda_version()
    path = JIT_DIR / "apilib.so"
    if not path.exists():
        JIT_DIR.mkdir(parents=True, exist_ok=True)
        path.write_text("apilib")
    return tvm_ffi.load_module(str(path))
