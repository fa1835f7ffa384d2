"""flashinfer 0.7.2.post1, quantization/nvfp4_quantization_utils.py: make_nvfp4_global_scale branches on a
0-d tensor's value (`if amax == 0:`): data-dependent branching stops Dynamo (GB0170 on torch 2.13)."""
import torch

FLOAT4_E2M1_MAX = 6.0
E4M3_MAX = 448.0


def make_global_scale(input_tensor: torch.Tensor):
    amax = input_tensor.abs().max().to(torch.float32)
    if amax == 0:  # HAZARD
        return torch.full((1,), torch.finfo(torch.float32).max, dtype=torch.float32)
    return (E4M3_MAX * FLOAT4_E2M1_MAX / amax).reshape(1)


def f(x):
    return x * make_global_scale(x)


f_compiled = torch.compile(f, fullgraph=True, backend="eager")
