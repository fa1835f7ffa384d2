"""Where tracing stops on purpose: ``torch.compiler.disable`` (a graph break), and decorators whose body runs
at trace time (``allow_in_graph``, ``nonstrict_trace``, ``assume_constant_result``)."""
from compile_lint.ruledef import BREAK, SILENT, DynamoOutcome, Rule

DISABLE = Rule(
    code="CL116",
    name="compiler-disable-in-region",
    kind=BREAK,
    message="calls `{callee}`, which is wrapped in torch.compiler.disable",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0098",
                         "Skip calling `torch.compiler.disable()`d function", "the call site"),
    what="Finds calls of functions wrapped in `torch.compiler.disable` / `torch._dynamo.disable` (decorator, call "
         "or an alias of them) from a compiled region.",
    why="`disable` is a graph break by design: under `fullgraph=True` it is an error, so it is not a fix there "
        "(measured: FlashInfer's loader wrapped in `disable` still fails a fullgraph capture). In default mode it "
        "costs a break at each call (5 were counted for one `rmsnorm` call on an H200). Under fullgraph the "
        "hazards behind the disabled function are reported too: they still need an op boundary.",
    example='''
import torch

@torch.compiler.disable
def load_kernel():
    ...

def f(x):
    load_kernel()  # CL116: an error under fullgraph=True
    return x
''',
    fix="In a fullgraph region, replace the disabled call with an op boundary (`torch.library.custom_op`). "
        "Elsewhere the break is the price of the disable; keep it out of hot paths.",
    fixes=("op-boundary",),
    invalid=('''
import torch
@torch.compiler.disable
def g():
    return 1
def f(x):
    return x + g()
f_c = torch.compile(f, fullgraph=True)
''',),
)

TRACE_TIME = Rule(
    code="CL204",
    name="impure-trace-time-function",
    kind=SILENT,
    message="{detail} in a function marked `{callee}`: it runs at trace time, not like eager",
    dynamo=DynamoOutcome("", None, "compiles; allow_in_graph/nonstrict_trace run the body once more at trace "
                         "time, assume_constant_result runs it once and bakes the result (stale afterwards)"),
    what="Finds host side effects (file I/O, subprocesses, ...) inside functions marked "
         "`torch.compiler.allow_in_graph`, `torch._dynamo.nonstrict_trace` or `assume_constant_result`.",
    why="These markers promise Dynamo the function is safe to run while tracing. With I/O inside, "
        "`allow_in_graph`/`nonstrict_trace` run it one extra time (3 file opens where eager made 2), and "
        "`assume_constant_result` freezes whatever it read the first time: no error, different behaviour.",
    example='''
import torch

@torch._dynamo.assume_constant_result
def cuda_major():
    return int(open("/etc/cuda_version").read())  # CL204: read once, baked forever

def f(x):
    return x * cuda_major()
''',
    fix="Make the marked function pure, or turn it into a real op (`torch.library.custom_op`), whose body runs "
        "exactly once per call.",
    fixes=("op-boundary",),
    invalid=('''
import subprocess, torch, torch._dynamo
@torch._dynamo.assume_constant_result
def ver():
    return len(subprocess.check_output(["true"]))
def f(x):
    return x * ver()
f_c = torch.compile(f, fullgraph=True)
''',),
)

RULES = (DISABLE, TRACE_TIME)
