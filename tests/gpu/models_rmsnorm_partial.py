"""RMSNorm between two torch ops, compiled WITHOUT fullgraph (graph breaks are allowed here).

Used by ``tests/gpu`` for the ``compiler-disable`` fixer: in a non-fullgraph region compile-lint may run the
FlashInfer call eagerly through ``torch.compiler.disable``; the graph-break reasons must then stop pointing into
FlashInfer's loader files.
"""
import torch

import flashinfer


class PartialRMSNormBlock(torch.nn.Module):
    def __init__(self, hidden: int = 256, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        h = x + 1
        y = flashinfer.norm.rmsnorm(h, self.weight, self.eps)
        return y * 2


def build(hidden: int = 256, **compile_kwargs):
    """The model and its compiled form, fullgraph=False."""
    model = PartialRMSNormBlock(hidden)
    return model, torch.compile(model, fullgraph=False, **compile_kwargs)
