"""A configuration dataclass walked field by field (transformers/diffusers configs do so when they are
serialised).  dataclasses.fields stops Dynamo (GB0180, "dataclass fields failure", on torch 2.13)."""
import dataclasses

import torch


@dataclasses.dataclass
class QuantConfig:
    group_size: int = 16
    scale: float = 1.0


CFG = QuantConfig()


def f(x):
    n = 0
    for fld in dataclasses.fields(CFG):  # HAZARD
        n += len(fld.name)
    return x + n


f_compiled = torch.compile(f, fullgraph=True, backend="eager")
