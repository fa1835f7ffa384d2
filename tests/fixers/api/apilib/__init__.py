"""A miniature kernel library (NOT FlashInfer) for the api-op fixer: public APIs shaped like FlashInfer 0.7.2's,
each reaching a JIT loader (``functools.cache`` -> ``nvcc`` through ``subprocess`` -> ``tvm_ffi.load_module``)."""
from .ops import Runner, fused_scale, rmsnorm, scale, scale_by, scale_copy, scale_inplace, scale_with, split_quantize
