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
        "costs a break at each call (5 were counted for one `rmsnorm` call on an H200). Dynamo never traces the "
        "disabled function, so the walk stops at the call: the hazards behind it are not reported, unless "
        "`--show-disabled`, as notes (what removing the disable would expose; under fullgraph they still need an "
        "op boundary).",
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
    fixed=('''
import torch
@torch.library.custom_op("compile_lint_example::g", mutates_args=())
def g(x: torch.Tensor) -> torch.Tensor:  # an op boundary instead of torch.compiler.disable
    return x + 1
@g.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return g(x)
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
''', '''
import subprocess, torch, torch._dynamo
ARGS = ["echo", "a"]
@torch._dynamo.assume_constant_result
def out_len():
    return len(subprocess.check_output(ARGS))
def f(x):
    return x * out_len()
f_c = torch.compile(f, fullgraph=True)
def change():  # the compiled f keeps the length read at its first compile
    ARGS.append("bcd")
'''),
    fixed=('''
import subprocess, torch
ARGS = ["echo", "a"]
@torch.library.custom_op("compile_lint_example::out_len", mutates_args=())
def out_len(x: torch.Tensor) -> torch.Tensor:  # a real op: its body runs once per call
    return x * len(subprocess.check_output(ARGS))
@out_len.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return out_len(x)
f_c = torch.compile(f, fullgraph=True)
def change():
    ARGS.append("bcd")
''', '''
import torch, torch._dynamo
@torch._dynamo.assume_constant_result
def ver():  # made pure
    return 2
def f(x):
    return x * ver()
f_c = torch.compile(f, fullgraph=True)
'''),
)

RULES = (DISABLE, TRACE_TIME)
