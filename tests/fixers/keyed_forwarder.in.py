"""A one-line library forwarder to a keyed loader (c065 shape): inlined so the constant key is visible."""
import torch

from fxlib import scale_by


def f(x):
    y = x * 0.5
    return scale_by(y, "120")


f_compiled = torch.compile(f, fullgraph=True)
