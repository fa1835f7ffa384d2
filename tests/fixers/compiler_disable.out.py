"""No fullgraph region reaches the hazard, and nothing better applies: run the call eagerly."""
import torch

from fxlib.jit import jit_cache_ready

_jit_cache_ready_eager = torch.compiler.disable(jit_cache_ready)


def f(x):
    if _jit_cache_ready_eager("norm"):
        return x * 2
    return x


f_compiled = torch.compile(f)
