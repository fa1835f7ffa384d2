"""JIT compilation and the foreign callables it returns (FlashInfer/TVM-FFI modules, cpp_extension, CuTe DSL)."""
from compile_lint.ruledef import BREAK, DynamoOutcome, Rule

JIT_LOAD = Rule(
    code="CL113",
    name="jit-load-in-compiled-region",
    kind=BREAK,
    message="`{callee}` JIT-compiles or loads a native module inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0007", "Attempted to call function marked as skipped",
                         "the loader's first file-system or subprocess call (posix.stat, _thread.allocate_lock)"),
    what="Finds calls that build or load a native extension from traced code: "
         "`torch.utils.cpp_extension.load`/`load_inline`, `tvm_ffi.load_module`, `cutlass.cute.compile`, and "
         "unresolved `*.build_and_load()` calls (FlashInfer's `JitSpec`).",
    why="A JIT load checks the cache on disk, may run `nvcc` and takes a file lock: all host side effects that "
        "Dynamo cannot trace. Warming the cache first does not help; Dynamo ignores `functools.cache` and traces "
        "the loader again.",
    example='''
import torch
from torch.utils.cpp_extension import load

def f(x):
    ext = load(name="k", sources=["k.cu"])  # CL113
    return ext.run(x)
''',
    fix="Load at import time (hoist) and call the loaded function through an op boundary "
        "(`torch.library.custom_op`): hoisting alone still leaves an opaque foreign callable in the trace.",
    fix_safety="Unsafe: moves the build/load to import time.",
    fixes=("hoist-load", "op-boundary"),
    calls=("torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline", "tvm_ffi.load_module",
           "tvm_ffi.module.load_module", "cutlass.cute.compile", "cute.compile"),
    shapes=(("build_and_load", 0),),
    invalid=('''
import torch
from torch.utils.cpp_extension import load_inline
def f(x):
    load_inline(name="k", cpp_sources=[""])
    return x
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import ctypes, torch
from torch.utils.cpp_extension import load_inline
# loaded at import time (hoisted): a plain shared library, built in well under a second
SO = load_inline(name="compile_lint_example_k", cpp_sources=['extern "C" int k() { return 3; }'],
                 is_python_module=False, no_implicit_headers=True)
LIB = ctypes.CDLL(SO)
@torch.library.custom_op("compile_lint_example::k", mutates_args=())
def k(x: torch.Tensor) -> torch.Tensor:  # the loaded function called through an op boundary
    return x + LIB.k()
@k.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return k(x)
f_c = torch.compile(f, fullgraph=True)
''',),
)

FOREIGN_CALLABLE = Rule(
    code="CL114",
    name="foreign-callable-in-compiled-region",
    kind=BREAK,
    message="calls `{callee}`, an opaque native function of a library loaded at run time (a JIT build, ctypes)",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0156", "Unsupported method call",
                         "__call__ of class Function (tvm_ffi.Function), at the call"),
    what="Finds calls of functions that come out of a native module loaded at run time (a `tvm_ffi.Module`'s "
         "functions, a `cpp_extension` module's functions, a `ctypes.CDLL`'s function pointers) when no op "
         "boundary wraps them. This covers the ctypes-backed vendor modules (`pynvml` from `nvidia-ml-py`): "
         "`nvmlInit()` loads `libnvidia-ml` into a module global (`global nvmlLib; nvmlLib = CDLL(...)`) and "
         "calls `getattr(nvmlLib, name)(...)`, a `_FuncPtr` call (measured: `ctypes.CDLL(...).*`, GB0156).",
    why="Dynamo cannot see inside a foreign function object and has no rule to put it in the graph: "
        "`Unsupported method call`. This is why hoisting FlashInfer's module load out of the region is not "
        "enough under `fullgraph=True` (measured on an H200 with flashinfer 0.7.2.post1).",
    example='''
import torch, tvm_ffi
MOD = tvm_ffi.load_module("/opt/k.so")

def f(x, out):
    MOD.rmsnorm(out, x)  # CL114
    return out
''',
    fix="Register the call as a real op (`torch.library.custom_op` with a `register_fake`), or call the library's "
        "own registered op (`torch.ops.<ns>.<name>`).",
    fixes=("op-boundary",),
    calls=(),
)

RULES = (JIT_LOAD, FOREIGN_CALLABLE)

# Callables whose *result* is a foreign module: calling anything reached through it is CL114.
FOREIGN_ORIGINS = ("tvm_ffi.load_module", "tvm_ffi.module.load_module", "torch.utils.cpp_extension.load",
                   "torch.utils.cpp_extension.load_inline", "ctypes.CDLL", "ctypes.cdll.LoadLibrary",
                   "cutlass.cute.compile", "cute.compile")
