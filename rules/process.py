"""Subprocesses: ``subprocess.*``, ``os.system``, ``os.popen``, ``os.exec*`` / ``os.spawn*``."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

SUBPROCESS = Rule(
    code="CL101",
    name="subprocess-in-compiled-region",
    kind=BREAK,
    message="`{callee}` starts a subprocess inside the compiled region",
    dynamo=DynamoOutcome(
        "torch._dynamo.exc.Unsupported", "GB0007", "Attempted to call function marked as skipped",
        "_thread.allocate_lock (threading.Lock() in subprocess.Popen.__init__); posix.system for os.system",
    ),
    what="Finds a subprocess started from code that Dynamo traces: `subprocess.run`, `check_output`, `Popen`, "
         "`getoutput`, `os.system`, `os.popen`, `os.exec*`, `os.spawn*`.",
    why="Dynamo inlines `subprocess.py` and stops at the first C function without Python source, the "
        "`threading.Lock()` that `Popen.__init__` creates. Under `fullgraph=True` that is "
        "`Unsupported: Attempted to call function marked as skipped`; otherwise a graph break, and the "
        "process runs on every call. A `try/except` around the call does not help (the whole frame then runs "
        "eagerly), and neither does a warm `functools.cache` above it: Dynamo ignores the cache and traces "
        "through it (FlashInfer's `get_cuda_version` -> `nvcc --version`).",
    example='''
import subprocess, torch

def f(x):
    ver = subprocess.check_output(["nvcc", "--version"], text=True)  # CL101
    return x * len(ver)

f_c = torch.compile(f, fullgraph=True)
''',
    fix="Compute the value once, outside the compiled region (at import or in `__init__`), and read the stored "
        "result; or put the whole library call behind an op boundary (`torch.library.custom_op`). "
        "`torch.compiler.disable` only helps when the region is not fullgraph.",
    fix_safety="The op-boundary and hoist fixes are unsafe: they change when the process runs.",
    fixes=("op-boundary", "hoist-load", "compiler-disable"),
    calls=("subprocess.run", "subprocess.check_output", "subprocess.check_call", "subprocess.call",
           "subprocess.Popen", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen",
           "os.execv", "os.execve", "os.execvp", "os.execvpe", "os.execl", "os.execle", "os.execlp", "os.execlpe",
           "os.spawnv", "os.spawnve", "os.spawnl", "os.spawnle", "os.spawnvp", "os.spawnlp", "os.posix_spawn",
           "os.posix_spawnp", "os.fork", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
           # waiting on a child (the corpus's c003: once Popen is opaque, `p.wait()` stops in Popen._wait's lock)
           "subprocess.Popen.wait", "subprocess.Popen.communicate", "subprocess.Popen.poll"),
    invalid=('''
import subprocess, torch
def f(x):
    return x + len(subprocess.run(["true"]).args)
f_c = torch.compile(f, fullgraph=True)
''', '''
import os, torch
def f(x):
    os.system("true")
    return x
f_c = torch.compile(f)
'''),
    fixed=('''
import subprocess, torch
N = len(subprocess.run(["true"]).args)  # computed once, at import, and read as a global
def f(x):
    return x + N
f_c = torch.compile(f, fullgraph=True)
''', '''
import subprocess, torch
@torch.library.custom_op("compile_lint_example::run_true", mutates_args=())
def run_true(x: torch.Tensor) -> torch.Tensor:  # an op boundary: the process runs in the op's body
    return x + len(subprocess.run(["true"]).args)
@run_true.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return run_true(x)
f_c = torch.compile(f, fullgraph=True)
''', '''
import os, torch
os.system("true")  # at import
def f(x):
    return x
f_c = torch.compile(f)
'''),
    valid=('''
import subprocess, torch
N = len(subprocess.check_output(["echo", "hi"]))  # at import time: not traced
def f(x):
    return x + N
f_c = torch.compile(f, fullgraph=True)
''',),
)

RULES = (SUBPROCESS,)
