"""transformers 5.24.0, utils/model_debugging_utils.py: the model debugger captures printed output in memory.
In-memory I/O redirection stops Dynamo (contextlib.redirect_stdout: GB0262 on torch 2.13)."""
import contextlib
import io

import torch


def f(x):
    buf = io.StringIO()  # HAZARD
    with contextlib.redirect_stdout(buf):  # HAZARD
        print(x.shape)
    return x + len(buf.getvalue())


f_compiled = torch.compile(f, fullgraph=True, backend="eager")
