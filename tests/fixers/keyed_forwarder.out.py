"""A one-line library forwarder to a keyed loader (c065 shape): inlined so the constant key is visible."""
import torch

from fxlib import scale_by
from fxlib.quant import get_quant_module

_GET_QUANT_MODULE_120 = get_quant_module("120")


def f(x):
    y = x * 0.5
    return _GET_QUANT_MODULE_120.scale(y, 2.0)


f_compiled = torch.compile(f, fullgraph=True)
