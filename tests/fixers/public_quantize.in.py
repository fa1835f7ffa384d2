"""The public quantizer (flashinfer 0.6.3 fp4_quantize shape), as SGLang 0.5.9 calls it: op boundary, with a
fake sliced out of fp4_quantize -> the quantize_sm100 closure -> _sf_size -> round_up."""
import torch

from fxlib import fp4_quantize


class Fp4LinearMethod:
    def apply(self, layer, x: torch.Tensor) -> torch.Tensor:
        x_fp4, x_scale_interleaved = fp4_quantize(x, layer.input_scale_inv)
        return torch.cat([x_fp4.float().flatten(), x_scale_interleaved.float().flatten()])


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.input_scale_inv = torch.nn.Parameter(torch.ones(1), requires_grad=False)
        self.quant_method = Fp4LinearMethod()

    def forward(self, x):
        return self.quant_method.apply(self, x)


MODEL = Layer()
model_compiled = torch.compile(MODEL, fullgraph=True)
