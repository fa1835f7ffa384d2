"""flashinfer 0.7.2.post1, tllm_enums.py: normalize_activation_type calls the IntEnum on a value that may
already be a member.  On torch 2.13 Dynamo traces it (on 2.11 it stops: GB0116, measured on the H200)."""
import enum

import torch


class ActivationType(enum.IntEnum):
    Gelu = 0
    Relu = 1
    Swiglu = 3


def normalize_activation_type(activation_type):
    try:
        return ActivationType(activation_type)  # HAZARD
    except ValueError as err:
        raise ValueError(f"Unsupported activation_type {activation_type!r}") from err


def f(x):
    act = normalize_activation_type(ActivationType.Swiglu)
    return x * int(act)


f_compiled = torch.compile(f, fullgraph=True, backend="eager")
