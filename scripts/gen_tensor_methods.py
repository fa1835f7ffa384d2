#!/usr/bin/env python
"""Write lint/dynamo/data/tensor_methods.json: the public method names of torch.Tensor (torch required).

A call ``x.foo(...)`` on a receiver of unknown type whose method is a Tensor method is taken as a tensor op
(in the graph), not counted as an unresolved call.
"""
import json
import sys
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parent.parent / "lint" / "dynamo" / "data" / "tensor_methods.json"
names = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
OUT.write_text(json.dumps({"torch_version": torch.__version__, "methods": names}, indent=0) + "\n")
print(f"{len(names)} Tensor methods from torch {torch.__version__} -> {OUT}", file=sys.stderr)
