# compile-lint-fix: only=hoist-load
"""The library's dict-dispatch loader (get_quant_module) called with a constant arch key."""
import torch

from fxlib.quant import get_quant_module

_GET_QUANT_MODULE_90 = get_quant_module("90")


def f(x):
    return _GET_QUANT_MODULE_90.scale(x, 3.0) + 1


f_compiled = torch.compile(f)
