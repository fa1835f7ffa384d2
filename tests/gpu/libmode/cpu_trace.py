"""CPU half of the after-fix proof: does Dynamo trace each fixed FlashInfer API under fullgraph=True, into one graph
holding the API's op, without a GPU?

Usage: LIBMODE_DEV=cpu PYTHONPATH=SITE:DEPS python3 cpu_trace.py APIS_FILE OUT.jsonl
For each case of cases.py whose API is in APIS_FILE, with the case's inputs made on the CPU: torch.compile(f,
fullgraph=True) with a backend that records the FX graph and runs it under FakeTensorMode (the kernels need a GPU;
the fakes do not).  Recorded: COMPILES / FAILS (the exception, Dynamo's innermost FlashInfer frame), the op nodes
of the graph, and whether the fake outputs' shapes and dtypes are those the case expects (from a GPU run, when
given: --expect RESULTS.jsonl of fixproof.py).  The kernels, the CUDA graph and the eager comparison need the GPU:
fixproof.py.
"""
import json
import os
import re
import sys
import traceback
import warnings

warnings.simplefilter("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import CASES, COMMON  # noqa: E402

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402


def innermost_fi(e):
    s = str(e)
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', s.split("from user code:", 1)[1]) \
        if "from user code:" in s else []
    fi = [f"{f[f.rfind('/flashinfer/') + 1:]}:{l}:{n}" for f, l, n in frames if "/flashinfer/" in f]
    return fi[-1] if fi else None


def main():
    apis = {x.strip() for x in open(sys.argv[1]) if x.strip()}
    out = open(sys.argv[2], "w")
    for name, (api, group, code) in CASES.items():
        if api not in apis:
            continue
        rec = {"case": name, "api": api}
        g = {}
        try:
            exec(COMMON + code, g)
        except Exception as e:
            rec["setup"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
            out.write(json.dumps(rec) + "\n")
            print(f"{name:45s} setup fails on CPU: {rec['setup'][:100]}", flush=True)
            continue
        graphs = []

        def backend(gm, example_inputs):
            graphs.append(gm)

            def run(*args):
                with FakeTensorMode(allow_non_fake_inputs=True) as m:
                    return gm(*[m.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args])
            return run

        torch._dynamo.reset()
        try:
            res = torch.compile(g["f"], fullgraph=True, backend=backend)(*g["args"])
            rec["fullgraph"] = "COMPILES"
            ops = []
            for gm in graphs:
                for n in gm.graph.nodes:
                    if n.op == "call_function" and hasattr(n.target, "_schema"):
                        ops.append(str(n.target._schema.name) if hasattr(n.target._schema, "name") else str(n.target))
            rec["graphs"] = len(graphs)
            rec["ops"] = sorted({o for o in ops if o.startswith(("flashinfer", "aten::empty", "aten::zeros"))})
            flat = res if isinstance(res, (tuple, list)) else [res]
            rec["fake_outputs"] = [[list(t.shape), str(t.dtype)] for t in flat if isinstance(t, torch.Tensor)]
        except Exception as e:
            rec["fullgraph"] = "FAILS"
            rec["exc"] = f"{type(e).__module__}.{type(e).__qualname__}"
            rec["msg"] = (str(e).strip().splitlines() or [""])[0][:300]
            rec["innermost_fi"] = innermost_fi(e)
            rec["tb"] = traceback.format_exc()[-1200:]
        out.write(json.dumps(rec) + "\n")
        out.flush()
        print(f"{name:45s} {rec['fullgraph']:9s} graphs={rec.get('graphs', '-')} "
              f"ops={[o for o in rec.get('ops', []) if o.startswith('flashinfer')]} {rec.get('msg', '')[:100]}",
              flush=True)


if __name__ == "__main__":
    main()
