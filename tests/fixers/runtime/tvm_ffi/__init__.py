"""A stand-in for tvm_ffi (NOT the real package), used only to *run* fixed fixture code on CPU.

``load_module(path)`` returns a module whose kernels are small deterministic torch functions writing into the
tensors they are given, like the real JIT-compiled kernels do.  It is deliberately not on the analyzer's search
path: to compile-lint, ``tvm_ffi.load_module`` stays an opaque native loader.
"""
import torch


class _Module:
    def __init__(self, path):
        self.path = path

    @staticmethod
    def fp4_quantize(input, global_scale, out_val, out_sf, sf_vec_size, swizzled):
        q = (input[..., ::2].abs() * 16).clamp(max=255).to(torch.uint8)
        out_val.copy_(q.reshape(out_val.shape))
        out_sf.fill_(sf_vec_size)

    @staticmethod
    def scale_copy(x, factor):
        return x * factor

    @staticmethod
    def rmsnorm(out, input, weight, eps):
        out.copy_(input * torch.rsqrt(input.pow(2).mean(-1, keepdim=True) + eps) * weight)

    @staticmethod
    def scale(out, input, factor):
        out.copy_(input * factor)


def load_module(path):
    return _Module(path)
