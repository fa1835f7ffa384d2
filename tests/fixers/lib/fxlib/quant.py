"""Quantization shaped like flashinfer.fp4_quantization (0.6.3 and 0.7.2)."""
import functools
from types import SimpleNamespace
from typing import Optional, Tuple

import torch

from .jit import JitSpec, gen_jit_spec
from .utils import get_compute_capability, register_custom_op, round_up


def gen_quant_sm90_module() -> JitSpec:
    return gen_jit_spec("quant_90", ["quant.cu"])


def gen_quant_sm100_module() -> JitSpec:
    return gen_jit_spec("quant_100", ["quant.cu"])


def gen_quant_sm120_module() -> JitSpec:
    return gen_jit_spec("quant_120", ["quant.cu"])


def _sf_size(rows: int, cols: int, row_size: int = 128) -> int:
    return round_up(rows, row_size) * round_up(cols, 4)


@functools.cache
def get_quant_module(backend: str = "100"):
    backend_modules = {
        "120": gen_quant_sm120_module,
        "100": gen_quant_sm100_module,
        "90": gen_quant_sm90_module,
    }
    if backend not in backend_modules:
        raise ValueError(f"Invalid backend: {backend}")
    module = backend_modules[backend]().build_and_load()

    @register_custom_op("fxlib::quantize_sm100", mutates_args=(""))
    def quantize_sm100(
        input: torch.Tensor,
        global_scale: Optional[torch.Tensor] = None,
        sf_vec_size: int = 16,
        swizzled: bool = True,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        out_val = torch.empty((*input.shape[:-1], input.shape[-1] // 2), dtype=torch.uint8, device=input.device)
        m = input.numel() // input.shape[-1]
        k = input.shape[-1]
        if swizzled:
            out_sf_size = _sf_size(m, k // sf_vec_size)
        else:
            out_sf_size = m * k // sf_vec_size
        out_sf = torch.empty((out_sf_size,), dtype=torch.uint8, device=input.device)
        module.fp4_quantize(input, global_scale, out_val, out_sf, sf_vec_size, swizzled)
        return out_val, out_sf

    def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
        return module.scale_copy(x, factor)

    return SimpleNamespace(quantize_sm100=quantize_sm100, scale=scale)


def fp4_quantize(
    input: torch.Tensor,
    global_scale: Optional[torch.Tensor] = None,
    sf_vec_size: int = 16,
    enable_pdl: Optional[bool] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Public entry point: validation, an arch query, the cached loader, a closure, a reshape."""
    if sf_vec_size != 16 and sf_vec_size != 32:
        raise NotImplementedError("sf_vec_size can only be 16 or 32")
    is_column_major = input.stride(-2) == 1
    if is_column_major:
        input = input.transpose(-2, -1)
    major, minor = get_compute_capability(input.device)
    x_q, sf = get_quant_module(f"{major}{minor}").quantize_sm100(input, global_scale, sf_vec_size)
    sf = sf.reshape((-1, input.shape[-1] // sf_vec_size))
    if is_column_major:
        x_q = x_q.transpose(-2, -1)
        sf = sf.transpose(-2, -1)
    return x_q, sf


def scale_by(x: torch.Tensor, backend: str = "100") -> torch.Tensor:
    return get_quant_module(backend).scale(x, 2.0)


def scaled_quantize(input: torch.Tensor, scale: Optional[torch.Tensor] = None, block: int = 16,
                    backend: str = "cuda") -> Tuple[torch.Tensor, torch.Tensor]:
    """Like flashinfer 0.7.2's fp4_quantize: plain Python, with a registered op next to it."""
    return get_quant_module("100").quantize_sm100(input, scale, block)


@torch.library.custom_op("fxlib::scaled_quantize", mutates_args=())
def _scaled_quantize_op(input: torch.Tensor, scale: Optional[torch.Tensor] = None,
                        block: int = 16) -> Tuple[torch.Tensor, torch.Tensor]:
    return scaled_quantize(input, scale, block=block)


@_scaled_quantize_op.register_fake
def _scaled_quantize_fake(input, scale=None, block=16):
    m = input.numel() // input.shape[-1]
    k = input.shape[-1]
    return (input.new_empty((*input.shape[:-1], k // 2), dtype=torch.uint8),
            input.new_empty((_sf_size(m, k // block),), dtype=torch.uint8))
