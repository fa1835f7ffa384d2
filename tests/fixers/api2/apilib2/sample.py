"""Public APIs shaped like FlashInfer 0.7.2's sampling: a flag chooses a tensor or a pair, a helper returns its
arguments (FlashInfer's `_validate_and_convert_seed_offset`)."""
import enum
from typing import Optional, Tuple, Union

import torch

from .jit import get_module


def _convert(rows, offset):
    """Returns its own arguments: not an allocation a fake could make."""
    return rows, offset


def count(x: torch.Tensor, seed: int = 0, offset: int = 0) -> torch.Tensor:
    rows, o = _convert(x.shape[0], offset)
    out = torch.empty(rows, dtype=torch.float32, device=x.device)
    get_module().scale(out, x.sum(-1).float(), float(seed + o + 1))
    return out


def pick(x: torch.Tensor, factor: float = 1.0, return_valid: bool = False,
         extra: Optional[Tuple[torch.Tensor, torch.Tensor]] = None) -> Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
    """The kernel allocates its output (no allocation to derive a fake from); `return_valid` adds a second one."""
    out = get_module().scale_copy(x, factor)
    if extra is not None:  # a pair of tensors: no op input type (infer_schema rejects tuples); the op takes its
        out = out + extra[0] * extra[1]  # two tensors and rebuilds the pair
    if return_valid:
        return out, out > 0
    return out


def ranks(x: torch.Tensor, k: int, out_dtype: torch.dtype = torch.int32) -> torch.Tensor:
    """The output's dtype defaults to a torch dtype (FlashInfer's `topk_clusters_exact(out_dtype=torch.int32)`)."""
    out = torch.empty(x.shape[0], k, dtype=out_dtype, device=x.device)
    get_module().scale(out, x[:, :k] * 4, 1.0)
    return out


class Layout(enum.IntEnum):
    ROW = 0
    COL = 1


def arrange(x: torch.Tensor, layout: Layout = Layout.ROW) -> torch.Tensor:
    """An IntEnum parameter (FlashInfer's `mxfp4_quantize(sfLayout: SfLayout = SfLayout.layout_128x4)`): no schema
    type; the member's int is."""
    if layout == Layout.COL:
        out = torch.empty(x.shape[1], x.shape[0], dtype=x.dtype, device=x.device)
    else:
        out = torch.empty_like(x)
    get_module().scale(out, x.t() if layout == Layout.COL else x, 1.0)
    return out


def append(x: torch.Tensor, cache: Union[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]], scale: float = 1.0) -> None:
    """One tensor or the (k, v) pair, written in place (FlashInfer's `append_paged_kv_cache(paged_kv_cache=...)`)."""
    if isinstance(cache, torch.Tensor):
        get_module().scale(cache, x, scale)
    else:
        get_module().scale(cache[0], x, scale)
        get_module().scale(cache[1], x, 2 * scale)


def padded(x: torch.Tensor) -> torch.Tensor:
    """Its output shape reads a constant imported inside the function (FlashInfer's `mxfp4_quantize`: `from
    .kernels.mxfp4_quantize import SF_LAYOUT_128x4`, kept out of the package's import)."""
    from .kernels.codes import ROWS_PADDED

    out = torch.zeros(x.shape[0] + ROWS_PADDED, x.shape[1], dtype=x.dtype, device=x.device)
    get_module().scale(out[: x.shape[0]], x, 1.0)
    return out
