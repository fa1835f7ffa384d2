"""Out-parameter kernels: the caller allocates, the kernel writes (a mutating op; its fake returns None)."""
import torch

from fxlib import rmsnorm_out, scale_out


def f(x, w):
    out = torch.empty_like(x)
    rmsnorm_out(out, x, w)
    doubled = torch.empty_like(x)
    scale_out(doubled, out, 2.0)
    return doubled


f_compiled = torch.compile(f, fullgraph=True)
