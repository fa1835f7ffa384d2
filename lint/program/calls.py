"""Calls: decorators applied to a ``def``, arguments bound to parameters, and what a call may return.

``CallMixin`` is one part of ``Program``: a function's return value is memoised per argument context
(``_call_memo``), at most ``MAX_CALL_CONTEXTS`` precise contexts per function (``_call_contexts``), then
widened; calls into external code are answered from ``dynamo.model``'s tables (``_call_external``).
"""
from __future__ import annotations

from typing import Optional

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
from .facts import UNSET
from .fixpoint import _NO_CUT, MISSING
from .locator import dotted, split_id
from .scope import MAX_CALL_DEPTH, Scope, _fixed, sorted_pairs
from .widening import argument_values, derived_name


# A function's return value is worked out per distinct argument context; past this many contexts, arguments
# that carry nothing precise are left out of the context (Program._widened).
MAX_CALL_CONTEXTS = 8


# What a function's contexts are counted by (ContextCaps): its arguments with every object of code the
# scanned program does not hold -- a tensor and what was derived from it, an external attribute, an unknown --
# as this one token.  Which of those a value set holds follows the order the resolver met cycles in (a region
# walked again in a fresh program may see `torch.Tensor.view()` where the full scan had `torch.empty()`), and
# counted apart, such sets filled the caps first: an edit moved which contexts of hundreds of functions came
# first.  The memo keeps every such context apart: those that count as one are each worked out precisely.
_OPAQUE = Unknown("opaque")
_ONLY_OPAQUE = frozenset({_OPAQUE})
_OPAQUE_TYPES = (Unknown, ExternalInstance, External)


def _call_key(func, bindings: dict) -> tuple:
    """The call memo's key: the function value and its parameters' bindings in name order."""
    return func, sorted_pairs(bindings)


def _counted_context(bindings: dict) -> tuple:
    return tuple(sorted(((k, _counted(vals)) for k, vals in bindings.items()), key=lambda kv: kv[0]))


def _counted(vals: frozenset) -> frozenset:
    out = set()
    for x in vals:
        t = type(x)
        if t in _OPAQUE_TYPES:
            out.add(_OPAQUE)
        elif t is TupleVal:
            out.add(TupleVal(tuple(_counted(s) for s in x.items)))
        else:
            out.add(x)
    # (the commonest set: one object, not one per argument of every context counted -- on the bench site
    # ~100 K of them held by the context caps at the walks' end)
    return _ONLY_OPAQUE if out == _ONLY_OPAQUE else frozenset(out)


# the values that calling runs code of the scanned program
CALLABLE_VALUES = (Func, Class, Instance, Partial)
# external functions that call the functions they are given: the positional arguments (map's function; the
# callable among map's arguments, whichever position it is given in) and the ``key=`` of the sorting ones
HIGHER_ORDER_CALLS = frozenset({"builtins.map", "builtins.filter", "functools.reduce"})
KEY_FUNCTION_CALLS = frozenset({"builtins.sorted", "builtins.min", "builtins.max", "builtins.list.sort"})

_ITERATION_BUILTINS = frozenset({"builtins.enumerate", "builtins.zip", "builtins.reversed", "builtins.sorted",
                                 "builtins.iter", "builtins.filter"})
_CONTAINER_FACTORIES = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "builtins.list", "builtins.tuple",
                                  "torch.nn.ModuleDict", "builtins.dict", "builtins.set", "builtins.frozenset"})


def _foreign_origins() -> frozenset:
    from compile_lint.rules.jit import FOREIGN_ORIGINS

    return frozenset(FOREIGN_ORIGINS)


class CallMixin:
    """function_value and the decorator tables (apply_decorator / _apply_one / _apply_named), bind_args,
    call (with _widened contexts and _returns_without_args past MAX_CALL_DEPTH), _call_external."""

    # ------------------------------------------------------------ functions
    def function_value(self, fid: str, scope: Scope) -> Func:
        """The value a ``def`` binds: the function with its decorators applied (cache, disable, op...)."""
        hit = self._func_value_memo.get(fid, MISSING)
        if hit is not MISSING:
            return self._memo_hit(hit)
        # a decorator that refers to the function it decorates meets the function undecorated
        return self._solve(self._func_value_memo, fid, Func(fid), self._function_value, fid)

    def _function_value(self, fid: str) -> Func:
        base = Func(fid)
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
            result = funcs[0] if len(funcs) == 1 else base if not funcs else self._merge_wrapped(fid, funcs)
        return result

    def _merge_wrapped(self, fid: str, funcs: list):
        """Several values for one ``def``.  When they are the function itself with different decorator
        wrappers (a decorator that returns its wrapper on one path and the function on another), the result
        runs every wrapper, and those missing from some value are conditional (``conditional_wrappers``).
        Otherwise the first by repr, as a stable choice."""
        same = [v for v in funcs if isinstance(v, Func) and v.id == fid]
        if len(same) != len(funcs) or len({(v.self_cls, v.flags) for v in same}) != 1:
            return sorted(funcs, key=repr)[0]
        ordered_ = sorted(same, key=repr)
        every = tuple(dict.fromkeys(w for v in ordered_ for w in v.wrappers))
        always = set(ordered_[0].wrappers).intersection(*(set(v.wrappers) for v in ordered_[1:]))
        some = [w for w in every if w not in always]
        if some:
            self.conditional_wrappers[fid] = {w: _wrapper_condition(w) for w in some}
        return Func(fid, ordered_[0].self_cls, ordered_[0].flags, every)

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
                elif isinstance(r, Func) and self._calls_decorated(d, r):
                    # a wrapper (functools.wraps style): calling it runs the wrapper and the original
                    out.add(Func(t.id, t.self_cls, t.flags | r.flags, t.wrappers + (r.id,)))
                else:
                    # not a wrapper of t: the inner decorator a factory returns when called without the
                    # function (`@auto_docstring` / `@auto_docstring(...)`), or anything else.  What the
                    # decorator did to t (a docstring rewritten with inspect.getsourcefile) ran at import.
                    out.add(t)
            return frozenset(out)
        if isinstance(d, Class):
            return frozenset({t})
        return frozenset({t})

    def _calls_decorated(self, d: Func, r: Func) -> bool:
        """Does ``r``, returned by decorator ``d``, call the function ``d`` was given (``return func(*a, **k)``)?
        Only then is it a wrapper that runs when the decorated name is called."""
        fd, fr = self.function(d.id), self.function(r.id)
        if fd is None or fr is None:
            return True  # cannot tell: keep walking the wrapper, as before
        params = fd.params[1:] if d.self_cls is not None and "staticmethod" not in d.flags else fd.params
        if not params:
            return True  # cannot tell: keep walking the wrapper, as before
        given = params[0]
        return any(_calls_name(site.func, given) or _is_partial(site.func) and site.args and
                   _calls_name(site.args[0], given)
                   for site in fr.calls_named(given, "partial", *_THROUGH))

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
        """The values of ``f``'s parameters at a call (a parameter not bound is not in it), as a context keeps
        them (``argument_values``)."""
        params = list(f.params)
        b: dict = {}
        if fv.self_cls is not None and params and "staticmethod" not in fv.flags:
            first = params.pop(0)
            b[first] = frozenset({Class(fv.self_cls)}) if "classmethod" in fv.flags else frozenset({Instance(fv.self_cls)})
        i = 0
        extra: Optional[list] = []  # what `*args` collects; None once a starred argument makes it unknown
        for a in args:
            if isinstance(a, tuple) and len(a) == 2 and a[0] == "__value__":
                vals = a[1]
            elif a[0] == "starred":
                extra = None
                break
            else:
                vals = self.eval(a, scope)
            vals = argument_values(vals)
            if i < len(params):
                b[params[i]] = vals
            elif extra is not None:
                extra.append(vals)
            i += 1
        if f.vararg and extra:
            # `and_masks(causal_mask, padding_mask_function(pad))` (transformers' masking_utils): the closure
            # it returns iterates `mask_functions`, the tuple of what was passed
            b[f.vararg] = frozenset({TupleVal(tuple(extra))})
        for kname, kexpr in kwargs:
            if kname is not None and (kname in params or kname in f.kwonly):
                b[kname] = argument_values(kexpr[1] if kexpr[0] == "__value__" else self.eval(kexpr, scope))
        mod = split_id(fv.id)[0]
        for p in params + list(f.kwonly):
            if p not in b and p in f.defaults:
                b[p] = argument_values(self.eval(f.defaults[p], Scope(mod)))
        return b

    def call(self, v, args, kwargs, scope: Scope) -> frozenset:
        """What calling ``v`` may return (for value inference; the reach walk records the edges)."""
        if isinstance(v, Func):
            if "op" in v.flags:
                return frozenset({Unknown("op result")})
            f = self.function(v.id)
            if f is None:
                return frozenset({Unknown("missing function")})
            named = self._decorator_table_name(v)
            if named is not None:
                # a decorator the model names, indexed as source (sglang's register_custom_op): called with the
                # function it registers, or as a factory (`@register_custom_op(fake_impl=...)`) whose decorator
                # does the same, what the model says -- not what its source makes of the eager path
                return self._call_external(named, args, kwargs, scope)
            if scope.depth >= MAX_CALL_DEPTH:
                return self._returns_without_args(v, f)
            outer = self._open_reads()
            bindings = self.bind_args(f, v, args, kwargs, scope)
            # arguments worked out from a cycle's value so far: what the call gives is provisional on its
            # head (the head's next round asks again, with other arguments); such a context is not one of the
            # function's first contexts (ContextCaps: a round's would fill them), and a parameter with no value
            # yet gives no value (not the annotation a function returning nothing falls back to)
            pending = min(self._close_reads(outer), scope.pending)
            if pending != _NO_CUT and not all(bindings.values()):
                return EMPTY
            bindings = self._value_bindings(f, bindings)
            try:
                key = _call_key(v, bindings)
                hash(key)
            except TypeError:
                key = None
            if key is not None and pending == _NO_CUT and key not in self._call_memo and \
                    not self._call_contexts.admit(v, _counted_context(bindings)):
                bindings = self._widened(bindings)  # past the function's first MAX_CALL_CONTEXTS contexts
                key = _call_key(v, bindings)
            if key is not None:
                hit = self._call_memo.get(key, MISSING)
                if hit is not MISSING:
                    return hit if hit.__class__ is frozenset else self._memo_hit(hit)
                # a new entry: its key and the callee's scope (which the eval memo's keys hold) keep one object
                # per argument set, as the evaluator's own values (each call binds its arguments anew: session
                # 40 counted 106 K such sets of 13 K values held at the bench site's walks' end)
                bindings = {k: self._one_set(b) if b.__class__ is frozenset else b for k, b in bindings.items()}
                key = _call_key(v, bindings)
            inner = Scope(split_id(v.id)[0], f, v.id, v.self_cls, bindings, scope.depth + 1,
                          dict(v.closure) if v.closure else None, pending=pending)
            if key is None:
                return self._call_value(f, inner)
            return self._solve(self._call_memo, key, EMPTY, self._call_value, f, inner, floor=pending)
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

    def _call_value(self, f, inner: Scope) -> frozenset:
        """What a call of ``f`` returns, its arguments bound in ``inner``."""
        out = set()
        guards_list = f.return_guards or tuple(() for _ in f.returns)
        for r, g in zip(f.returns, guards_list):
            if g and not self.guards_may_hold(g, inner):
                continue
            out |= self.eval(r, inner)
        if f.yields:  # a generator function returns a generator: iterating it gives what it yields
            out = {SeqVal(frozenset().union(*(self.eval(y, inner) for y in f.yields)))}
        elif not out and self._met_unfinished():
            return EMPTY  # its returns give nothing yet: a cycle's first round, not a function that returns None
        if f.returns_annotation is not None and all(isinstance(x, Unknown) for x in out):
            # the annotation is a fallback: `-> QuantizeMethodBase` would widen what the body says
            out |= self.instances_of(f.returns_annotation, Scope(inner.module))
        # (one object per value: the call memo held 66,717 sets of 11,016 values at the bench site's walks' end)
        return self._one_set(frozenset(out or {Const(None)}))

    def _env_read(self, args, kwargs, scope: Scope) -> Optional[frozenset]:
        """``os.environ.get(NAME[, default])`` / ``os.getenv`` under the user's ``--env`` facts: the value the
        deployment sets; the default where ``--env-complete`` says the variable is unset; None: not known."""
        keys = self._arg_values(args, scope, 0)
        key = next(iter(keys)) if len(keys) == 1 else None
        if not isinstance(key, Const) or not isinstance(key.value, str):
            return None
        got = self.facts.env_value(key.value)
        if got is None:
            return None
        if got is UNSET:
            if len(args) >= 2:
                return self._arg_values(args, scope, 1)
            for k, x in kwargs:
                if k == "default":
                    return x[1] if x[0] == "__value__" else self.eval(x, scope)
            return frozenset({Const(None)})
        return frozenset({Const(got)})

    def _value_bindings(self, f: FunctionSummary, bindings: dict) -> dict:
        """The bindings the value of a call of ``f`` may read: the parameters its returns, their guards and its
        yields name (through its locals).  Each expression is evaluated in a scope narrowed to what it reads
        (EvaluatorMixin._narrowed), so a call that differs only in the others returns the same value: one
        context, not one per tensor the caller passed.  The count of a function's contexts (ContextCaps) is
        then of the contexts that can differ -- fewer functions reach the cap, whose first contexts depend on
        the order of the scan."""
        reads = self._value_reads_memo.get(id(f), MISSING)
        if reads is MISSING or reads[0] is not f:
            reads = self._value_reads_memo[id(f)] = (f, self._value_reads(f))
        reads = reads[1]
        if reads is None or reads.issuperset(bindings):
            return bindings
        return {k: b for k, b in bindings.items() if k in reads}

    def _value_reads(self, f: FunctionSummary) -> Optional[frozenset]:
        """The names the value of a call of ``f`` may read (None: a closure may capture every binding)."""
        exprs = list(f.returns) + list(f.yields)
        exprs += [g.cond for guards in f.return_guards for g in guards]
        out: set = set()
        for e in exprs:
            r = self._param_reads(f, e)
            if r is None:
                return None
            out |= r
        return frozenset(out)

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

    def _arg_values(self, args, scope: Scope, i: int) -> frozenset:
        if i >= len(args):
            return EMPTY
        a = args[i]
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "__value__":
            return a[1]
        return self.eval(a, scope)

    def _iteration(self, name: str, args, scope: Scope) -> frozenset:
        """``enumerate(x)``, ``zip(a, b)``, ``reversed(x)``, ``sorted(x)``, ``iter(x)``, ``filter(f, x)``: a
        sequence of x's elements (of ``(index, element)`` / ``(a's, b's)`` pairs), so that a loop over them binds
        its targets to the modules of a ModuleList."""
        def elems(vals: frozenset) -> frozenset:
            return _elements(vals, dict_values=False)

        if name == "builtins.enumerate":
            pair = TupleVal((frozenset({Unknown("index")}), elems(self._arg_values(args, scope, 0))))
            return frozenset({SeqVal(frozenset({pair}))})
        if name == "builtins.zip":
            return frozenset({SeqVal(frozenset({TupleVal(tuple(elems(self._arg_values(args, scope, i))
                                                               for i in range(len(args))))}))})
        which = 1 if name == "builtins.filter" and len(args) > 1 else 0
        return frozenset({SeqVal(elems(self._arg_values(args, scope, which)))})

    def _imported_module(self, names: frozenset, args, kwargs, scope: Scope) -> frozenset:
        """``importlib.import_module(NAME[, package])``: the module each constant name names (relative names
        against ``package``, ``__name__`` / ``__package__`` being the calling module's), so that a registry of
        dotted paths (vLLM's ``resolve_obj_by_qualname("pkg.mod.Class")``: ``rsplit``, ``import_module``,
        ``getattr``) resolves to its classes.  A name computed at run time stays unknown."""
        anchor = None
        package = args[1] if len(args) > 1 else next((x for k, x in kwargs if k == "package"), None)
        if package is not None and not (isinstance(package, tuple) and package[:1] == ("__value__",)):
            if package == ("name", "__name__"):
                anchor = scope.module
            elif package == ("name", "__package__"):
                m = self.module(scope.module)
                anchor = scope.module if m is not None and m.is_package else scope.module.rpartition(".")[0]
            else:
                got = self.eval(package, scope)
                if len(got) == 1 and isinstance(next(iter(got)), Const) and isinstance(next(iter(got)).value, str):
                    anchor = next(iter(got)).value
        out: set = set()
        for v in _fixed(names):
            if not (isinstance(v, Const) and isinstance(v.value, str) and v.value.strip(".")):
                out.add(Unknown("import_module of a computed name"))
                continue
            target = v.value
            if target.startswith("."):
                level = len(target) - len(target.lstrip("."))
                if anchor is None:
                    out.add(Unknown("relative import_module without a package"))
                    continue
                base = anchor.split(".")
                if level - 1 > len(base) - 1:
                    out.add(Unknown("relative import_module beyond the top"))
                    continue
                target = ".".join(base[:len(base) - (level - 1)] + [target[level:]])
            out |= self.module_value(target)
        return frozenset(out) if out else UNKNOWN

    def _call_external(self, name: str, args, kwargs, scope: Scope) -> frozenset:
        first = self._arg_values(args, scope, 0) if args else EMPTY
        callables = frozenset(x for x in first if isinstance(x, (Func, Partial, Instance, Op)))
        decorator_like = (
            name in model.CACHE_DECORATORS or name in model.DISABLE_DECORATORS or name in model.OP_DECORATORS
            or name in model.OP_REGISTRATION_DECORATORS
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
        if name in ("os.getenv", "os.environ.get") and self.facts and args:
            read = self._env_read(args, kwargs, scope)
            if read is not None:
                return read
        if name == "functools.partial":
            rest = tuple(self._arg_values(args, scope, i) for i in range(1, len(args)))
            kw = tuple((k, x[1] if x[0] == "__value__" else self.eval(x, scope)) for k, x in kwargs if k)
            return frozenset({Partial(first, rest, kw)})
        if name == "builtins.getattr" and len(args) >= 2:
            attr = self._arg_values(args, scope, 1)
            names = [a.value for a in _fixed(attr) if isinstance(a, Const) and isinstance(a.value, str)]
            if names:
                # one name, or one of a few (a registry's dotted paths): each attribute it may read
                got = frozenset().union(*(self.attr(o, n) for o in _fixed(first) for n in names)) if first else UNKNOWN
                if len(names) < len(attr):  # and a name computed at run time
                    got |= frozenset({Unknown("getattr of a computed name")})
                if len(args) >= 3:  # getattr(obj, name, default): either
                    got = frozenset(v for v in got if not isinstance(v, Unknown)) | self._arg_values(args, scope, 2)
                return got
            # a name computed at run time: of a native library (`getattr(nvmlLib, name)`, pynvml's function
            # pointers), still a function of that library
            foreign = frozenset(Foreign(o.origin, f"{o.path}.<{_name_text(args[1])}>" if o.path
                                        else f"<{_name_text(args[1])}>") for o in first if isinstance(o, Foreign))
            return foreign or UNKNOWN
        if name == "importlib.import_module" and args:
            return self._imported_module(first, args, kwargs, scope)
        if name == "builtins.type" and len(args) == 1:
            return frozenset(Class(x.cls) for x in first if isinstance(x, Instance)) or UNKNOWN
        if name == "builtins.super":
            if scope.func is not None and scope.func.class_name:
                owner = f"{scope.module}:{scope.func.class_name}"
                return frozenset({Super(owner, scope.self_cls or owner)})
            return UNKNOWN
        if name == "types.SimpleNamespace":
            return frozenset({Namespace(tuple((k, self.eval(x, scope)) for k, x in kwargs if k))})
        if name in _ITERATION_BUILTINS and args:
            return self._iteration(name, args, scope)
        if name == "builtins.map" and args:  # a lazy sequence of what the function returns
            results: set = set()
            for fn in _fixed(frozenset().union(*(self._arg_values(args, scope, i) for i in range(len(args))))):
                if isinstance(fn, CALLABLE_VALUES):
                    results |= self.call(fn, (("__value__", frozenset({Unknown("element")})),), (), scope)
            return frozenset({SeqVal(frozenset(results))})
        if name == "typing.cast" and len(args) == 2:  # cast(T, x) is x
            return self._arg_values(args, scope, 1)
        if name in _CONTAINER_FACTORIES:
            elems = set()
            if name == "torch.nn.Sequential":  # Sequential(a, b, c): the modules are the arguments themselves
                for i in range(len(args)):
                    elems |= {x for x in self._arg_values(args, scope, i) if isinstance(x, Instance)}
            # ModuleDict({...}) / list(seq): the modules are a dict's values; anything else adds nothing
            elems |= _elements(frozenset(x for x in first if isinstance(x, (SeqVal, TupleVal, DictVal))),
                               dict_values=True)
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
        return frozenset({ExternalInstance(derived_name(f"{name}()"))})


def _elements(vals: frozenset, dict_values: bool) -> frozenset:
    """What iterating over ``vals`` yields: a sequence's elements, a tuple's items, a dict's keys (or its values,
    for a container built from it); anything else is an unknown element."""
    out = set()
    for v in vals:
        if isinstance(v, SeqVal):
            out |= v.elems
        elif isinstance(v, TupleVal):
            for it in v.items:
                out |= it
        elif isinstance(v, DictVal):
            if dict_values:
                for _, vs in v.items:
                    out |= vs
            else:
                out |= {Const(k) if k is not None else Unknown("key") for k, _ in v.items}
        else:
            out.add(Unknown("element"))
    return frozenset(out)


def _is_partial(func) -> bool:
    return (func[0] == "name" and func[1] == "partial") or (func[0] == "attr" and func[2] == "partial")


def _calls_name(func, name: str) -> bool:
    """``func`` is the name itself, or the function behind it (``func.__wrapped__``, ``func.__call__``); not a
    method of one of its attributes (``obj.__qualname__.split``)."""
    if func == ("name", name):
        return True
    return func[0] == "attr" and func[1] == ("name", name) and func[2] in _THROUGH


_THROUGH = ("__wrapped__", "__call__", "__func__")


def _wrapper_condition(wid: str) -> str:
    """How a finding names a wrapper that is installed on some paths only: by its decorator and its name."""
    qual = split_id(wid)[1]
    decorator = qual.split(".<locals>.")[0]
    return f"@{decorator} installs its {qual.rsplit('.', 1)[-1]} (decided at import)"


def _name_text(arg) -> str:
    """How a call's argument is shown in a callee's name: the variable it reads, else ``attr``."""
    return arg[1] if type(arg) is tuple and len(arg) == 2 and arg[0] == "name" and type(arg[1]) is str else "attr"
