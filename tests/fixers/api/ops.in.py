"""Public APIs of the miniature library: the four shapes the api-op fixer handles and two it refuses."""
import functools
from typing import Literal, Optional, Tuple, Union

import torch

from .jit import get_module


def api_log(func):
    """An identity logging decorator, like flashinfer_api with FLASHINFER_LOGLEVEL unset."""
    return func


@api_log
def rmsnorm(
    input: torch.Tensor,
    weight: torch.Tensor,
    eps: float = 1e-6,
    out: Optional[torch.Tensor] = None,
    enable_pdl: Optional[bool] = None,
) -> torch.Tensor:
    """Out-parameter API: allocates `out` when the caller passes none, the kernel writes it."""
    if out is None:
        out = torch.empty_like(input)
    get_module().rmsnorm(out, input, weight, eps)
    return out


def scale(x: torch.Tensor, factor: float = 2.0) -> torch.Tensor:
    # allocating API: the fake is this allocation
    out = torch.empty_like(x)
    get_module().scale(out, x, factor)
    return out


def split_quantize(input: torch.Tensor, global_scale: torch.Tensor, sf_vec_size: int = 16,
                   layout: Literal["linear", "swizzled"] = "linear") -> Tuple[torch.Tensor, torch.Tensor]:
    m, k = input.shape
    out_val = torch.empty((m, k // 2), dtype=torch.uint8, device=input.device)
    out_sf = torch.empty((m * k // sf_vec_size,), dtype=torch.uint8, device=input.device)
    get_module().fp4_quantize(input, global_scale, out_val, out_sf, sf_vec_size, layout == "swizzled")
    return out_val, out_sf


def scale_inplace(x: torch.Tensor, factor: float, *, enable_pdl: bool = None) -> None:
    """In-place API: writes `x`."""
    get_module().scale(x, x, factor)


def scale_by(x: torch.Tensor, factor: Union[torch.Tensor, float],
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """A tensor-or-number argument, and a Python object that defaults to None."""
    if generator is not None:
        factor = factor * torch.rand((), generator=generator).item()
    out = torch.empty_like(x)
    get_module().scale(out, x, factor)
    return out


def scale_copy(x: torch.Tensor, factor: float) -> torch.Tensor:
    """The kernel returns its own output: no allocation to derive a fake from (configured: same-as:x)."""
    return get_module().scale_copy(x, factor)


def fused_scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    """Calls another public API: its op boundary is this function, the inner one stays inside it."""
    return scale(x, factor) + 0


class Config:
    def __init__(self, factor: float):
        self.factor = factor


def scale_with(x: torch.Tensor, config: Config) -> torch.Tensor:
    """A Python object in the signature: no op can take it."""
    out = torch.empty_like(x)
    get_module().scale(out, x, config.factor)
    return out


class Runner:
    def __init__(self, factor: float):
        self.factor = factor

    def run(self, x: torch.Tensor) -> torch.Tensor:
        """A method: `self` is a Python object."""
        out = torch.empty_like(x)
        get_module().scale(out, x, self.factor)
        return out
