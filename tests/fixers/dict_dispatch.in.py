# compile-lint-fix: only=hoist-load
"""The library's dict-dispatch loader (get_quant_module) called with a constant arch key."""
import torch

from fxlib.quant import get_quant_module


def f(x):
    return get_quant_module("90").scale(x, 3.0) + 1


f_compiled = torch.compile(f)
