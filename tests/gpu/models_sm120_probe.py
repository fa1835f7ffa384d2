"""FlashInfer's SM120-only nvcc probe, reached from a compiled function.

``flashinfer.compilation_context.CompilationContext._normalize_cuda_arch(12, 0)`` asks
``is_cuda_version_at_least("12.9")`` -- which runs ``nvcc --version`` in a subprocess (``get_cuda_version``) -- to
choose the ``0f`` (family) target; on every other major version the branch does not run.  compile-lint with
``target_arch="sm120"`` predicts the subprocess, with ``sm90`` it prunes the branch.
"""
import torch

from flashinfer.compilation_context import CompilationContext


# Read once at import (outside the compiled code), so that Dynamo sees constants.
CAPABILITY = torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)


@torch.compile(fullgraph=True, backend="eager")
def scaled_by_arch(x):
    major, minor = CAPABILITY
    arch = CompilationContext._normalize_cuda_arch(major, minor)
    return x * (2 if arch[1].endswith("f") else 1)
