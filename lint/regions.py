"""Regions: the entry points Dynamo traces, each with its ``fullgraph`` setting.

Found in the scanned files only: ``@torch.compile`` / ``@torch.compile(...)``, ``torch.compile(f)``,
``torch.compile(**kw)(f)``, ``torch.compile(module)`` and ``module.compile()`` (-> the class's ``forward``),
``torch.compile(obj.method)``, ``torch.compile(torch.no_grad()(model.forward))``, ``torch._dynamo.optimize``,
framework wrappers (``FRAMEWORK_MODELS``, data) and user entry points (``module:qualname``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .dynamo import model
from .parallel import IMPORT_RE
from .program import IDENT_RE, Program, Scope, dotted, split_id
from .values import Class, Const, External, Func, Instance, Partial, ordered

# `name = other.name` (an alias), possibly annotated, alone on its line
_ALIAS_RE = re.compile(rb"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[^=\n]*)?=[ \t]*[A-Za-z_][\w.]*[ \t]*(?:#.*)?$",
                       re.M)


@dataclass(frozen=True)
class FrameworkModel:
    """A framework function that compiles one of its arguments.

    ``target``: which argument is compiled (index or keyword); ``what``: "callable" (the argument itself),
    "forward" (``type(arg).forward``), or "subclass-method:<name>" (the named method of every subclass of the
    class that defines the decorated/called method).
    """

    callee: str  # dotted name of the framework function / decorator
    target: tuple = (0, "module")
    what: str = "forward"
    fullgraph_keyword: Optional[str] = "fullgraph"
    fullgraph_default: Optional[bool] = None
    predicates: tuple = ()  # ((dotted or "*.name", bool), ...) true inside the region
    kind: str = "call"  # "call" | "decorator"
    # When the compiled argument's type is not static (a model loaded by name at run time), the framework's
    # model registry says what it can be: classes bound to `registry[1]` in modules under `registry[0]`,
    # and the attribute paths from such a class to the module that gets compiled.
    registry: tuple = ()
    registry_paths: tuple = ()


FRAMEWORK_MODELS: tuple = (
    # SGLang piecewise CUDA graphs: compiles type(module).forward (fullgraph defaults to True there).
    FrameworkModel("sglang.srt.compilation.compile.install_torch_compiled", (0, "module"), "forward", "fullgraph",
                   True, (("*.is_in_piecewise_cuda_graph", True),),
                   registry=("sglang.srt.models", "EntryClass"),
                   registry_paths=(("model",), ("language_model", "model"))),
    FrameworkModel("sglang.srt.model_executor.cuda_graph_runner.patch_model", (0, "model"), "forward", None, False),
    FrameworkModel("sglang.srt.compilation.compile.compile_in_capture_mode", (0, "fn"), "callable", None, None,
                   kind="decorator"),
    # vLLM: @support_torch_compile on a model class compiles its forward with fullgraph.
    FrameworkModel("vllm.compilation.decorators.support_torch_compile", (0, "cls"), "class-forward", None, True,
                   kind="decorator"),
)


@dataclass
class Region:
    path: str  # file holding the compile call / decorator
    line: int
    qualname: str  # the compiled function's qualname (for reports)
    kind: str  # "torch.compile", "decorator", "module.compile", framework callee, "entry-point", "public-api"
    fullgraph: Optional[bool]
    entries: list = field(default_factory=list)  # [(func id, self class id or None)]
    predicates: dict = field(default_factory=dict)
    # parameters every call binds to a constant, as a walk node's constants: a partial's arguments
    bound: tuple = ()

    @property
    def label(self) -> str:
        fg = {True: "fullgraph=True", False: "fullgraph=False", None: "fullgraph=?"}[self.fullgraph]
        return f"{self.kind}({self.qualname}, {fg})"


@dataclass(frozen=True)
class UnresolvedRegion:
    """A compile call whose target the resolver could not name: nothing of it was analysed.  What the
    expression was and where it was evaluated, so that lint/coverage.py can say why (a library that is not
    on the search path, a parameter, a value made at run time)."""

    path: str
    line: int
    kind: str  # the compile function or framework wrapper (torch.compile, install_torch_compiled...)
    expr: tuple  # the compiled expression (summary Expr), or () when unknown
    module: str  # where it was evaluated
    function: Optional[str] = None  # enclosing function's qualname (None: module level)
    registry: str = ""  # a framework model registry that named no model (its package)

    @property
    def text(self) -> str:
        return _expr_text(self.expr) if self.expr else "?"


class RegionFinder:
    def __init__(self, program: Program, framework_models: tuple = FRAMEWORK_MODELS, models: tuple = (),
                 candidates: Optional[frozenset] = None):
        self.p = program
        # The modules whose file spells a marker word (engine.scan's byte-level pre-filter), or None: any.
        # Only there can a module-level name be bound to a compile function (see _marker_name).
        self.candidates = candidates
        self.models = {m.callee: m for m in framework_models}
        self.model_filter = tuple(models)  # --model: restrict registry fallbacks to these classes
        self.unresolved: list = []  # UnresolvedRegion
        self._registry_memo: dict = {}
        # A call site can make a region only if its callee's spelling, or the definition of the name it calls,
        # says so (`torch.compile`, `c = torch.compile; c(f)`, `from .x import install_torch_compiled`): the
        # other ~95% of call sites in a region-candidate file are never evaluated (see `_may_make_region`).
        self.marker_words = tuple(sorted({"compile", "optimize", "_dynamo"} | {
            m.callee.rsplit(".", 1)[-1] for m in framework_models}))
        self._marker_name_memo: dict = {}
        self._rebound: dict = {}  # module -> names its import statements or aliases bind: _may_rebind

    # -------------------------------------------------------------------- helpers
    def _fullgraph(self, kwargs, keyword: Optional[str], default: Optional[bool], scope: Scope) -> Optional[bool]:
        if keyword is None:
            return default
        for k, v in kwargs:
            if k == keyword:
                vals = self.p.eval(v, scope)
                if len(vals) == 1 and isinstance(next(iter(vals)), Const):
                    return bool(next(iter(vals)).value)
                # `fullgraph=fullgraph` forwarded from a wrapper's parameter: its default is what callers get
                f = scope.func
                if v[0] == "name" and f is not None and v[1] in f.defaults:
                    d = self.p.eval(f.defaults[v[1]], Scope(scope.module))
                    if len(d) == 1 and isinstance(next(iter(d)), Const):
                        return bool(next(iter(d)).value)
                return None
            if k is None:
                return None if default is not True else default  # **kwargs may carry it
        return default

    def _entries(self, values, what: str = "callable") -> list:
        out = []
        for v in ordered(values):
            if isinstance(v, Partial):
                out += self._entries(v.target, what)
            elif isinstance(v, Func):
                if "op" in v.flags:
                    continue
                self_cls = v.self_cls
                if self_cls is None:
                    f = self.p.function(v.id)
                    if f is not None and f.class_name:
                        self_cls = f"{split_id(v.id)[0]}:{f.class_name}"
                out.append((v.id, self_cls))
            elif isinstance(v, Instance):
                for fn in ordered(self.p.callable_members(v) if what != "forward" else self.p.member(v.cls, "forward", v)):
                    if isinstance(fn, Func):
                        out.append((fn.id, v.cls))
            elif isinstance(v, Class) and what in ("forward", "class-forward"):
                for fn in ordered(self.p.member(v.id, "forward", Instance(v.id))):
                    if isinstance(fn, Func):
                        out.append((fn.id, v.id))
        seen = []
        for e in out:
            if e not in seen:
                seen.append(e)
        return seen

    def _name(self, entries, fallback: str) -> str:
        if not entries:
            return fallback
        fid, self_cls = entries[0]
        return split_id(fid)[1]

    @staticmethod
    def _callee_name(v) -> Optional[str]:
        if isinstance(v, External):
            return model.normalize(v.name)
        if isinstance(v, Func):
            return dotted(v.id)
        return None

    # ----------------------------------------------------------------------- scan
    def find(self, module_name: str) -> list:
        m = self.p.module(module_name)
        if m is None or m.error:
            return []
        regions = []
        for qual, f in m.functions.items():
            fid = f"{module_name}:{qual}"
            scope = Scope(module_name, f if qual != "<module>" else None, fid if qual != "<module>" else None)
            dscope = Scope(module_name)
            if f.parent:
                pid = f"{module_name}:{f.parent}"
                dscope = Scope(module_name, self.p.function(pid), pid)
            for d in f.decorators:
                if self._may_make_region(d[1] if d[0] == "call" else d, module_name, dscope.func):
                    regions += self._from_decorator(d, f, fid, m.path, dscope)
            for site in f.calls:
                if self._may_make_region(site.func, module_name, f):
                    regions += self._from_call(site, m.path, scope)
        for qual, c in m.classes.items():
            for d in c.decorators:
                if self._may_make_region(d[1] if d[0] == "call" else d, module_name, None):
                    regions += self._from_class_decorator(d, c, f"{module_name}:{qual}", m.path,
                                                          Scope(module_name))
        return regions

    # ------------------------------------------------------------- call-site pre-filter
    def _may_make_region(self, func, module_name: str, f) -> bool:
        """Could evaluating this callee (or decorator) give a compile function or a framework wrapper?

        Syntactic and conservative: the callee expression mentions a marker word, or calls a name whose local
        or module-level definition does (followed through imports of region-candidate modules).  Evaluating
        every call site of every candidate file took 90 of 110 s on a whole site-packages; decorators
        (``@property``, ``@dataclass``, ``@triton.jit``...) are filtered the same way.
        """
        if _mentions(func, self.marker_words):
            return True
        head = func
        while head[0] in ("attr", "call", "sub"):
            head = head[1]
        if head[0] != "name":
            return False
        name = head[1]
        for expr in (f.locals.get(name, ()) if f is not None else ()):
            if _mentions(expr, self.marker_words) or (
                    expr[0] == "name" and expr[1] != name and self._marker_name(module_name, expr[1])):
                return True
        return self._marker_name(module_name, name)

    def _marker_name(self, module_name: str, name: str) -> bool:
        """Is this module-level name bound to something that mentions a marker word (aliases followed)?"""
        key = (module_name, name)
        if key in self._marker_name_memo:
            return self._marker_name_memo[key]
        if self.candidates is not None and module_name not in self.candidates and not self._may_rebind(
                module_name, name):
            # A file that spells no marker word binds a name to a compile function only by importing or
            # aliasing one: `from .utils import f` is followed into such a utils only if its text says so.
            # (Loading every module a candidate calls into, to look at one name, loaded 1,400 modules of a
            # site-packages for nothing.)
            self._marker_name_memo[key] = False
            return False
        self._marker_name_memo[key] = False  # cycles: `a = b; b = a`
        m = self.p.module(module_name)
        found = False
        for b in (m.bindings.get(name, ()) if m is not None else ()):
            if b.kind == "import":
                src, attr = b.value[0], b.value[1]
                if _mentions(b.value, self.marker_words):
                    found = True
                elif attr is not None and src:
                    found = self._marker_name(src, attr)  # `from .utils import my_compile`
            elif b.kind == "assign":
                found = _mentions(b.value, self.marker_words) or (
                    b.value[0] == "name" and self._marker_name(module_name, b.value[1]))
            if found:
                break
        self._marker_name_memo[key] = found
        return found

    def _may_rebind(self, module_name: str, name: str) -> bool:
        """Does the module's text import ``name`` or bind it to another name (``name = other``)?  Read, not
        parsed; the words of a module's import statements and its aliases are kept, not its text."""
        names = self._rebound.get(module_name)
        if names is None:
            loc = self.p.locator.find(module_name)
            data = b""
            if loc is not None and loc[0] is not None:
                try:
                    with open(loc[0], "rb") as fh:
                        data = fh.read()
                except OSError:
                    pass
            names = {w for m in IMPORT_RE.finditer(data) for w in IDENT_RE.findall(m.group())}
            names.update(_ALIAS_RE.findall(data))
            self._rebound[module_name] = names
        return name.encode() in names

    def _from_decorator(self, d, f, fid: str, path: str, scope: Scope) -> list:
        head = d[1] if d[0] == "call" else d
        kwargs = d[3] if d[0] == "call" else ()
        out = []
        for v in ordered(self.p.eval(head, scope)):
            name = self._callee_name(v)
            if name in model.COMPILE_FUNCTIONS:
                kw = model.FULLGRAPH_KEYWORDS.get(name)
                fg = self._fullgraph(kwargs, kw, False, scope)
                self_cls = f"{split_id(fid)[0]}:{f.class_name}" if f.class_name else None
                out.append(Region(path, f.line, f.qualname, "@" + name, fg, [(fid, self_cls)]))
            elif name in self.models and self.models[name].kind == "decorator":
                fm = self.models[name]
                fg = self._fullgraph(kwargs, fm.fullgraph_keyword, fm.fullgraph_default, scope)
                self_cls = f"{split_id(fid)[0]}:{f.class_name}" if f.class_name else None
                out.append(Region(path, f.line, f.qualname, "@" + name.rsplit(".", 1)[-1], fg, [(fid, self_cls)],
                                  dict(fm.predicates)))
        return out

    def _from_class_decorator(self, d, c, cid: str, path: str, scope: Scope) -> list:
        head = d[1] if d[0] == "call" else d
        kwargs = d[3] if d[0] == "call" else ()
        out = []
        for v in ordered(self.p.eval(head, scope)):
            name = self._callee_name(v)
            fm = self.models.get(name)
            if fm is not None and fm.kind == "decorator" and fm.what == "class-forward":
                fg = self._fullgraph(kwargs, fm.fullgraph_keyword, fm.fullgraph_default, scope)
                entries = self._entries([Class(cid)], "class-forward")
                out.append(Region(path, c.line, f"{c.qualname}.forward", "@" + name.rsplit(".", 1)[-1], fg, entries,
                                  dict(fm.predicates)))
        return out

    def _from_call(self, site, path: str, scope: Scope) -> list:
        out = []
        func = site.func
        # torch.compile(**kw)(f): the inner call carries the options, the outer the target
        if func[0] == "call" and not func[2]:
            for v in ordered(self.p.eval(func[1], scope)):
                name = self._callee_name(v)
                if name in model.COMPILE_FUNCTIONS and site.args:
                    fg = self._fullgraph(func[3], model.FULLGRAPH_KEYWORDS.get(name), False, scope)
                    out.append(self._region(site, path, scope, site.args[0], fg, name))
            if out:
                return out
        if func[0] == "attr" and func[2] == "compile":
            for v in ordered(self.p.eval(func[1], scope)):
                if isinstance(v, Instance) and self.p.is_nn_module(v.cls):
                    fg = self._fullgraph(site.kwargs, "fullgraph", False, scope)
                    entries = self._entries([v], "forward")
                    out.append(Region(path, site.line, self._name(entries, "?"), "module.compile", fg, entries))
            if out:
                return out
        for v in ordered(self.p.eval(func, scope)):
            name = self._callee_name(v)
            if name in model.COMPILE_FUNCTIONS:
                if not site.args:
                    continue  # a decorator factory; the outer call (or the decorator) is the region
                fg = self._fullgraph(site.kwargs, model.FULLGRAPH_KEYWORDS.get(name), False, scope)
                out.append(self._region(site, path, scope, site.args[0], fg, name))
            elif name in self.models and self.models[name].kind == "call":
                fm = self.models[name]
                idx, kw = fm.target
                arg = site.args[idx] if idx < len(site.args) else next((x for k, x in site.kwargs if k == kw), None)
                if arg is None:
                    continue
                fg = self._fullgraph(site.kwargs, fm.fullgraph_keyword, fm.fullgraph_default, scope)
                r = self._region(site, path, scope, arg, fg, name.rsplit(".", 1)[-1], fm.what,
                                 quiet=bool(fm.registry))
                r.predicates = dict(fm.predicates)
                if r.entries or not fm.registry:
                    out.append(r)
                else:
                    out += self._registry_regions(fm, site, path, fg, name.rsplit(".", 1)[-1])
        return out

    def _registry_classes(self, prefix: str, binding: str) -> list:
        key = (prefix, binding)
        if key in self._registry_memo:
            return self._registry_memo[key]
        out = []
        for mname, fpath, _ in self.p.files_mentioning(prefix.split(".")[0], binding.encode()):
            if not (mname == prefix or mname.startswith(prefix + ".")):
                continue
            m = self.p.module(mname)
            if m is None or binding not in m.bindings:
                continue
            for v in ordered(self.p.resolve_global(mname, binding)):
                items = v.elems if hasattr(v, "elems") else [v]
                for c in ordered(items):
                    if isinstance(c, Class) and c.id not in out:
                        out.append(c.id)
        self._registry_memo[key] = out
        return out

    def _wanted(self, cid: str) -> bool:
        if not self.model_filter:
            return True
        name = dotted(cid)
        return any(name == m or name.endswith("." + m) or m == split_id(cid)[1] for m in self.model_filter)

    def _registry_regions(self, fm: FrameworkModel, site, path: str, fg, kind: str) -> list:
        """One region per registered model class whose compiled submodule resolves (deduplicated)."""
        out, seen = [], {}
        for cid in self._registry_classes(*fm.registry):
            if not self._wanted(cid):
                continue
            for attr_path in fm.registry_paths:
                vals = frozenset({Instance(cid)})
                for a in attr_path:
                    vals = frozenset(x for v in vals for x in self.p.attr(v, a))
                entries = self._entries(vals, fm.what)
                if not entries:
                    continue
                key = tuple(entries)
                if key in seen:
                    continue
                r = Region(path, site.line, self._name(entries, "?"), f"{kind}[{split_id(cid)[1]}]", fg, entries,
                           dict(fm.predicates))
                seen[key] = r
                out.append(r)
        if not out:
            arg = site.args[fm.target[0]] if fm.target[0] < len(site.args) else next(
                (x for k, x in site.kwargs if k == fm.target[1]), ())
            self.unresolved.append(UnresolvedRegion(path, site.line, kind, arg, "", None, fm.registry[0]))
        return out

    def _region(self, site, path, scope, target_expr, fg, kind, what="callable", quiet=False) -> Region:
        values = self._unwrap(self.p.eval(target_expr, scope), scope)
        entries = self._entries(values, what)
        if not entries and target_expr[0] == "name" and scope.func is not None and \
                target_expr[1] in scope.func.params + scope.func.kwonly:
            entries = self._entries(self._passed_by_callers(scope, target_expr[1]), what)
        if not entries and not quiet:
            self.unresolved.append(UnresolvedRegion(path, site.line, kind, target_expr, scope.module,
                                                    scope.func.qualname if scope.func is not None else None))
        return Region(path, site.line, self._name(entries, _expr_text(target_expr)), kind, fg, entries)

    def _passed_by_callers(self, scope: Scope, param: str) -> frozenset:
        """What the calls of the compiling function pass as the compiled parameter: ``def _compiled(self, fn):
        return torch.compile(fn)`` called as ``self._compiled(self.run)`` compiles ``run``.  The callers are
        looked for in the files that mention the function's name (the scanned ones and its own package)."""
        f, fid = scope.func, scope.func_id
        out: set = set()
        seen_modules = set()
        for mod, _, _ in self.p.files_mentioning(scope.module.split(".")[0], f.name.encode(), outside_too=True):
            if mod in seen_modules:
                continue
            seen_modules.add(mod)
            m = self.p.module(mod)
            if m is None or m.error:
                continue
            for qual, cf in m.functions.items():
                top = qual == "<module>"
                cfid = f"{mod}:{qual}"
                cscope = Scope(mod, None if top else cf, None if top else cfid,
                               f"{mod}:{cf.class_name}" if cf.class_name and not top else None)
                for site in cf.calls:
                    callee = site.func
                    if not (callee[0] == "name" and callee[1] == f.name or callee[0] == "attr" and callee[2] == f.name):
                        continue
                    for v in self.p.eval(callee, cscope):
                        if isinstance(v, Func) and v.id == fid:
                            out |= self.p.bind_args(f, v, site.args, site.kwargs, cscope).get(param, frozenset())
        return frozenset(out)

    def _unwrap(self, values, scope):
        """torch.no_grad()(fn) and friends evaluate to fn already (see Program._call_external)."""
        return values

    def entry_point(self, spec: str, fullgraph: Optional[bool] = True) -> Optional[Region]:
        """``package.module:Class.method`` or ``package.module:function`` from the config / ``--entry``."""
        mod, _, qual = spec.partition(":")
        m = self.p.module(mod)
        if m is None or not qual:
            return None
        if qual in m.functions:
            f = m.functions[qual]
            self_cls = f"{mod}:{f.class_name}" if f.class_name else None
            return Region(m.path, f.line, qual, "entry-point", fullgraph, [(f"{mod}:{qual}", self_cls)])
        if qual in m.classes:
            entries = self._entries([Class(f"{mod}:{qual}")], "forward")
            return Region(m.path, m.classes[qual].line, f"{qual}.forward", "entry-point", fullgraph, entries)
        return None


def _expr_text(e) -> str:
    if e[0] == "name":
        return e[1]
    if e[0] == "attr":
        return f"{_expr_text(e[1])}.{e[2]}"
    if e[0] == "call":
        return f"{_expr_text(e[1])}(...)"
    return "<expr>"


def _mentions(expr, words: tuple) -> bool:
    """Does any identifier or constant in the expression contain one of the words?  (Searched in the
    expression's repr, built in C: walking the tuples in Python was 12 s of a whole site-packages scan.  The
    tags of the Expr language hold no marker word, so only names and constants can match.)"""
    text = repr(expr)
    return any(w in text for w in words)
