"""A tiny model whose forward calls FlashInfer's NVFP4 quantizer (``flashinfer.fp4_quantize``).

Used by ``tests/gpu``: compiled as is under ``fullgraph=True`` Dynamo stops in FlashInfer's JIT loader
(``get_fp4_quantization_module``); compile-lint predicts that statically and, with flashinfer >= 0.7.2 (which
registers ``flashinfer::fp4_quantize``), its op-boundary fixer rewrites the call to
``torch.ops.flashinfer.fp4_quantize`` in a copy of this file.
"""
import torch

import flashinfer


class FP4QuantBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("global_scale", torch.ones(1, dtype=torch.float32))

    def forward(self, x):
        x_q, sf = flashinfer.fp4_quantize(x, self.global_scale)
        return x_q, sf


def build(**compile_kwargs):
    """The model and its compiled form (``compile_kwargs``: backend= or mode=)."""
    model = FP4QuantBlock()
    return model, torch.compile(model, fullgraph=True, **compile_kwargs)
