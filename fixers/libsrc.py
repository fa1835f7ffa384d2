"""Reading library functions (with ``ast``; nothing is imported): definitions by qualname, parameters and how a
call binds to them, annotations as ``torch.library`` schema types, op-registration decorators.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

_TREES: dict = {}


def tree(path: str) -> Optional[ast.Module]:
    """The parsed file, cached while the file is unchanged (a fix round rewrites files the next round reads)."""
    p = str(path)
    try:
        st = Path(p).stat()
        key = (p, st.st_mtime_ns, st.st_size)
    except OSError:
        key = (p, None, None)
    if key not in _TREES:
        try:
            _TREES[key] = ast.parse(Path(p).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            _TREES[key] = None
    return _TREES[key]


def find_def(path: str, qualname: str):
    """The FunctionDef for ``qualname`` (``f``, ``C.m``, ``f.<locals>.g``) in the file at ``path``."""
    t = tree(path)
    if t is None:
        return None
    parts = [p for p in qualname.split(".") if p != "<locals>"]
    scope: list = t.body
    node = None
    for i, name in enumerate(parts):
        node = None
        for st in _walk_defs(scope):
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and st.name == name:
                node = st
        if node is None:
            return None
        scope = node.body
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _walk_defs(body: list):
    """Statements of a body, looking into if/try blocks (defs under ``if TYPE_CHECKING`` and the like)."""
    for st in body:
        yield st
        if isinstance(st, ast.If):
            yield from _walk_defs(st.body)
            yield from _walk_defs(st.orelse)
        elif isinstance(st, ast.Try):
            yield from _walk_defs(st.body)
            for h in st.handlers:
                yield from _walk_defs(h.body)
            yield from _walk_defs(st.orelse)


# --------------------------------------------------------------------------------------------- parameters
@dataclass
class Param:
    name: str
    kind: str  # posonly | normal | kwonly
    annotation: Optional[ast.expr]
    default: Optional[ast.expr]

    @property
    def has_default(self) -> bool:
        return self.default is not None


@dataclass
class Signature:
    params: list
    vararg: Optional[str] = None
    kwarg: Optional[str] = None
    returns: Optional[ast.expr] = None
    is_method: bool = False

    def names(self) -> list:
        return [p.name for p in self.params]

    def get(self, name: str) -> Optional[Param]:
        return next((p for p in self.params if p.name == name), None)


def signature(fn, drop_self: bool = False) -> Signature:
    a = fn.args
    pos = list(a.posonlyargs) + list(a.args)
    defaults = [None] * (len(pos) - len(a.defaults)) + list(a.defaults)
    params = []
    for i, (arg, d) in enumerate(zip(pos, defaults)):
        params.append(Param(arg.arg, "posonly" if i < len(a.posonlyargs) else "normal", arg.annotation, d))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(Param(arg.arg, "kwonly", arg.annotation, d))
    sig = Signature(params, a.vararg.arg if a.vararg else None, a.kwarg.arg if a.kwarg else None, fn.returns)
    if drop_self and sig.params and sig.params[0].kind != "kwonly":
        sig.params = sig.params[1:]
        sig.is_method = True
    return sig


def is_method_def(path: str, qualname: str, fn) -> bool:
    """A function defined directly in a class body (not a staticmethod)."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return False
    deco = {_dotted(d) for d in fn.decorator_list}
    return not ({"staticmethod", "builtins.staticmethod"} & deco)


@dataclass
class Binding:
    """How one call binds to a signature: param name -> ("pos", index) or ("kw", name), in the call's order."""

    order: list = field(default_factory=list)  # [(param, how)]
    error: str = ""

    def params(self) -> list:
        return [p for p, _ in self.order]


def bind(sig: Signature, n_pos: int, kw_names: list) -> Binding:
    """Bind ``n_pos`` positional arguments and keywords ``kw_names`` to ``sig`` (no *args/**kwargs)."""
    b = Binding()
    positional = [p for p in sig.params if p.kind in ("posonly", "normal")]
    if n_pos > len(positional):
        b.error = f"{n_pos} positional arguments for {len(positional)} parameters"
        return b
    for i in range(n_pos):
        b.order.append((positional[i].name, ("pos", i)))
    taken = {p for p, _ in b.order}
    for k in kw_names:
        p = sig.get(k)
        if p is None or p.kind == "posonly":
            b.error = f"no parameter `{k}`"
            return b
        if k in taken:
            b.error = f"`{k}` given twice"
            return b
        b.order.append((k, ("kw", k)))
        taken.add(k)
    for p in sig.params:
        if p.name not in taken and not p.has_default:
            b.error = f"required parameter `{p.name}` not passed"
            return b
    return b


# ----------------------------------------------------------------------------------------- schema types
TENSOR_NAMES = {"Tensor", "torch.Tensor", "torch.nn.Parameter", "Parameter"}
SCALARS = {"int": "int", "float": "float", "bool": "bool", "str": "str", "torch.dtype": "torch.dtype",
           "torch.device": "torch.device", "SymInt": "int", "torch.SymInt": "int"}


def _dotted(e) -> str:
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        base = _dotted(e.value)
        return f"{base}.{e.attr}" if base else ""
    if isinstance(e, ast.Call):
        return _dotted(e.func)
    return ""


def schema_type(ann) -> Optional[str]:
    """Annotation -> the spelling a generated ``torch.library.custom_op`` uses, or None when it has no schema
    counterpart.  ``Optional[X]``/``X | None``/``Union[X, None]``, ``List``/``Sequence``/``Tuple`` (returns)."""
    if ann is None:
        return None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(ann, ast.Constant) and ann.value is None:
        return "None"
    d = _dotted(ann)
    if d in TENSOR_NAMES or d.endswith(".Tensor"):
        return "torch.Tensor"
    if d in SCALARS:
        return SCALARS[d]
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        left, right = schema_type(ann.left), schema_type(ann.right)
        if right == "None" and left and left != "None":
            return f"Optional[{left}]"
        if left == "None" and right and right != "None":
            return f"Optional[{right}]"
        return None
    if isinstance(ann, ast.Subscript):
        head = _dotted(ann.value).rsplit(".", 1)[-1]
        args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        inner = [schema_type(x) for x in args]
        if head == "Optional" and len(inner) == 1 and inner[0] and inner[0] != "None":
            return f"Optional[{inner[0]}]"
        if head == "Union" and len(inner) == 2 and "None" in inner:
            other = inner[0] if inner[1] == "None" else inner[1]
            return f"Optional[{other}]" if other and other != "None" else None
        if head in ("List", "list", "Sequence") and len(inner) == 1 and inner[0] in (
                "torch.Tensor", "int", "float", "bool", "Optional[torch.Tensor]"):
            return f"list[{inner[0]}]"
        if head in ("Tuple", "tuple"):
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return f"list[{inner[0]}]" if inner[0] == "torch.Tensor" else None
            if all(x == "torch.Tensor" for x in inner) and inner:
                return "tuple[" + ", ".join(inner) + "]"
        return None
    return None


def needs_optional(types) -> bool:
    return any("Optional[" in t for t in types if t)


def is_tensor_type(t: Optional[str]) -> bool:
    return bool(t) and "torch.Tensor" in t


# -------------------------------------------------------------------------------------- op registration
@dataclass
class OpDecl:
    """An op-registration decorator on a function: ``torch.library.custom_op("ns::name", mutates_args=...)``
    (a real op), or a library helper spelled the same way (flashinfer's ``register_custom_op``, an identity in
    the releases we read: its ``mutates_args`` is still the author's statement of what the kernel writes)."""

    name: str  # "ns::name"
    real: bool  # torch.library.custom_op itself
    mutates: Optional[tuple]  # declared mutated parameter names (None: not declared)


_REAL_OP = {"torch.library.custom_op", "library.custom_op", "custom_op", "torch._library.custom_ops.custom_op"}


def op_decls(fn, module_tree: Optional[ast.Module] = None) -> list:
    out = []
    imported_custom_op = False
    if module_tree is not None:
        for st in module_tree.body:
            if isinstance(st, ast.ImportFrom) and st.module in ("torch.library", "torch._library.custom_ops"):
                imported_custom_op |= any(a.name == "custom_op" and (a.asname in (None, "custom_op"))
                                          for a in st.names)
    for d in fn.decorator_list:
        if not isinstance(d, ast.Call) or not d.args:
            continue
        name = d.args[0]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and "::" in name.value):
            continue
        callee = _dotted(d.func)
        real = callee in ("torch.library.custom_op", "torch._library.custom_ops.custom_op") or (
            callee == "custom_op" and imported_custom_op)
        mutates = None
        for kw in d.keywords:
            if kw.arg == "mutates_args":
                mutates = _literal_names(kw.value)
        out.append(OpDecl(name.value, real, mutates))
    return out


def _literal_names(e) -> Optional[tuple]:
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return tuple(x for x in [e.value] if x)
    if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
        vals = []
        for x in e.elts:
            if not (isinstance(x, ast.Constant) and isinstance(x.value, str)):
                return None
            if x.value:
                vals.append(x.value)
        return tuple(vals)
    return None


def literal_source(e) -> Optional[str]:
    """Source of a default that can be copied verbatim (a literal), else None."""
    if e is None:
        return None
    try:
        ast.literal_eval(e)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    return ast.unparse(e)


def docstring_free_body(fn) -> list:
    body = list(fn.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
            body[0].value.value, str):
        body = body[1:]
    return body
