# compile-lint-fix: hoist-to=init
"""Zero-argument cached loader used by an nn.Module: stored in __init__."""
import functools
import subprocess

import torch


@functools.cache
def get_module():
    return subprocess.check_output(["nvcc", "--version"], text=True)


class Block(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x) * len(get_module())


MODEL = Block(4)
model_compiled = torch.compile(MODEL, fullgraph=True)
