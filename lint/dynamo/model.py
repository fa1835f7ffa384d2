"""What Dynamo does with a callee, as data.

Everything Dynamo-specific that is not a hazard sink lives here (sinks live with their rules in
``compile_lint.rules``).  Names are fully qualified as the resolver spells them (``os.path`` aliases are
normalised by ``normalize``).  Measured facts behind these tables: ``tests/corpus/README.md`` and the corpus
itself; the oracle test re-checks them on the installed torch.
"""
from __future__ import annotations

# Region entry points: calling these compiles their first argument (or returns a decorator that does).
COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch._dynamo.optimize", "torch.compiler.compile"})
# Keyword that means fullgraph for each entry point.
FULLGRAPH_KEYWORDS = {"torch.compile": "fullgraph", "torch.compiler.compile": "fullgraph",
                      "torch._dynamo.optimize": "nopython"}

# Wrappers that return their argument's behaviour unchanged when applied to a callable
# (`torch.compile(torch.no_grad()(model.forward))`).
TRANSPARENT_WRAPPER_CALLS = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.autograd.grad_mode.no_grad",
    "torch.amp.autocast", "torch.autocast",
})

# Decorators that leave the function traced as written.
TRANSPARENT_DECORATORS = frozenset({
    "staticmethod", "classmethod", "functools.wraps", "functools.update_wrapper", "typing.overload",
    "typing.final", "abc.abstractmethod", "torch.no_grad", "torch.inference_mode", "torch.enable_grad",
    "contextlib.contextmanager", "torch.jit.ignore", "torch.jit.unused", "torch._dynamo.dont_skip_tracing",
    "override", "typing_extensions.override", "typing.override",
})

# Dynamo ignores these cache wrappers and traces the wrapped function (with a one-time UserWarning).
CACHE_DECORATORS = frozenset({"functools.cache", "functools.lru_cache"})
CACHED_PROPERTY = frozenset({"functools.cached_property"})
PROPERTY = frozenset({"property", "builtins.property"})

# Graph break at the call site; the body runs eagerly (GB0098).  An error under fullgraph=True.
DISABLE_DECORATORS = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
                                "torch._dynamo.eval_frame.disable"})

# A real op: an opaque node in the graph, its body is never traced.
OP_DECORATORS = frozenset({"torch.library.custom_op", "torch.library.triton_op", "torch._library.custom_ops.custom_op",
                           "torch._custom_ops.custom_op", "torch._library.triton.triton_op"})

# The body runs at trace time (once, or once more than eager): side effects and values can differ from eager.
TRACE_TIME_DECORATORS = {
    "torch.compiler.allow_in_graph": "allow_in_graph",
    "torch._dynamo.allow_in_graph": "allow_in_graph",
    "torch._dynamo.nonstrict_trace": "nonstrict_trace",
    "torch.compiler.nonstrict_trace": "nonstrict_trace",
    "torch._dynamo.assume_constant_result": "assume_constant_result",
    "torch.compiler.assume_constant_result": "assume_constant_result",
}

# Predicates whose value is known inside every compiled region.
REGION_PREDICATES = {
    "torch.compiler.is_compiling": True,
    "torch._dynamo.is_compiling": True,
    "torch.compiler.is_dynamo_compiling": True,
    "torch._dynamo.external_utils.is_compiling": True,
    "torch._utils.is_compiling": True,
    "typing.TYPE_CHECKING": False,
}

# Packages whose functions are not traced by walking their source: torch is classified by its own trace
# rules (in-graph functions, ops); triton kernels are first-class in Dynamo.
OPAQUE_PACKAGES = frozenset({"torch", "triton", "functorch", "numpy", "sympy"})

# Op-registration helpers of frameworks: the function they register is called through a real op.
# (FlashInfer's own `register_custom_op` is deliberately absent: in the releases we read it returns its
# argument unchanged, which the resolver proves from its source, so it is no boundary.)
OP_REGISTRATION_DECORATORS = frozenset({
    "sglang.srt.utils.register_custom_op",
    "sglang.srt.utils.common.register_custom_op",
    "sglang.srt.utils.custom_op.register_custom_op",
})
# Calls returning an op wrapping their first argument.
OP_REGISTRATION_CALLS = frozenset({
    "sglang.srt.utils.register_custom_op_from_extern",
    "sglang.srt.utils.common.register_custom_op_from_extern",
    "sglang.srt.utils.custom_op.register_custom_op_from_extern",
})
# Calls that register `op_func=` as torch.ops.<ns>.<name>: call sites go through torch.ops anyway.
OP_DIRECT_REGISTRATION = frozenset({
    "sglang.srt.utils.direct_register_custom_op",
    "sglang.srt.utils.common.direct_register_custom_op",
    "vllm.utils.direct_register_custom_op",
    "vllm.utils.torch_utils.direct_register_custom_op",
})

# Constant-folded by Dynamo when every argument is a constant (SkipFunctionVariable special cases).
CONSTANT_FOLDED = frozenset({
    "importlib.util.find_spec", "importlib.metadata.version",
    "re.search", "re.match", "re.fullmatch", "re.compile", "re.sub", "re.subn", "re.split", "re.findall",
    "re.escape",
})

# Return types of external callables the resolver needs to follow (for method calls on their results).
EXTERNAL_RETURNS = {
    "pathlib.Path": "pathlib.Path", "pathlib.PosixPath": "pathlib.Path", "pathlib.PurePath": "pathlib.PurePath",
    "pathlib.Path.home": "pathlib.Path", "pathlib.Path.cwd": "pathlib.Path",
    "threading.Lock": "threading.Lock", "threading.RLock": "threading.RLock",
    "threading.Condition": "threading.Condition", "threading.Semaphore": "threading.Semaphore",
    "threading.Event": "threading.Event", "multiprocessing.Lock": "threading.Lock",
    "logging.getLogger": "logging.Logger", "logging.Logger": "logging.Logger",
    "builtins.open": "io.TextIOWrapper", "io.open": "io.TextIOWrapper",
    "subprocess.Popen": "subprocess.Popen",
    "filelock.FileLock": "filelock.FileLock", "filelock.SoftFileLock": "filelock.FileLock",
    "tempfile.NamedTemporaryFile": "io.TextIOWrapper", "tempfile.TemporaryDirectory": "tempfile.TemporaryDirectory",
}
# Methods that return a Path from a Path (pure path arithmetic).
PATH_RETURNING_METHODS = frozenset({
    "parent", "with_suffix", "with_name", "with_stem", "joinpath", "resolve", "absolute", "expanduser",
    "relative_to", "__truediv__",
})
PATH_PURE_ATTRS = frozenset({
    "name", "suffix", "suffixes", "stem", "parts", "parent", "parents", "anchor", "drive", "root",
    "as_posix", "as_uri", "is_absolute", "is_relative_to", "joinpath", "match", "relative_to",
    "with_name", "with_stem", "with_suffix", "__str__", "__fspath__",
})

# Aliases the resolver normalises to one spelling.
_ALIASES = (
    ("posixpath.", "os.path."),
    ("ntpath.", "os.path."),
    ("genericpath.", "os.path."),
    ("pathlib._local.", "pathlib."),
    ("pathlib.PosixPath", "pathlib.Path"),
    ("pathlib.WindowsPath", "pathlib.Path"),
    ("torch.nn.modules.module.Module", "torch.nn.Module"),
    ("torch._dynamo.eval_frame.disable", "torch._dynamo.disable"),
)


def normalize(name: str) -> str:
    for old, new in _ALIASES:
        if name.startswith(old):
            return new + name[len(old):]
    return name


def is_nn_module_base(name: str) -> bool:
    """An external base class that makes a class an nn.Module (calling an instance runs forward)."""
    return name == "torch.nn.Module" or name.startswith("torch.nn.") and name.split(".")[-1][:1].isupper()
