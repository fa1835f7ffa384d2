"""Public APIs of the miniature library: the four shapes the api-op fixer handles and two it refuses."""
import functools
from typing import Literal, Optional, Tuple, Union

import torch

from .jit import get_module


def api_log(func):
    """An identity logging decorator, like flashinfer_api with FLASHINFER_LOGLEVEL unset."""
    return func


@api_log
def _rmsnorm_unwrapped(
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


@torch.library.custom_op("apilib_cl::rmsnorm", mutates_args=("input", "weight", "out"))
def _rmsnorm_op(input: torch.Tensor, weight: torch.Tensor, eps: float, out: torch.Tensor, enable_pdl: Optional[bool]) -> None:
    # the public API `rmsnorm`, opaque to torch.compile (compile-lint op boundary)
    _rmsnorm_unwrapped(input, weight, eps, out, enable_pdl)


@_rmsnorm_op.register_fake
def _rmsnorm_op_fake(input, weight, eps, out, enable_pdl):
    return None


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
    _rmsnorm_op(input, weight, eps, out, enable_pdl)
    return out


rmsnorm.__dict__.update(_rmsnorm_unwrapped.__dict__)  # what its decorators attached


def _scale_unwrapped(x: torch.Tensor, factor: float = 2.0) -> torch.Tensor:
    # allocating API: the fake is this allocation
    out = torch.empty_like(x)
    get_module().scale(out, x, factor)
    return out


@torch.library.custom_op("apilib_cl::scale", mutates_args=("x",))
def _scale_op(x: torch.Tensor, factor: float) -> torch.Tensor:
    # the public API `scale`, opaque to torch.compile (compile-lint op boundary)
    return _scale_unwrapped(x, factor)


@_scale_op.register_fake
def _scale_op_fake(x, factor):
    return _scale_fake_scale(x=x, factor=factor)


def _scale_fake_scale(x, factor=2.0):
    out = torch.empty_like(x)
    return out


def scale(x: torch.Tensor, factor: float = 2.0) -> torch.Tensor:
    return _scale_op(x, factor)


def _split_quantize_unwrapped(input: torch.Tensor, global_scale: torch.Tensor, sf_vec_size: int = 16,
                   layout: Literal["linear", "swizzled"] = "linear") -> Tuple[torch.Tensor, torch.Tensor]:
    m, k = input.shape
    out_val = torch.empty((m, k // 2), dtype=torch.uint8, device=input.device)
    out_sf = torch.empty((m * k // sf_vec_size,), dtype=torch.uint8, device=input.device)
    get_module().fp4_quantize(input, global_scale, out_val, out_sf, sf_vec_size, layout == "swizzled")
    return out_val, out_sf


@torch.library.custom_op("apilib_cl::split_quantize", mutates_args=("input", "global_scale"))
def _split_quantize_op(input: torch.Tensor, global_scale: torch.Tensor, sf_vec_size: int, layout: str) -> tuple[torch.Tensor, torch.Tensor]:
    # the public API `split_quantize`, opaque to torch.compile (compile-lint op boundary)
    return _split_quantize_unwrapped(input, global_scale, sf_vec_size, layout)


@_split_quantize_op.register_fake
def _split_quantize_op_fake(input, global_scale, sf_vec_size, layout):
    return _split_quantize_fake_split_quantize(input=input, global_scale=global_scale, sf_vec_size=sf_vec_size, layout=layout)


def _split_quantize_fake_split_quantize(input, global_scale, sf_vec_size=16, layout='linear'):
    m, k = input.shape
    out_val = torch.empty((m, k // 2), dtype=torch.uint8, device=input.device)
    out_sf = torch.empty((m * k // sf_vec_size,), dtype=torch.uint8, device=input.device)
    return (out_val, out_sf)


def split_quantize(input: torch.Tensor, global_scale: torch.Tensor, sf_vec_size: int = 16,
                   layout: Literal["linear", "swizzled"] = "linear") -> Tuple[torch.Tensor, torch.Tensor]:
    return _split_quantize_op(input, global_scale, sf_vec_size, layout)


def _scale_inplace_unwrapped(x: torch.Tensor, factor: float, *, enable_pdl: bool = None) -> None:
    """In-place API: writes `x`."""
    get_module().scale(x, x, factor)


@torch.library.custom_op("apilib_cl::scale_inplace", mutates_args=("x",))
def _scale_inplace_op(x: torch.Tensor, factor: float, enable_pdl: Optional[bool]) -> None:
    # the public API `scale_inplace`, opaque to torch.compile (compile-lint op boundary)
    _scale_inplace_unwrapped(x, factor, enable_pdl=enable_pdl)


@_scale_inplace_op.register_fake
def _scale_inplace_op_fake(x, factor, enable_pdl):
    return None


def scale_inplace(x: torch.Tensor, factor: float, *, enable_pdl: bool = None) -> None:
    """In-place API: writes `x`."""
    _scale_inplace_op(x, factor, enable_pdl)


def _scale_by_unwrapped(x: torch.Tensor, factor: Union[torch.Tensor, float],
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """A tensor-or-number argument, and a Python object that defaults to None."""
    if generator is not None:
        factor = factor * torch.rand((), generator=generator).item()
    out = torch.empty_like(x)
    get_module().scale(out, x, factor)
    return out


@torch.library.custom_op("apilib_cl::scale_by", mutates_args=("x",))
def _scale_by_op(x: torch.Tensor, factor_tensor: Optional[torch.Tensor], factor_value: Optional[float]) -> torch.Tensor:
    # the public API `scale_by`, opaque to torch.compile (compile-lint op boundary)
    factor = factor_tensor if factor_tensor is not None else factor_value
    return _scale_by_unwrapped(x, factor, None)


@_scale_by_op.register_fake
def _scale_by_op_fake(x, factor_tensor, factor_value):
    factor = factor_tensor if factor_tensor is not None else factor_value
    return _scale_by_fake_scale_by(x=x, factor=factor)


def _scale_by_fake_scale_by(x, factor, generator=None):
    out = torch.empty_like(x)
    return out


def scale_by(x: torch.Tensor, factor: Union[torch.Tensor, float],
             generator: Optional[torch.Generator] = None) -> torch.Tensor:
    """A tensor-or-number argument, and a Python object that defaults to None."""
    if generator is not None:
        # `generator`: no op schema type; run the original body
        return _scale_by_unwrapped(x, factor, generator)
    return _scale_by_op(x, factor if isinstance(factor, torch.Tensor) else None, None if isinstance(factor, torch.Tensor) else factor)


def _scale_copy_unwrapped(x: torch.Tensor, factor: float) -> torch.Tensor:
    """The kernel returns its own output: no allocation to derive a fake from (configured: same-as:x)."""
    return get_module().scale_copy(x, factor)


@torch.library.custom_op("apilib_cl::scale_copy", mutates_args=("x",))
def _scale_copy_op(x: torch.Tensor, factor: float) -> torch.Tensor:
    # the public API `scale_copy`, opaque to torch.compile (compile-lint op boundary)
    return _scale_copy_unwrapped(x, factor)


@_scale_copy_op.register_fake
def _scale_copy_op_fake(x, factor):
    return torch.empty_like(x)


def scale_copy(x: torch.Tensor, factor: float) -> torch.Tensor:
    """The kernel returns its own output: no allocation to derive a fake from (configured: same-as:x)."""
    return _scale_copy_op(x, factor)


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
