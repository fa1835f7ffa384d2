"""A miniature FlashInfer (NOT FlashInfer) for the fixer fixtures: the same loader / op-registration shapes.

- ``jit``: ``JitSpec.build_and_load`` (``Path.exists``, ``nvcc`` through ``subprocess``, ``tvm_ffi.load_module``);
- ``quant``: a ``functools.cache`` loader with a dict dispatch on an arch string, returning a ``SimpleNamespace``
  of closures that allocate their outputs (``torch.empty``) and call the loaded kernel; a public
  ``fp4_quantize`` over it; a one-line keyed forwarder; a function with a real ``torch.library.custom_op``;
- ``norm``: out-parameter kernels (``mutates_args`` declared on an identity decorator, or not declared).
"""
from .norm import rmsnorm_out, scale_out
from .quant import fp4_quantize, get_quant_module, scale_by, scaled_quantize
