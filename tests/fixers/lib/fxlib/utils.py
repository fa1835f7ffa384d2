"""Helpers shaped like flashinfer.utils (identity op-registration decorators, arch queries)."""
import functools

import torch


def register_custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    # like flashinfer's: the real registration is commented out, the decorator is the identity
    # return torch.library.custom_op(name, fn, mutates_args=mutates_args)
    return lambda x: x


def register_fake_op(name, fn=None):
    return lambda x: x


@functools.cache
def get_compute_capability(device: torch.device):
    if device.type != "cuda":
        return 10, 0
    return torch.cuda.get_device_capability(device.index)


def round_up(x: int, y: int) -> int:
    return (x + y - 1) // y * y
