"""Reads of the host environment that Dynamo bakes into the graph without a guard."""
from compile_lint.ruledef import SILENT, DynamoOutcome, Rule

ENV_READ = Rule(
    code="CL201",
    name="environment-read-baked",
    kind=SILENT,
    message="`{callee}` is read once at trace time and baked into the graph without a guard",
    dynamo=DynamoOutcome("", None, "compiles; the value is constant-folded with no guard, so later changes "
                         "are ignored (os.getenv always; os.environ.get / `in os.environ` when the key is absent)"),
    what="Finds `os.getenv(...)`, `os.environ.get(KEY)` and `KEY in os.environ` in traced code, where KEY may be "
         "absent when the function is first compiled.",
    why="Dynamo installs a guard for `os.environ[KEY]` and for `.get` of a key that exists, so a change "
        "recompiles. But `os.getenv` (present or absent) and `.get`/`in` of an absent key are traced through "
        "`os` module globals that Dynamo does not guard: the branch taken at the first compile stays forever "
        "(measured on torch 2.13). A read inside a `functools.cache` function is not reported: eager caches it "
        "too. A key the scanned code itself sets (and never removes) is taken as present.",
    example='''
import os, torch

def f(x):
    if os.getenv("MY_FAST_PATH") == "1":  # CL201
        return x * 2
    return x
''',
    fix="Read the variable once, outside the compiled function, and pass the value in (or use "
        "`os.environ[KEY]` for a key that is always set).",
    calls=("os.getenv", "os.environ.get", "os.environ.__contains__"),
    invalid=('''
import os, torch
os.environ.pop("COMPILE_LINT_EXAMPLE_K", None)
def f(x):
    return x + (1 if os.getenv("COMPILE_LINT_EXAMPLE_K") else 0)
f_c = torch.compile(f, fullgraph=True)
def change():  # the compiled f keeps the value read at its first compile
    os.environ["COMPILE_LINT_EXAMPLE_K"] = "1"
''',),
    fixed=('''
import os, torch
os.environ.pop("COMPILE_LINT_EXAMPLE_K", None)
def f(x, k):
    return x + (1 if k else 0)
f_c = torch.compile(f, fullgraph=True)
def inputs(x):  # read outside the compiled function, the value passed in (a new value recompiles)
    return (x, os.getenv("COMPILE_LINT_EXAMPLE_K"))
def change():
    os.environ["COMPILE_LINT_EXAMPLE_K"] = "1"
''', '''
import os, torch
os.environ["COMPILE_LINT_EXAMPLE_K"] = "0"  # a key that is always set, read with os.environ[KEY]
def f(x):
    return x + int(os.environ["COMPILE_LINT_EXAMPLE_K"])
f_c = torch.compile(f, fullgraph=True)
def change():
    os.environ["COMPILE_LINT_EXAMPLE_K"] = "1"
'''),
    valid=('''
import os, torch
os.environ["SCALE"] = "2"
def f(x):
    return x * float(os.environ["SCALE"])
f_c = torch.compile(f, fullgraph=True)
''',),
)

PLATFORM = Rule(
    code="CL203",
    name="platform-probe-at-trace-time",
    kind=SILENT,
    message="`{callee}` probes the platform while tracing",
    dynamo=DynamoOutcome("", None, "compiles, but tracing `platform.*` evaluated a lazy `uname -p` subprocess "
                         "that eager never ran; the result is baked"),
    what="Finds `platform.system()`, `platform.machine()`, `platform.uname()` and friends in traced code.",
    why="Dynamo wraps `platform`'s cached `uname_result` and, in doing so, evaluates its lazy `processor` "
        "property: tracing spawns `uname -p`. No error; an extra process at each compile. Some of these do not "
        "compile at all: on torch 2.13 `platform.platform()` (GB0088) and `platform.architecture()` (GB0007) "
        "stop Dynamo, and on torch 2.11 `platform.system()` raises `InternalTorchDynamoError`; a call the "
        "measured table says stops Dynamo is reported as an error under `fullgraph=True`, like any break.",
    example='''
import platform, torch

def f(x):
    if platform.machine() == "aarch64":  # CL203
        return x * 2
    return x
''',
    fix="Probe the platform once at import time and keep the value in a module constant.",
    invalid=('''
import platform, torch
def f(x):
    return x * (2 if platform.system() == "Linux" else 1)
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import platform, torch
SYSTEM = platform.system()  # probed once, at import, a module constant
def f(x):
    return x * (2 if SYSTEM == "Linux" else 1)
f_c = torch.compile(f, fullgraph=True)
''',),
    calls=("platform.system", "platform.machine", "platform.processor", "platform.uname", "platform.node",
           "platform.release", "platform.version", "platform.platform", "platform.architecture"),
)

RULES = (ENV_READ, PLATFORM)
