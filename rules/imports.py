"""Dynamic imports and native libraries: ``importlib.import_module``, ``__import__``, ``ctypes``."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

IMPORTLIB = Rule(
    code="CL110",
    name="dynamic-import-in-compiled-region",
    kind=BREAK,
    message="`{callee}` imports a module inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007", "Attempted to call function marked as skipped",
                         "importlib (file is under a skip directory), at the call"),
    what="Finds `importlib.import_module`, `importlib.reload`, `__import__` and spec-based loading in traced code. "
         "(A plain `import x` statement and `importlib.metadata.version(...)`/`find_spec(...)` with constant "
         "arguments are fine: Dynamo runs or constant-folds them.)",
    why="`importlib` is on Dynamo's builtin skip list: calling into it is `Attempted to call function marked as "
        "skipped` under `fullgraph=True`.",
    example='''
import importlib, torch

def f(x):
    mod = importlib.import_module("my_kernels")  # CL110
    return mod.scale(x)
''',
    fix="Import at module level (or with an `import` statement).",
    calls=("importlib.import_module", "importlib.reload", "builtins.__import__", "importlib.__import__",
           "importlib.util.spec_from_file_location", "importlib.util.module_from_spec"),
    invalid=('''
import importlib, torch
def f(x):
    importlib.import_module("json")
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import importlib, torch
JSON = importlib.import_module("json")  # imported at module level
def f(x):
    return x + len(JSON.__name__)
f_c = torch.compile(f, fullgraph=True)
''', '''
import torch
def f(x):
    import json  # an import statement: Dynamo runs it
    return x + len(json.__name__)
f_c = torch.compile(f, fullgraph=True)
'''),
    valid=('''
import importlib.metadata, torch
def f(x):
    return x + len(importlib.metadata.version("torch"))
f_c = torch.compile(f, fullgraph=True)
''',),
)

CTYPES = Rule(
    code="CL111",
    name="ctypes-in-compiled-region",
    kind=BREAK,
    message="`{callee}` loads or calls a native library through ctypes inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB8977 / GB0007 / GB0156",
                         "Invalid call to __build_class__ (loading a library) / Attempted to call function marked "
                         "as skipped (find_library) / Unsupported method call (ctypes types)",
                         "ctypes/__init__.py"),
    what="Finds `ctypes.CDLL`, `ctypes.cdll.LoadLibrary` and friends in traced code.",
    why="Loading a shared library builds classes dynamically and calls C: Dynamo cannot trace it.",
    example='''
import ctypes, torch

def f(x):
    lib = ctypes.CDLL("libcuda.so")  # CL111
    return x
''',
    fix="Load the library once at import; call its functions from an op (`torch.library.custom_op`).",
    fixes=("op-boundary",),
    calls=("ctypes.CDLL", "ctypes.PyDLL", "ctypes.cdll.LoadLibrary", "ctypes.pydll.LoadLibrary",
           "ctypes.util.find_library", "ctypes.*"),
    invalid=('''
import ctypes, torch
def f(x):
    ctypes.CDLL(None)
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import ctypes, torch
LIBC = ctypes.CDLL(None)  # loaded once, at import
@torch.library.custom_op("compile_lint_example::c_abs", mutates_args=())
def c_abs(x: torch.Tensor) -> torch.Tensor:  # its functions called from an op
    return x + LIBC.abs(-3)
@c_abs.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return c_abs(x)
f_c = torch.compile(f, fullgraph=True)
''',),
)

RULES = (IMPORTLIB, CTYPES)
