"""What Dynamo does with a callee, as data.

Everything Dynamo-specific that is not a hazard sink lives here (sinks live with their rules in
``compile_lint.rules``).  Names are fully qualified as the resolver spells them (``os.path`` aliases are
normalised by ``normalize``).  Measured facts behind these tables: ``tests/corpus/README.md`` and the corpus
itself; the oracle test re-checks them on the installed torch.  What each callee does when called (compiles,
or the exception and GB id it stops with) is measured per torch version in ``data/verdicts-torch-*.json``
(``verdicts.py``), which takes precedence over the stop locations below.
"""
from __future__ import annotations

from functools import lru_cache

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

# External methods that run methods of the class they are called on, a subclass the scanned code defines:
# `GeLUFunction.apply(x)` runs the class's own `forward` (and `setup_context`), and Dynamo traces its
# `backward` while tracing the call (it speculates both to build the autograd function's graph).
SUBCLASS_CALLBACKS = {
    "torch.autograd.Function.apply": ("forward", "setup_context", "backward"),
}

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
    # False while Dynamo traces (measured on torch 2.13: `if torch.jit.is_scripting() or torch.jit.is_tracing()
    # or torch._C._get_tracing_state(): print(...)` compiles under fullgraph=True)
    "torch.jit.is_scripting": False,
    "torch.jit.is_tracing": False,
    "torch._C._get_tracing_state": False,
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

# Constant-folded by Dynamo when every argument is a constant (SkipFunctionVariable special cases): the
# candidates.  The walk folds only those the verdict table of the torch in use measures to compile (every one
# on torch 2.13; none of re.* or importlib's on torch 2.11, where they stop Dynamo).
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
    # its .major/.minor are what --target-arch says (lint/arch.py), also through a helper that returns it
    "torch.cuda.get_device_properties": "torch.cuda.get_device_properties()",
    # its methods have measured verdicts (get_state stops Dynamo): the object must be known to find them
    "torch.Generator": "torch.Generator",
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


def _tensor_methods() -> frozenset:
    import json
    from pathlib import Path

    try:
        data = json.loads((Path(__file__).parent / "data" / "tensor_methods.json").read_text())
        return frozenset(data["methods"])
    except (OSError, ValueError, KeyError):
        return frozenset()


# `x.view(...)`, `t.to(...)` on a receiver of unknown type: a tensor op, not an unresolved call.
TENSOR_METHODS = _tensor_methods()

# Tensor methods whose result is not a tensor (a size, a Python number, a flag): a test on them is metadata
# Dynamo decides at trace time, or a call another rule names (`.item()`).
NON_TENSOR_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "item", "tolist", "stride", "storage_offset", "data_ptr",
    "element_size", "is_contiguous", "is_floating_point", "is_complex", "is_signed", "get_device", "type",
    "equal", "is_nonzero", "is_pinned", "is_shared", "untyped_storage", "numpy", "__len__", "__bool__",
    "__int__", "__float__", "has_names", "is_set_to", "dim_order",
})


def tensor_type(t: str) -> bool:
    """Whether an external value's type names a tensor: ``torch.Tensor``, what a tensor method returned
    (``torch.Tensor.max()``), or what the ``torch`` function of a tensor method's name returned
    (``torch.max()``: transformers' ``seq_len = torch.max(position_ids) + 1``)."""
    if t == "torch.Tensor":
        return True
    if not t.endswith("()"):
        return False
    if t.startswith("torch.Tensor."):  # a chain of methods: `torch.Tensor.abs().max().to()`, the last decides
        name = t.rsplit(".", 1)[-1][:-2]
    elif t.startswith("torch.") and t.count(".") == 1:
        name = t[len("torch."):-2]
        if name not in TENSOR_METHODS:
            return False
    else:
        return False
    return name not in NON_TENSOR_METHODS


@lru_cache(maxsize=None)  # pure, and asked millions of times on a big scan
def normalize(name: str) -> str:
    for old, new in _ALIASES:
        if name.startswith(old):
            return new + name[len(old):]
    return name


def is_nn_module_base(name: str) -> bool:
    """An external base class that makes a class an nn.Module (calling an instance runs forward)."""
    return name == "torch.nn.Module" or name.startswith("torch.nn.") and name.split(".")[-1][:1].isupper()


# Graph-break ids and the first line Dynamo prints for them (torch 2.13 graph_break_registry.json).
GB_MESSAGES = {
    "GB0007": "Attempted to call function marked as skipped",
    "GB0059": "Failed to trace builtin operator",
    "GB0098": "Skip calling `torch.compiler.disable()`d function",
    "GB0142": "Unsupported context manager",
    "GB0156": "Unsupported method call",
    "GB0291": "logging.Logger method not supported for non-export cases",
    "GB4841": "Unsupported python_type() call",
    "GB8977": "Invalid call to __build_class__",
    "GB0208": "torch.* op returned non-Tensor",
}

# Where Dynamo actually stops for a callee (measured on torch 2.13; see tests/corpus).  Longest prefix wins;
# "x.*" matches a whole module.  The measured verdict table comes first (exception, message, GB id); these
# locations complete it when the GB ids agree.  A rule's own DynamoOutcome is the last fallback.
CALLEE_STOPS = {
    "subprocess.*": ("GB0007", "_thread.allocate_lock (threading.Lock() in subprocess.Popen.__init__)"),
    "os.system": ("GB0007", "posix.system"),
    "os.popen": ("GB0007", "_thread.allocate_lock (os.popen starts a subprocess.Popen)"),
    "pathlib.Path.exists": ("GB0007", "posix.stat (pathlib Path.stat)"),
    "pathlib.Path.stat": ("GB0007", "posix.stat"),
    "pathlib.Path.is_file": ("GB0007", "posix.stat (pathlib Path.stat)"),
    "pathlib.Path.is_dir": ("GB0007", "posix.stat (pathlib Path.stat)"),
    "pathlib.Path.read_text": ("GB0007", "io.text_encoding"),
    "pathlib.Path.read_bytes": ("GB0007", "io.open"),
    "pathlib.Path.write_text": ("GB0007", "io.text_encoding"),
    "pathlib.Path.glob": ("GB0007", "sys.audit"),
    "pathlib.Path.rglob": ("GB0007", "sys.audit"),
    "pathlib.Path.mkdir": ("GB0007", "posix.mkdir"),
    "pathlib.Path.resolve": ("GB0007", "posix.lstat (posixpath._joinrealpath)"),
    "os.path.*": ("GB0007", "posix.stat (<frozen genericpath>)"),
    "shutil.which": ("GB0007", "posix.stat (os.path.exists while scanning PATH)"),
    "os.makedirs": ("GB0007", "posix.stat (<frozen genericpath>)"),
    "os.*": ("GB0007", "the posix C function, at the call"),
    "tempfile.*": ("GB0156", "lock.acquire (tempfile._get_candidate_names)"),
    "filelock.*": ("GB0007", "posix.getpid (filelock/_api.py)"),
    "builtins.open": ("GB0059", "builtin open, at the call"),
    "builtins.print": ("GB0059", "builtin print, at the call"),
    "io.open": ("GB0059", "builtin open, at the call"),
    "json.load": ("GB0059", "builtin open (the file argument), at the call"),
    "json.loads": ("GB0156", "json's C Scanner (json/decoder.py raw_decode)"),
    "logging.Logger.*": ("GB0291", "the Logger method, at the call"),
    "logging.*": ("GB4841", "logging/__init__.py (root logger)"),
    "warnings.*": ("GB0007", "_warnings.warn (C), at the call"),
    "time.*": ("GB0007", "time.<fn> (C), at the call"),
    "threading.Lock.acquire": ("GB0156", "the lock's C acquire, at the call"),
    "threading.Lock.release": ("GB0156", "the lock's C release, at the call"),
    "threading.RLock.acquire": ("GB0156", "the lock's C acquire, at the call"),
    "threading.RLock.release": ("GB0156", "the lock's C release, at the call"),
    "threading.Lock.__enter__": ("GB0142", "the lock's C __enter__ (with lock:)"),
    "threading.RLock.__enter__": ("GB0142", "the lock's C __enter__ (with lock:)"),
    "threading.*": ("GB0007", "_thread.allocate_lock"),
    "importlib.*": ("GB0007", "importlib (file is under a skip directory), at the call"),
    "ctypes.*": ("GB8977", "ctypes/__init__.py (__build_class__)"),
    "hashlib.*": ("GB0007", "_hashlib.openssl_* (C)"),
    "socket.*": ("GB0007", "_socket.<fn> (C)"),
    "random.*": ("GB0007", "Random.random (random is on Dynamo's skip list)"),
    "inspect.*": ("GB0007", "torch.package.package_importer._patched_getfile / linecache"),
    "torch.cuda.device_count": ("GB0208", "the call: it returns a Python int, not a tensor"),
}


@lru_cache(maxsize=None)
def callee_stop(callee: str):
    """(gb, where) for a callee from ``CALLEE_STOPS``, or None."""
    best = None
    for pat, stop in CALLEE_STOPS.items():
        if pat.endswith(".*"):
            ok = callee.startswith(pat[:-1])
            length = len(pat) - 2
        else:
            ok = callee == pat
            length = len(pat) + 1  # an exact name beats any prefix of it
        if ok and (best is None or length > best[0]):
            best = (length, stop)
    return best[1] if best else None
