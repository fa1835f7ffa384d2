"""Run one corpus case under torch.compile(fullgraph=True, backend="eager") in this (fresh) process.

Usage: python oracle_runner.py CASES_DIR CASE_NAME   -> prints one JSON line:
{"raised": bool, "exc": "torch._dynamo.exc.Unsupported", "first_line": "..."}
The case's own module-level `f_compiled` is the region; `setup()` runs first when the case defines it.
"""
import importlib
import json
import os
import sys
import tempfile
import warnings


def main(cases_dir: str, name: str) -> None:
    os.environ.setdefault("CASE_TMP", tempfile.mkdtemp(prefix="ct_case_"))
    sys.path.insert(0, cases_dir)
    warnings.simplefilter("ignore")
    import torch

    mod = importlib.import_module(name)
    if hasattr(mod, "setup"):
        mod.setup()
    x = torch.randn(4, 4)
    out = {"raised": False, "exc": None, "first_line": None}
    try:
        mod.f_compiled(x)
    except Exception as e:  # noqa: BLE001 - any exception is the measurement
        out = {"raised": True, "exc": f"{type(e).__module__}.{type(e).__qualname__}",
               "first_line": (str(e).strip().splitlines() or [""])[0]}
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
