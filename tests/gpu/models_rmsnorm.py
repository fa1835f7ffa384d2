"""A tiny model whose forward calls FlashInfer's RMSNorm (``flashinfer.norm.rmsnorm``).

Used by ``tests/gpu``: compiled as is under ``fullgraph=True`` Dynamo stops in FlashInfer's JIT loader
(``get_norm_module`` -> ``gen_norm_module().build_and_load()``); compile-lint predicts that statically and its
op-boundary fixer rewrites the call in a copy of this file.  Do not import this file from CPU-only code paths:
it imports flashinfer.
"""
import torch

import flashinfer


class RMSNormBlock(torch.nn.Module):
    def __init__(self, hidden: int = 256, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        y = flashinfer.norm.rmsnorm(x, self.weight, self.eps)
        return y * 2


def build(hidden: int = 256, **compile_kwargs):
    """The model and its compiled form (``compile_kwargs``: backend= or mode=)."""
    model = RMSNormBlock(hidden)
    return model, torch.compile(model, fullgraph=True, **compile_kwargs)
