# compile-lint-fix: fake=fxlib.quant.scale_by=same-as:x
"""No fake can be derived for scale_by (the kernel returns a new tensor); the configuration names one."""
import torch

from fxlib import scale_by
from . import _compile_lint_ops


def f(x):
    return _compile_lint_ops.scale_by(x * 0.5, "120") + 1


f_compiled = torch.compile(f, fullgraph=True)
