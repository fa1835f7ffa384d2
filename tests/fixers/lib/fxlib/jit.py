"""JIT loading shaped like flashinfer.jit (0.6.3): every step is a host side effect Dynamo cannot trace."""
import functools
import os
import pathlib
import subprocess

import tvm_ffi

JIT_DIR = pathlib.Path(os.environ.get("FXLIB_JIT_DIR", "/tmp/fxlib_jit"))


@functools.cache
def get_cuda_version() -> str:
    try:
        txt = subprocess.check_output(["nvcc", "--version"], text=True)
    except (OSError, subprocess.CalledProcessError):
        return "12.8"
    return txt.rsplit("release ", 1)[-1].split(",", 1)[0]


class JitSpec:
    def __init__(self, name: str, sources: list):
        self.name = name
        self.sources = sources

    @property
    def lib_path(self) -> pathlib.Path:
        return JIT_DIR / f"{self.name}.so"

    def build(self) -> None:
        get_cuda_version()
        JIT_DIR.mkdir(parents=True, exist_ok=True)
        self.lib_path.write_text(self.name)

    def build_and_load(self):
        if not self.lib_path.exists():
            self.build()
        return tvm_ffi.load_module(str(self.lib_path))


def gen_jit_spec(name: str, sources: list) -> JitSpec:
    return JitSpec(name, list(sources))


def jit_cache_ready(name: str) -> bool:
    """Not cached, not a build: only an op boundary (impossible: it returns a bool) or eager execution helps."""
    return (JIT_DIR / f"{name}.so").exists()
