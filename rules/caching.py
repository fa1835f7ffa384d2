"""Caches on the traced path: ``functools.cache``/``lru_cache`` (looked through), ``cached_property``
(a lock on Python 3.11), and cached functions whose Python side effects Dynamo replays."""
from compile_lint.ruledef import BREAK, NOTE, SILENT, DynamoOutcome, Rule

CACHED_PROPERTY = Rule(
    code="CL115",
    name="cached-property-in-compiled-region",
    kind=BREAK,
    message="reads `{callee}`, a functools.cached_property, inside the compiled region",
    dynamo=DynamoOutcome("torch._dynamo.exc.Unsupported", "GB0142", "Unsupported context manager",
                         "functools.py cached_property.__get__ (its RLock, Python 3.11; 3.12 dropped the lock)"),
    what="Finds reads of a `functools.cached_property` from traced code.",
    why="On Python 3.11 `cached_property.__get__` enters an `RLock`, which Dynamo cannot trace; it fails before "
        "the getter even runs. (Python 3.12 removed that lock; the getter is then traced like a property.)",
    example='''
import functools, torch

class Cfg:
    @functools.cached_property
    def scale(self):
        return 2.0

CFG = Cfg()

def f(x):
    return x * CFG.scale  # CL115
''',
    fix="Compute the value in `__init__` (or read it once before compiling) and store it as a plain attribute.",
    invalid=('''
import functools, torch
class C:
    @functools.cached_property
    def v(self):
        return 2.0
C0 = C()
def f(x):
    return x * C0.v
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import torch
class C:
    def __init__(self):
        self.v = 2.0  # computed in __init__, a plain attribute
C0 = C()
def f(x):
    return x * C0.v
f_c = torch.compile(f, fullgraph=True)
''',),
)

CACHED_SIDE_EFFECT = Rule(
    code="CL202",
    name="cached-function-side-effect",
    kind=SILENT,
    message="`{callee}` inside a cached function runs on every compiled call (Dynamo ignores the cache)",
    dynamo=DynamoOutcome("", None, "compiles, but Dynamo ignores the functools cache: the body's Python side "
                         "effects run at every trace and random values are drawn on every call"),
    what="Finds Python side effects (mutation of module state) and random tensors inside a "
         "`functools.cache`/`lru_cache` function reached from a compiled region.",
    why="Dynamo discards the cache wrapper and traces the wrapped function: a counter bumped inside it moves "
        "twice where eager moved once, a cached `torch.randn` is new noise on every call instead of one tensor, "
        "and a cached read of a mutable global returns the new value. No error tells you.",
    example='''
import functools, torch

@functools.cache
def noise():
    return torch.randn(4, 4)  # CL202: eager reuses one tensor, compiled draws new noise

def f(x):
    return x + noise()
''',
    fix="Compute the cached value before compiling and store it (a module global or an attribute), or make the "
        "function pure.",
    invalid=('''
import functools, torch
@functools.cache
def noise():
    return torch.randn(4)
def f(x):
    return x + noise()
f_c = torch.compile(f, fullgraph=True)
''',),
    fixed=('''
import torch
NOISE = torch.randn(4)  # computed before compiling, a module global
def f(x):
    return x + NOISE
f_c = torch.compile(f, fullgraph=True)
''',),
    valid=('''
import functools, torch
@functools.cache
def scale():
    return 2.0
def f(x):
    return x * scale()
f_c = torch.compile(f, fullgraph=True)
''',),
)

CACHE_ON_PATH = Rule(
    code="CL301",
    name="cache-wrapper-traced-through",
    kind=NOTE,
    message="`{callee}` is wrapped by functools.cache/lru_cache: Dynamo ignores the cache and traces its body",
    dynamo=DynamoOutcome("", None, "UserWarning: Dynamo detected a call to a `functools.lru_cache`-wrapped "
                         "function. Dynamo ignores the cache wrapper and directly traces the wrapped function."),
    what="Notes each cache-wrapped function on the way from a region to a hazard.",
    why="A warm cache does not keep Dynamo out of a loader: it traces the wrapped function on every compile, so "
        "pre-loading a JIT module does not help (measured cold and warm: the same error).",
    example='''
import functools, subprocess, torch

@functools.cache
def get_cuda_version():  # CL301 on the path
    return subprocess.check_output(["nvcc", "--version"])
''',
    fix="Hoist the cached call out of the region, or put the caller behind an op boundary.",
)

RULES = (CACHED_PROPERTY, CACHED_SIDE_EFFECT, CACHE_ON_PATH)

# Tensor factories whose value changes on every call: cached, they are a silent hazard (CL202).
RANDOM_FACTORIES = ("torch.randn", "torch.rand", "torch.randint", "torch.randperm", "torch.normal",
                    "torch.bernoulli", "torch.multinomial", "torch.randn_like", "torch.rand_like",
                    "torch.randint_like", "torch.poisson")
