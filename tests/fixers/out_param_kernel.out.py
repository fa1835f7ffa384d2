"""Out-parameter kernels: the caller allocates, the kernel writes (a mutating op; its fake returns None)."""
import torch

from fxlib import rmsnorm_out, scale_out
from . import _compile_lint_ops


def f(x, w):
    out = torch.empty_like(x)
    _compile_lint_ops.rmsnorm_out(out, x, w)
    doubled = torch.empty_like(x)
    _compile_lint_ops.scale_out(doubled, out, 2.0)
    return doubled


f_compiled = torch.compile(f, fullgraph=True)
