"""Program: the cross-module view, built lazily from summaries.

- ``ModuleLocator`` maps a dotted module name to a file: first the scanned files, then the search path (the
  target interpreter's ``sys.path`` plus ``--search-path``).  The standard library and the packages Dynamo
  classifies by itself (torch, triton...) stay external: they are referred to by dotted name.
- ``Program`` answers "what may this expression refer to?" (``eval``), "what does calling it return?"
  (``call``) and "what is ``value.attr``?" (``attr``) over the small expression language of ``summary.py``.
  Everything is memoised; recursion is cut, never followed forever.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..dynamo import model
from ..summary import FunctionSummary
from ..values import (
    EMPTY,
    UNKNOWN,
    Class,
    Const,
    DictVal,
    External,
    ExternalInstance,
    Foreign,
    Func,
    Instance,
    Namespace,
    Op,
    Partial,
    SeqVal,
    Super,
    TupleVal,
    Unknown,
)
from .locator import BUILTIN_NAMES, _CLASS_BASES_RE, dotted, IDENT_RE, _MentionIndex, ModuleLocator, split_id, STDLIB  # noqa: F401
from .scope import _fixed, _freeze, MAX_CALL_DEPTH, Scope, _SCOPE_KEYS, Stats  # noqa: F401
from .resolve import _dotted_expr, _NOT_LOADED, ResolverMixin  # noqa: F401
from .evaluate import EvaluatorMixin, _IN_PROGRESS, _INTERNABLE, _MISS  # noqa: F401


# A function's return value is worked out per distinct argument context; past this many contexts, arguments
# that carry nothing precise are left out of the context (Program._widened).
MAX_CALL_CONTEXTS = 8


_CONTAINER_FACTORIES = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "builtins.list", "builtins.tuple",
                                  "torch.nn.ModuleDict", "builtins.dict", "builtins.set", "builtins.frozenset"})


def _foreign_origins() -> frozenset:
    from compile_lint.rules.jit import FOREIGN_ORIGINS

    return frozenset(FOREIGN_ORIGINS)


# Bases that add no behaviour worth naming: a member missing from the indexed classes is unknown, not theirs.
_TRIVIAL_BASES = frozenset({"builtins.object", "object", "abc.ABC", "typing.Generic", "typing.Protocol",
                            "typing_extensions.Protocol", "enum.Enum", "builtins.Exception", "typing.NamedTuple",
                            "abc.ABCMeta"})


class Program(ResolverMixin, EvaluatorMixin):
    def __init__(self, locator: ModuleLocator, load_summary: Callable, arch=None, scanned_modules=()):
        self.locator = locator
        self._load_summary = load_summary  # (name, path, is_package) -> ModuleSummary
        self.modules: dict = {}
        self._function_of: dict = {}  # fid -> FunctionSummary or None (function)
        self._class_of: dict = {}  # cid -> ClassSummary or None (klass)
        self.stats = Stats()
        self.scanned_modules = frozenset(scanned_modules)
        self.arch = arch  # optional ArchFacts (--target-arch): folds device queries into constants
        self.foreign_origins = _foreign_origins()
        self._global_memo: dict = {}
        self._eval_memo: dict = {}
        self._call_memo: dict = {}
        self._call_contexts: dict = {}  # Func -> distinct argument bindings its return value was worked out for
        self._func_value_memo: dict = {}
        self._mro_memo: dict = {}
        self._active: set = set()
        self._subclass_memo: dict = {}
        self._value_sets: dict = {}  # interned value sets (_interned)
        self._reads_memo: dict = {}  # id(function) -> id(expr) -> (expr, names it may read): _narrowed
        _SCOPE_KEYS.clear()  # interned scope keys (Scope.key) are per program: a finished scan's go with it
        self._mention_index: dict = {}  # None (the scanned files) or a package -> _MentionIndex
        self.env_set: set = set()
        self.env_removed: set = set()

    # ------------------------------------------------------------ hierarchy
    def subclasses(self, cid: str, limit: int = 300) -> list:
        """Indexed subclasses of a class, transitively.  Only files that mention a class's name are parsed,
        and only within the same top-level package (or the scanned code)."""
        if cid in self._subclass_memo:
            return self._subclass_memo[cid]
        self._subclass_memo[cid] = []
        top = split_id(cid)[0].split(".")[0]
        found: list = []
        frontier = [cid]
        seen = {cid}
        while frontier and len(found) < limit:
            cur = frontier.pop(0)
            needle = split_id(cur)[1].rsplit(".", 1)[-1].encode()
            for mname, path, _ in self.files_mentioning(top, needle, outside_too=bool(self.scanned_modules),
                                                        in_bases=True):
                m = self.module(mname)
                if m is None:
                    continue
                for q, c in m.classes.items():
                    sub = f"{mname}:{q}"
                    if sub in seen or not any(needle.decode() in repr(b) for b in c.bases):
                        continue
                    if cur in self.mro(sub):
                        seen.add(sub)
                        found.append(sub)
                        frontier.append(sub)
        self._subclass_memo[cid] = found
        return found

    def files_mentioning(self, top: str, needle: bytes, outside_too: bool = False, in_bases: bool = False) -> list:
        """The .py files of package ``top`` (scanned or on the search path; ``outside_too``: and every other
        scanned file) whose text mentions the identifier ``needle`` (``in_bases``: in a class's base list), as
        (module, path, is_package).

        Answered from inverted indexes (identifier -> files) built on first use: one over the scanned files,
        one per package found on the search path.  Asking for a few hundred class names over 10,000 files is
        then a dict lookup each, not a pass over every file (that pass was 30 s of a site-packages scan)."""
        scanned = self._mention_index.get(None)
        if scanned is None:
            scanned = self._mention_index[None] = _MentionIndex(
                [(m, p, pkg) for m, (p, pkg) in self.locator.scanned.items()])
        unscanned = self._mention_index.get(top)
        if unscanned is None:
            paths = {str(p) for _, (p, _) in self.locator.scanned.items()}
            unscanned = self._mention_index[top] = _MentionIndex(
                [e for e in self.locator.package_files(top) if str(e[1]) not in paths])
        hits = scanned.files_with(needle, in_bases)
        in_top = [e[0] == top or e[0].startswith(top + ".") for e in hits]
        out = [e for e, t in zip(hits, in_top) if t] + unscanned.files_with(needle, in_bases)
        if outside_too:
            out += [e for e, t in zip(hits, in_top) if not t]
        return out

    def mro(self, cid: str) -> list:
        """Linearised bases: class ids of indexed classes and ``External`` names of outside ones."""
        if cid in self._mro_memo:
            return self._mro_memo[cid]
        self._mro_memo[cid] = [cid]  # cut cycles
        out = [cid]
        c = self.klass(cid)
        if c is not None:
            mod = split_id(cid)[0]
            for b in c.bases:
                for bv in _fixed(self.eval(b, Scope(mod))):
                    if isinstance(bv, Class):
                        for x in self.mro(bv.id):
                            if x not in out:
                                out.append(x)
                    elif isinstance(bv, External):
                        n = model.normalize(bv.name)
                        if n not in out:
                            out.append(n)
        self._mro_memo[cid] = out
        return out

    def is_nn_module(self, cid: str) -> bool:
        return any(model.is_nn_module_base(x) for x in self.mro(cid) if ":" not in x)

    def member(self, cid: str, name: str, inst: Optional[Instance]) -> frozenset:
        res = self._member_in(self.mro(cid), name, inst)
        if inst is not None and self._abstract(res) and (res or self._is_abstract_class(cid)):
            # an abstract method or an attribute only subclasses define: dispatch to every implementation
            key = ("dispatch", cid, name)
            if key in self._active:
                return res
            self._active.add(key)
            try:
                impl = set()
                for sub in self.subclasses(cid):
                    for v in self._member_in(self.mro(sub), name, Instance(sub)):
                        if not isinstance(v, Unknown) and not self._abstract(frozenset({v})):
                            impl.add(v)
            finally:
                self._active.discard(key)
            if impl:
                return frozenset(impl)
        return res

    def _is_abstract_class(self, cid: str) -> bool:
        """An ABC / Protocol, or a class with an abstract method: its instances are really subclasses'."""
        mro = self.mro(cid)
        if any(x in ("abc.ABC", "typing.Protocol", "typing_extensions.Protocol") for x in mro):
            return True
        c = self.klass(cid)
        return c is not None and any(
            (fn := self.function(f"{split_id(cid)[0]}:{q}")) is not None and fn.is_stub for q in c.methods.values())

    def _abstract(self, res: frozenset) -> bool:
        if not res:
            return True
        for v in _fixed(res):
            if isinstance(v, Unknown):
                continue
            if isinstance(v, Func):
                f = self.function(v.id)
                if "abstract" in v.flags or (f is not None and f.is_stub):
                    continue
            return False
        return True

    def _member_in(self, mro: list, name: str, inst: Optional[Instance]) -> frozenset:
        first = None
        for cid in mro:
            if ":" not in cid:
                continue
            c = self.klass(cid)
            if c is None:
                continue
            if name in c.methods:
                first = ("method", cid, c.methods[name])
                break
            if name in c.class_attrs:
                first = ("classattr", cid, c.class_attrs[name])
                break
        if first and first[0] == "method":
            mod = split_id(first[1])[0]
            fv = self.function_value(f"{mod}:{first[2]}", Scope(mod))
            if isinstance(fv, Op):  # a method registered as a custom op: opaque
                return frozenset({fv})
            if "property" in fv.flags or "cached_property" in fv.flags:
                if inst is None:
                    return frozenset({fv})
                bound = Func(fv.id, inst.cls, fv.flags, fv.wrappers)
                return self.call(bound, (), (), Scope(mod))
        if inst is not None:
            vals = set()
            for cid in mro:
                if ":" not in cid:
                    continue
                c = self.klass(cid)
                if c is None or name not in c.self_attrs:
                    continue
                mod = split_id(cid)[0]
                for expr, method_qual in c.self_attrs[name]:
                    mid = f"{mod}:{method_qual}"
                    vals |= self.eval(expr, Scope(mod, self.function(mid), mid, inst.cls))
            if vals:
                return frozenset(vals)
        if first is None:
            ext = [x for x in mro if ":" not in x and x not in _TRIVIAL_BASES]
            if ext:
                return frozenset({External(model.normalize(f"{ext[0]}.{name}"))})
            return frozenset({Unknown(f"no attribute {name}")})
        kind, cid, payload = first
        mod = split_id(cid)[0]
        if kind == "method":
            fv = self.function_value(f"{mod}:{payload}", Scope(mod))
            if isinstance(fv, Op):
                return frozenset({fv})
            if inst is not None and "staticmethod" not in fv.flags:
                return frozenset({Func(fv.id, inst.cls, fv.flags, fv.wrappers)})
            if "classmethod" in fv.flags:
                return frozenset({Func(fv.id, (inst.cls if inst else cid), fv.flags, fv.wrappers)})
            return frozenset({fv})
        return frozenset().union(*(self.eval(x, Scope(mod)) for x in payload))

    # ------------------------------------------------------------ functions
    def function_value(self, fid: str, scope: Scope) -> Func:
        """The value a ``def`` binds: the function with its decorators applied (cache, disable, op...)."""
        if fid in self._func_value_memo:
            return self._func_value_memo[fid]
        base = Func(fid)
        self._func_value_memo[fid] = base  # cut recursion through self-referencing decorators
        f = self.function(fid)
        result = base
        if f is not None and f.decorators:
            mod = split_id(fid)[0]
            dscope = Scope(mod)
            if f.parent:
                pid = f"{mod}:{f.parent}"
                dscope = Scope(mod, self.function(pid), pid)
            cur = frozenset({base})
            for d in reversed(f.decorators):
                cur = self.apply_decorator(self.eval(d, dscope), cur, dscope)
            funcs = [v for v in cur if isinstance(v, (Func, Op))]
            result = funcs[0] if len(funcs) == 1 else base if not funcs else sorted(funcs, key=repr)[0]
        self._func_value_memo[fid] = result
        return result

    def apply_decorator(self, decorators: frozenset, targets: frozenset, scope: Scope) -> frozenset:
        out = set()
        for d in decorators:
            for t in targets:
                out |= self._apply_one(d, t, scope)
        return frozenset(out) if out else targets

    def _apply_one(self, d, t, scope: Scope) -> frozenset:
        if isinstance(t, Op):
            return frozenset({t})
        if isinstance(d, External) or isinstance(d, Func) and self._decorator_table_name(d):
            name = model.normalize(d.name) if isinstance(d, External) else self._decorator_table_name(d)
            return self._apply_named(name, t)
        if isinstance(t, Partial) or not isinstance(t, Func):
            return frozenset({t})
        if isinstance(d, Func):
            res = self.call(d, (("__value__", frozenset({t})),), (), scope)
            if not res:
                return frozenset({t})
            out = set()
            for r in _fixed(res):
                if isinstance(r, Func) and r.id == t.id:
                    out.add(Func(t.id, t.self_cls, t.flags | r.flags, t.wrappers + r.wrappers))
                elif isinstance(r, Op):
                    out.add(r)
                elif isinstance(r, Func):
                    # a wrapper (functools.wraps style): calling it runs the wrapper and the original
                    out.add(Func(t.id, t.self_cls, t.flags | r.flags, t.wrappers + (r.id,)))
                else:
                    out.add(t)
            return frozenset(out)
        if isinstance(d, Class):
            return frozenset({t})
        return frozenset({t})

    def _decorator_table_name(self, d: Func) -> Optional[str]:
        name = dotted(d.id)
        if name in model.OP_REGISTRATION_DECORATORS or name in model.DISABLE_DECORATORS:
            return name
        return None

    def _apply_named(self, name: str, t) -> frozenset:
        if not isinstance(t, Func):
            if name in model.OP_DECORATORS or name in model.OP_REGISTRATION_DECORATORS:
                return frozenset({Op(name)})
            return frozenset({t})
        if name in model.CACHE_DECORATORS:
            return frozenset({t.with_flags("cached")})
        if name in model.CACHED_PROPERTY:
            return frozenset({t.with_flags("cached_property")})
        if name in model.PROPERTY:
            return frozenset({t.with_flags("property")})
        if name in model.DISABLE_DECORATORS:
            return frozenset({t.with_flags("disabled")})
        if name in model.OP_DECORATORS or name in model.OP_REGISTRATION_DECORATORS:
            return frozenset({Op(name)})
        if name == "abc.abstractmethod":
            return frozenset({t.with_flags("abstract")})
        if name == "contextlib.contextmanager":
            return frozenset({t.with_flags("contextmanager")})
        if name in model.TRACE_TIME_DECORATORS:
            return frozenset({t.with_flags("tracetime:" + model.TRACE_TIME_DECORATORS[name])})
        if name == "builtins.staticmethod" or name == "staticmethod":
            return frozenset({t.with_flags("staticmethod")})
        if name == "builtins.classmethod" or name == "classmethod":
            return frozenset({t.with_flags("classmethod")})
        if name.endswith(".setter") or name.endswith(".deleter"):
            return frozenset({t.with_flags("setter")})
        return frozenset({t})

    def bind_args(self, f: FunctionSummary, fv: Func, args, kwargs, scope: Scope) -> dict:
        params = list(f.params)
        b: dict = {}
        if fv.self_cls is not None and params and "staticmethod" not in fv.flags:
            first = params.pop(0)
            b[first] = frozenset({Class(fv.self_cls)}) if "classmethod" in fv.flags else frozenset({Instance(fv.self_cls)})
        i = 0
        for a in args:
            if isinstance(a, tuple) and len(a) == 2 and a[0] == "__value__":
                vals = a[1]
            elif a[0] == "starred":
                break
            else:
                vals = self.eval(a, scope)
            if i < len(params):
                b[params[i]] = vals
            i += 1
        for kname, kexpr in kwargs:
            if kname is not None and (kname in params or kname in f.kwonly):
                b[kname] = kexpr[1] if kexpr[0] == "__value__" else self.eval(kexpr, scope)
        mod = split_id(fv.id)[0]
        for p in params + list(f.kwonly):
            if p not in b and p in f.defaults:
                b[p] = self.eval(f.defaults[p], Scope(mod))
        return b

    def call(self, v, args, kwargs, scope: Scope) -> frozenset:
        """What calling ``v`` may return (for value inference; the reach walk records the edges)."""
        if isinstance(v, Func):
            if "op" in v.flags:
                return frozenset({Unknown("op result")})
            f = self.function(v.id)
            if f is None:
                return frozenset({Unknown("missing function")})
            if scope.depth >= MAX_CALL_DEPTH:
                return self._returns_without_args(v, f)
            bindings = self.bind_args(f, v, args, kwargs, scope)
            try:
                key = (v, tuple(sorted(bindings.items(), key=lambda kv: kv[0])))
                hash(key)
            except TypeError:
                key = None
            if key is not None and key not in self._call_memo:
                seen = self._call_contexts.get(v, 0)
                if seen >= MAX_CALL_CONTEXTS:
                    bindings = self._widened(bindings)
                    key = (v, tuple(sorted(bindings.items(), key=lambda kv: kv[0])))
                else:
                    self._call_contexts[v] = seen + 1
            if key is not None and key in self._call_memo:
                return self._call_memo[key]
            if key is not None and key in self._active:
                return EMPTY
            if key is not None:
                self._active.add(key)
            try:
                mod = split_id(v.id)[0]
                inner = Scope(mod, f, v.id, v.self_cls, bindings, scope.depth + 1,
                              dict(v.closure) if v.closure else None)
                out = set()
                guards_list = f.return_guards or tuple(() for _ in f.returns)
                for r, g in zip(f.returns, guards_list):
                    if g and not self.guards_may_hold(g, inner):
                        continue
                    out |= self.eval(r, inner)
                if f.returns_annotation is not None and all(isinstance(x, Unknown) for x in out):
                    # the annotation is a fallback: `-> QuantizeMethodBase` would widen what the body says
                    out |= self.instances_of(f.returns_annotation, Scope(mod))
                res = frozenset(out) if out else frozenset({Const(None)})
            finally:
                if key is not None:
                    self._active.discard(key)
            if key is not None:
                self._call_memo[key] = res
            return res
        if isinstance(v, Class):
            return frozenset({Instance(v.id)})
        if isinstance(v, Instance):
            target = self.callable_members(v)
            return frozenset().union(*(self.call(t, args, kwargs, scope) for t in _fixed(target))) if target else UNKNOWN
        if isinstance(v, Partial):
            pargs = tuple(("__value__", a) for a in v.args) + tuple(args)
            pkw = tuple((k, ("__value__", a)) for k, a in v.kwargs) + tuple(kwargs)
            return frozenset().union(*(self.call(t, pargs, pkw, scope) for t in _fixed(v.target))) if v.target else UNKNOWN
        if isinstance(v, External):
            return self._call_external(model.normalize(v.name), args, kwargs, scope)
        if isinstance(v, Foreign):
            return frozenset({Unknown("foreign result")})
        return frozenset({Unknown("call")})

    @staticmethod
    def _widened(bindings: dict) -> dict:
        """The bindings that stay in a widened call context: all but the arguments known only as unknowns or
        instances of external types (tensors, mostly).  Those are what made contexts explode: a layer's
        ``forward_decode`` was evaluated for 1,796 argument contexts on a whole site-packages, differing only
        in ``Tensor`` vs ``Tensor.view()`` vs ``empty_like()`` results, and 94% of the resolver's memo entries
        sat in such bound scopes.  A left-out parameter falls back to its annotation, else Unknown.  Functions,
        classes, constants and instances of scanned classes stay: factories (``make_layers(layer_fn)``) and
        dispatch on constants depend on them.  On the benchmark's site-packages the findings are identical."""
        return {k: b for k, b in bindings.items() if not all(type(x) in (Unknown, ExternalInstance) for x in b)}

    def _returns_without_args(self, v: Func, f: FunctionSummary) -> frozenset:
        if f.returns_annotation is not None:
            r = self.instances_of(f.returns_annotation, Scope(split_id(v.id)[0]))
            if r:
                return r
        return UNKNOWN

    def callable_members(self, inst: Instance) -> frozenset:
        """What ``inst(...)`` runs: ``__call__``, or ``forward`` for an nn.Module."""
        call = self.member(inst.cls, "__call__", inst)
        funcs = frozenset(x for x in call if isinstance(x, Func))
        if funcs:
            return funcs
        if self.is_nn_module(inst.cls):
            fwd = self.member(inst.cls, "forward", inst)
            return frozenset(x for x in fwd if isinstance(x, Func))
        return EMPTY

    def _arg_values(self, args, scope: Scope, i: int) -> frozenset:
        if i >= len(args):
            return EMPTY
        a = args[i]
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "__value__":
            return a[1]
        return self.eval(a, scope)

    def _call_external(self, name: str, args, kwargs, scope: Scope) -> frozenset:
        first = self._arg_values(args, scope, 0) if args else EMPTY
        callables = frozenset(x for x in first if isinstance(x, (Func, Partial, Instance, Op)))
        decorator_like = (
            name in model.CACHE_DECORATORS or name in model.DISABLE_DECORATORS or name in model.OP_DECORATORS
            or name in model.TRACE_TIME_DECORATORS or name in model.TRANSPARENT_WRAPPER_CALLS
            or name in model.CACHED_PROPERTY or name in model.PROPERTY
        )
        if decorator_like:
            if callables and name not in model.OP_DECORATORS:
                return self.apply_decorator(frozenset({External(name)}), callables, scope)
            if name in model.OP_DECORATORS and len(args) >= 2:
                return frozenset({Op(name)})
            return frozenset({External(name)})  # a decorator factory: applying it later does the work
        if name in model.OP_REGISTRATION_CALLS:
            return frozenset({Op(name)})
        if name == "functools.partial":
            rest = tuple(self._arg_values(args, scope, i) for i in range(1, len(args)))
            kw = tuple((k, x[1] if x[0] == "__value__" else self.eval(x, scope)) for k, x in kwargs if k)
            return frozenset({Partial(first, rest, kw)})
        if name == "builtins.getattr" and len(args) >= 2:
            attr = self._arg_values(args, scope, 1)
            if len(attr) == 1 and isinstance(next(iter(attr)), Const) and isinstance(next(iter(attr)).value, str):
                aname = next(iter(attr)).value
                got = frozenset().union(*(self.attr(o, aname) for o in _fixed(first))) if first else UNKNOWN
                if len(args) >= 3:  # getattr(obj, name, default): either
                    got = frozenset(v for v in got if not isinstance(v, Unknown)) | self._arg_values(args, scope, 2)
                return got
            return UNKNOWN
        if name == "builtins.type" and len(args) == 1:
            return frozenset(Class(x.cls) for x in first if isinstance(x, Instance)) or UNKNOWN
        if name == "builtins.super":
            if scope.func is not None and scope.func.class_name:
                owner = f"{scope.module}:{scope.func.class_name}"
                return frozenset({Super(owner, scope.self_cls or owner)})
            return UNKNOWN
        if name == "types.SimpleNamespace":
            return frozenset({Namespace(tuple((k, self.eval(x, scope)) for k, x in kwargs if k))})
        if name in _CONTAINER_FACTORIES:
            elems = set()
            for x in first:
                if isinstance(x, SeqVal):
                    elems |= x.elems
                elif isinstance(x, TupleVal):
                    for it in x.items:
                        elems |= it
                elif isinstance(x, DictVal):
                    for _, vals in x.items:
                        elems |= vals
            return frozenset({SeqVal(frozenset(elems))})
        if name in self.foreign_origins:
            return frozenset({Foreign(name)})
        if self.arch is not None:
            fact = self.arch.call(name)
            if fact is not None:
                return frozenset({Const(fact)})
        if name in model.EXTERNAL_RETURNS:
            return frozenset({ExternalInstance(model.EXTERNAL_RETURNS[name])})
        if name.startswith("pathlib.Path.") and name.rsplit(".", 1)[1] in model.PATH_RETURNING_METHODS:
            return frozenset({ExternalInstance("pathlib.Path")})
        if name.startswith("builtins."):
            return frozenset({Unknown(name)})
        last = name.rsplit(".", 1)[-1]
        if last[:1].isupper():
            return frozenset({ExternalInstance(name)})
        return frozenset({ExternalInstance(f"{name}()")})

    # ------------------------------------------------------------ conditions
    def truth(self, e, scope: Scope, predicates: Optional[dict] = None) -> Optional[bool]:
        """Three-valued truth of a condition: True, False, or None (unknown)."""
        k = e[0]
        if k == "const":
            return bool(e[1])
        if k == "not":
            t = self.truth(e[1], scope, predicates)
            return None if t is None else not t
        if k == "bool":
            vals = [self.truth(x, scope, predicates) for x in e[2]]
            if e[1] == "and":
                if any(v is False for v in vals):
                    return False
                return True if all(v is True for v in vals) else None
            if any(v is True for v in vals):
                return True
            return False if all(v is False for v in vals) else None
        if k == "call":
            callees = self.eval(e[1], scope)
            if len(e[2]) == 2 and any(isinstance(c, External) and c.name == "builtins.isinstance" for c in callees):
                return self._isinstance_truth(e[2][0], e[2][1], scope)
            verdicts = set()
            for c in _fixed(callees):
                if isinstance(c, External):
                    t = self._predicate(c.name, predicates)
                    if t is None and self.arch is not None:
                        v = self.arch.call(model.normalize(c.name))
                        t = None if v is None else bool(v)
                    verdicts.add(t)
                elif isinstance(c, Func):
                    t = self._predicate(dotted(c.id), predicates)
                    if t is None:
                        t = self._call_truth(c, e[2], e[3], scope, predicates)
                    verdicts.add(t)
                elif isinstance(c, Partial):
                    verdicts.add(self._call_truth(c, e[2], e[3], scope, predicates))
                else:
                    verdicts.add(None)
            if len(verdicts) == 1:
                return verdicts.pop()
            return None
        if k in ("name", "attr"):
            vals = self.eval(e, scope)
            if len(vals) == 1:
                v = next(iter(vals))
                if isinstance(v, Const):
                    return bool(v.value)
                if isinstance(v, External):
                    return self._predicate(v.name, predicates, called=False)
            elif vals and all(isinstance(v, Const) for v in vals):
                ts = {bool(v.value) for v in vals}
                if len(ts) == 1:
                    return ts.pop()
            return None
        if k == "cmp" and len(e[2]) == 1:
            left, right = self.eval(e[1], scope), self.eval(e[2][0][1], scope)
            if left and right and len(left) * len(right) <= 16 and all(isinstance(x, Const) for x in left | right):
                # every combination of the possible constants must agree
                verdicts = {_compare(e[2][0][0], a.value, b.value) for a in left for b in right}
                return verdicts.pop() if len(verdicts) == 1 else None
        return None

    def _isinstance_truth(self, obj_expr, cls_expr, scope: Scope) -> Optional[bool]:
        """``isinstance(layer, LinearBase)`` when every value of ``layer`` is an instance of an indexed class:
        the narrowing that picks the linear method out of a quantization config's ``get_quant_method``."""
        objs = self.eval(obj_expr, scope)
        if not objs or not all(isinstance(o, Instance) for o in objs):
            return None
        wanted = set()
        for c in _fixed(self.eval(cls_expr, scope)):
            if isinstance(c, Class):
                wanted.add(c.id)
            elif isinstance(c, External):
                wanted.add(model.normalize(c.name))
            elif isinstance(c, TupleVal):
                for it in c.items:
                    for x in it:
                        if isinstance(x, Class):
                            wanted.add(x.id)
                        elif isinstance(x, External):
                            wanted.add(model.normalize(x.name))
                        else:
                            return None
            else:
                return None
        if not wanted:
            return None
        verdicts = {bool(wanted & set(self.mro(o.cls))) for o in objs}
        return verdicts.pop() if len(verdicts) == 1 else None

    def _call_truth(self, v, args, kwargs, scope: Scope, predicates: Optional[dict]) -> Optional[bool]:
        """Truth of a call's result, from the callee's return expressions (``if not is_cuda(): return False``
        ... ``return capability[0] in majors``) evaluated with the call's arguments bound."""
        if scope.depth >= MAX_CALL_DEPTH:
            return None
        if isinstance(v, Partial):
            verdicts = {self._call_truth(t, tuple(("__value__", a) for a in v.args) + tuple(args),
                                         tuple((k, ("__value__", a)) for k, a in v.kwargs) + tuple(kwargs),
                                         scope, predicates) for t in v.target}
            return verdicts.pop() if len(verdicts) == 1 else None
        if not isinstance(v, Func) or v.flags & {"disabled", "op"}:
            return None
        f = self.function(v.id)
        if f is None or not f.returns:
            return None
        key = ("truth", v, args, kwargs, scope.key())
        if key in self._active:
            return None
        self._active.add(key)
        try:
            bindings = self.bind_args(f, v, args, kwargs, scope)
            inner = Scope(split_id(v.id)[0], f, v.id, v.self_cls, bindings, scope.depth + 1)
            verdicts = set()
            guards_list = f.return_guards or tuple(() for _ in f.returns)
            for r, g in zip(f.returns, guards_list):
                if g and not self.guards_may_hold(g, inner, predicates):
                    continue
                verdicts.add(self.truth(r, inner, predicates))
                if None in verdicts or len(verdicts) > 1:
                    return None
            return verdicts.pop() if len(verdicts) == 1 else None
        finally:
            self._active.discard(key)

    def _predicate(self, name: Optional[str], predicates: Optional[dict], called: bool = True) -> Optional[bool]:
        if name is None:
            return None
        name = model.normalize(name)
        if predicates:
            if name in predicates:
                return predicates[name]
            short = name.rsplit(".", 1)[-1]
            if f"*.{short}" in predicates:
                return predicates[f"*.{short}"]
        if called and name in model.REGION_PREDICATES and name != "typing.TYPE_CHECKING":
            return None  # only true inside a region: the caller passes region predicates
        if not called and name == "typing.TYPE_CHECKING":
            return False
        return None

    def guards_may_hold(self, guards, scope: Scope, predicates: Optional[dict] = None) -> bool:
        for g in guards:
            t = self.truth(g.cond, scope, predicates)
            if t is not None and t != g.polarity:
                return False
        return True


def _compare(op: str, a, b) -> Optional[bool]:
    try:
        return {
            "Eq": lambda: a == b, "NotEq": lambda: a != b, "Lt": lambda: a < b, "LtE": lambda: a <= b,
            "Gt": lambda: a > b, "GtE": lambda: a >= b, "In": lambda: a in b, "NotIn": lambda: a not in b,
            "Is": lambda: a is b, "IsNot": lambda: a is not b,
        }[op]()
    except (TypeError, KeyError):
        return None
