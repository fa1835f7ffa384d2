"""Expressions: what an expression of ``summary.py``'s small language may evaluate to, and ``value.attr``.

``EvaluatorMixin`` is one part of ``Program``: ``eval`` memoises per (expression, scope) in ``_eval_memo``,
narrows a bound scope to the parameters an expression reads (``_reads_memo``) and interns value sets
(``_value_sets``).  Recursion is cut, never followed forever.
"""
from __future__ import annotations

import operator
from typing import Optional

from ..dynamo import model
from ..summary import FunctionSummary
from ..values import (
    ANY_KEY,
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
    Module,
    Namespace,
    Op,
    SeqVal,
    Super,
    TupleVal,
    Unknown,
    assumed_in,
    with_assumed,
)
from .locator import split_id
from .scope import MAX_CALL_DEPTH, Scope, _fixed
from .widening import CONTAINERS, SCALAR_TYPES, bounded_nesting, derived_name

_EITHER_BOOL = frozenset({Const(True), Const(False)})
_TENSOR = frozenset({ExternalInstance("torch.Tensor")})
_NUMBER_OPS = {"Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "FloorDiv": operator.floordiv,
               "Mod": operator.mod, "Div": operator.truediv, "LShift": operator.lshift, "RShift": operator.rshift,
               "BitAnd": operator.and_, "BitXor": operator.xor}


_TENSOR_ARITHMETIC = frozenset({"Add", "Sub", "Mult", "Div", "FloorDiv", "Mod", "Pow", "MatMul"})

# ``str`` methods without side effects whose result depends on their arguments only: folded on constant
# strings (EvaluatorMixin._str_method), for at most this many receivers at once
STR_METHODS = frozenset({"split", "rsplit", "partition", "rpartition", "strip", "lstrip", "rstrip", "lower",
                         "upper", "replace", "startswith", "endswith", "removeprefix", "removesuffix"})
MAX_FOLDED_STRINGS = 16


def tensor_valued(vals: frozenset) -> bool:
    """Every value is a tensor (``model.tensor_type``)."""
    return bool(vals) and all(isinstance(v, ExternalInstance) and model.tensor_type(v.type) for v in vals)


def _arithmetic(op: str, a, b) -> Optional[Const]:
    """``major * 10 + minor`` on constants (a compute capability: FlashInfer's ``f"{major * 10 + minor}"``
    picks the fp4 module's arch); strings and sequences only concatenate.  None where Python would raise or
    the value would be unreasonably large."""
    if op == "Add" and type(a) is type(b) and isinstance(a, (str, tuple)):
        return Const(a + b) if len(a) + len(b) <= 10_000 else None
    numbers = (int, float)
    if op not in _NUMBER_OPS or not isinstance(a, numbers) or not isinstance(b, numbers):
        return None
    if op == "LShift" and (not isinstance(b, int) or b > 64):
        return None
    try:
        v = _NUMBER_OPS[op](a, b)
    except (ArithmeticError, TypeError, ValueError):
        return None
    return Const(v) if not isinstance(v, int) or abs(v) < 2 ** 64 else None


_MISS = object()
_SLICE = ("unknown", "Slice")  # how the index writes a slice (summary.py: unknown node types keep their name)
# methods of a dict or a module container that give its keys, values or pairs (Program._container_view)
_CONTAINER_VIEWS = frozenset({"values", "items", "keys", "children", "modules", "named_children", "named_modules"})
_INTERNABLE = frozenset({Func, Class, Instance, External, ExternalInstance, Foreign, Op, Unknown})


class EvaluatorMixin:
    """eval / _eval over every expression kind, subscripts, ``with ... as`` through a context manager,
    and attribute access on every kind of value (attr)."""

    # ------------------------------------------------------------ expressions
    def eval(self, expr, scope: Scope, assumed: bool = True) -> frozenset:
        if expr is None:
            return UNKNOWN
        # Names and constants are not memoised here: a name has its own memo tables (locals, globals) and a
        # constant needs none (and ("const", 1) == ("const", True) as keys).  They were half the entries.
        k = expr[0]
        if k == "const":
            return self._interned(frozenset({Const(expr[1])}))
        if assumed and self.facts:  # --assume: the user's word on what an expression is (program/facts.py)
            a = self.facts.assumption_for(expr)
            if a is not None:
                vals = EMPTY if a.is_literal else self.eval(expr, scope, assumed=False)
                return self._interned(self.facts.apply(a, vals, self.subclasses))
        if scope.bindings:
            scope = self._narrowed(expr, scope)
        if k == "name":
            return self.lookup(expr[1], scope)
        # One memo entry per (expression, scope), solved to its fixpoint where it depends on itself
        # (``self.hf_config = draft(self.hf_config)``: fixpoint.py).  Hashing a nested-tuple key is the
        # resolver's hottest operation: this does it three times per evaluation, not six.
        key = (expr, scope.key())
        memo = self._eval_memo
        hit = memo.get(key, _MISS)
        if hit is not _MISS:
            return hit if hit.__class__ is frozenset else self._memo_hit(hit)
        return self._solve(memo, key, EMPTY, self._eval_interned, expr, scope, floor=scope.pending)

    def _eval_interned(self, expr, scope: Scope) -> frozenset:
        try:
            res = self._eval(expr, scope)
        except RecursionError:
            res = frozenset({Unknown("recursion")})
        return self._interned(res)

    def _narrowed(self, expr, scope: Scope) -> Scope:
        """The scope with only the bound parameters the expression can read (through the function's locals
        too): a function evaluated for eight argument contexts then evaluates ``self.config.x`` once, not
        eight times.  An expression that makes a closure (a lambda, a local def) keeps every binding."""
        per_func = self._reads_memo.get(id(scope.func))
        if per_func is None:
            per_func = self._reads_memo[id(scope.func)] = {}
        hit = per_func.get(id(expr))
        if hit is not None and hit[0] is expr:
            reads = hit[1]
        else:
            reads = self._param_reads(scope.func, expr)
            per_func[id(expr)] = (expr, reads)
        bindings = scope.bindings
        if reads is None or reads.issuperset(bindings):
            return scope
        keep = reads.intersection(bindings)
        cache = scope.__dict__.setdefault("_narrowed", {})
        narrowed = cache.get(keep)
        if narrowed is None:
            narrowed = cache[keep] = Scope(scope.module, scope.func, scope.func_id, scope.self_cls,
                                           {k: bindings[k] for k in keep} or None, scope.depth, scope.closure,
                                           scope.line, scope.pending)
        return narrowed

    def _python_operands(self, e, scope: Scope) -> bool:
        """A comparison whose operands are strings, numbers or None (not tensors, whose ``==`` is a tensor)."""
        for x in (e[1],) + tuple(r for _, r in e[2]):
            vals = self.eval(x, scope)
            if not vals or not all(isinstance(v, Const) or isinstance(v, ExternalInstance) and v.type in SCALAR_TYPES
                                   for v in vals):
                return False
        return True

    def _param_reads(self, f: Optional[FunctionSummary], expr) -> Optional[frozenset]:
        """Names an expression may read in function ``f``, following ``f``'s locals; None if it may capture
        the scope (a ``func`` node).  A superset: every ``name`` node counts."""
        names: set = set()
        captures = False
        stack = [expr]
        seen_locals: set = set()
        while stack:
            e = stack.pop()
            if type(e) is not tuple or not e:
                continue
            tag = e[0]
            if tag == "name" and len(e) == 2 and type(e[1]) is str:
                n = e[1]
                names.add(n)
                if f is not None and n in f.locals and n not in seen_locals and not (
                        n in f.params or n in f.kwonly or n == f.vararg or n == f.kwarg):
                    seen_locals.add(n)
                    stack.extend(f.locals[n])
                continue
            if tag == "func":
                captures = True
                break
            if tag == "const":
                continue
            stack.extend(e)
        if captures:
            return None
        names = frozenset(names)
        return self._name_sets.setdefault(names, names)  # (one object per value: _narrowed keeps one per expression)

    def _interned(self, res: frozenset) -> frozenset:
        """One object per distinct value set ({Unknown}, {Instance(C)}, {Func(f)}...): four million memo
        entries held four million copies (peak RSS 5.75 GB on a whole site-packages).  Sets whose values are
        equal exactly when they mean the same are interned as they are; a single plain Const under its type;
        the others -- a Const (1 == True), a container that may hold one, a function with a closure -- under
        their values' reprs (session 40: 190 K such sets of 38 K values held at the bench site's walks' end;
        the --no-cache scan's peak RSS 2,017 -> 1,944 / 1,967 MB).  (Iteration order is not a concern: the resolver walks multi-valued sets
        in a fixed order, _fixed.)"""
        if not res:
            return EMPTY
        # (the values' types taken once, at C speed: looking at each value in Python, twice, was a tenth of
        # the resolver's own time)
        types = set(map(type, res))
        if not types.isdisjoint(CONTAINERS):
            res = bounded_nesting(res)  # a cycle's rounds settle (widening.py)
        return self._one_set(res, types)

    def _one_set(self, res: frozenset, types: Optional[set] = None) -> frozenset:
        """The one object of ``res``'s value (``res`` itself the first time), ``res`` unchanged: _interned
        without bounding its containers (a call's argument sets, which the call's context keeps as given)."""
        if not res:
            return EMPTY
        if types is None:
            types = set(map(type, res))
        if types <= _INTERNABLE and (Func not in types or not any(v.closure for v in res if type(v) is Func)):
            return self._value_sets.setdefault(res, res)
        if len(res) == 1:
            (only,) = res
            if type(only) is Const and type(only.value) in (str, int, float, bool, type(None)) and not only.assumed:
                return self._value_sets.setdefault((type(only.value), only.value), res)
        # the others (a Const, a container that may hold one) under what their values write: a repr tells 1 from
        # True and 1.0, and an assumption from none, where == does not (two writings of one set, a nested set
        # iterated in another order, are two entries: never one object for two meanings)
        # (the reprs sorted in a tuple, not a frozenset of them: a fifth of the size, 37,908 keys on the bench site)
        return self._value_sets.setdefault(("repr", tuple(sorted(map(repr, res)))), res)

    def _eval(self, e, scope: Scope) -> frozenset:
        k = e[0]
        if k == "name":
            return self.lookup(e[1], scope)
        if k == "attr":
            base = self.eval(e[1], scope)
            return frozenset().union(*(self.attr(v, e[2]) for v in _fixed(base))) if base else EMPTY
        if k == "call":
            if e[1][:3:2] == ("attr", "__getitem__") and e[1][1][:2] == ("call", ("name", "super")) and \
                    len(e[2]) == 1 and scope.self_cls is not None:
                held = self._constructed_contents(scope.self_cls)
                if held:
                    return self._subscript(held, e[2][0], scope)
            if e[1][0] == "attr" and e[1][2] in _CONTAINER_VIEWS and not e[2]:
                viewed = self._container_view(self.eval(e[1][1], scope), e[1][2])
                if viewed is not None:
                    return viewed
            if e[1][0] == "attr" and e[1][2] in STR_METHODS:
                folded = self._str_method(self.eval(e[1][1], scope), e[1][2], e[2], e[3], scope)
                if folded is not None:
                    return folded
            callees = self.eval(e[1], scope)
            out = set()
            for c in _fixed(callees):
                out |= self.call(c, e[2], e[3], scope)
            return frozenset(out)
        if k == "const":
            return frozenset({Const(e[1])})
        if k == "sub":
            return self._subscript(self.eval(e[1], scope), e[2], scope)
        if k == "dict":
            items = []
            for kx, vx in e[1]:
                kv = self.eval(kx, scope) if kx is not None else EMPTY
                key = next(iter(kv)).value if len(kv) == 1 and isinstance(next(iter(kv)), Const) else None
                items.append((key, self.eval(vx, scope)))
            return frozenset({DictVal(tuple(items))})
        if k == "seq":
            parts = [self.eval(x, scope) for x in e[2]]
            if all(len(p) == 1 and isinstance(next(iter(p)), Const) for p in parts) and e[1] in ("tuple", "list"):
                vals = tuple(next(iter(p)).value for p in parts)
                try:
                    hash(vals)
                    return frozenset({Const(vals)})  # lists of constants fold to tuples (for `in`)
                except TypeError:
                    pass
            if e[1] == "tuple":
                return frozenset({TupleVal(tuple(parts))})
            elems = frozenset().union(*parts) if parts else EMPTY
            return frozenset({SeqVal(elems, tuple(parts) if e[1] == "list" else ())})
        if k == "comp":
            return frozenset({SeqVal(self.eval(e[1], scope))})
        if k == "func":
            fv = self.function_value(f"{scope.module}:{e[1]}", scope)
            if scope.bindings and scope.func is not None:
                captured = dict(scope.closure or {})
                captured.update(scope.bindings)
                try:
                    closure = tuple(sorted(captured.items(), key=lambda kv: kv[0]))
                    hash(closure)
                    fv = Func(fv.id, fv.self_cls, fv.flags, fv.wrappers, closure)
                except TypeError:
                    pass
            return frozenset({fv})
        if k == "classref":
            return frozenset({Class(f"{scope.module}:{e[1]}")})
        if k == "modref":
            return self.module_value(e[1])
        if k == "importfrom":
            return self.import_from(e[1], e[2])
        if k == "binop":
            left, right = self.eval(e[2], scope), self.eval(e[3], scope)
            if e[1] == "Div" and any(isinstance(v, ExternalInstance) and v.type == "pathlib.Path" for v in left):
                return frozenset({ExternalInstance("pathlib.Path")})
            if e[1] == "BitOr":
                return left | right
            if e[1] == "Add" and any(isinstance(v, (SeqVal, TupleVal)) for v in left | right):
                elems = set()
                for v in _fixed(left | right):
                    if isinstance(v, SeqVal):
                        elems |= v.elems
                    elif isinstance(v, TupleVal):
                        for it in v.items:
                            elems |= it
                return frozenset({SeqVal(frozenset(elems))})
            if len(left) == 1 and len(right) == 1:
                a, b = next(iter(left)), next(iter(right))
                if isinstance(a, Const) and isinstance(b, Const):
                    folded = _arithmetic(e[1], a.value, b.value)
                    if folded is not None:
                        return frozenset({with_assumed(folded, a.assumed | b.assumed)})
            if e[1] in _TENSOR_ARITHMETIC and (tensor_valued(left) or tensor_valued(right)):
                return _TENSOR  # `torch.max(position_ids) + 1` is a tensor: a test on it is data-dependent
            return frozenset({Unknown("binop")})
        if k == "ifexp":
            t, assumed = self.truth_and_assumptions(e[1], scope)
            if assumed:  # decided by a configuration default only: either, as an undecided `if` is walked
                t = None
            if t is True:
                return self.eval(e[2], scope)
            if t is False:
                return self.eval(e[3], scope)
            return self.eval(e[2], scope) | self.eval(e[3], scope)
        if k == "fstr":
            parts = []
            assumed = frozenset()
            for p in e[1]:
                v = self.eval(p, scope)
                if len(v) == 1 and isinstance(next(iter(v)), Const):
                    parts.append(str(next(iter(v)).value))
                    assumed |= assumed_in(v)
                else:
                    return frozenset({Unknown("fstring")})
            return frozenset({Const("".join(parts), assumed)})
        if k in ("item", "iter"):
            base = self.eval(e[1], scope)
            out = set()
            for v in _fixed(base):
                if isinstance(v, TupleVal):
                    if k == "item" and -len(v.items) <= e[2] < len(v.items):
                        out |= v.items[e[2]]
                    else:
                        out |= frozenset().union(*v.items) if v.items else EMPTY
                elif isinstance(v, Const) and isinstance(v.value, (tuple, list, str)) and k == "item":
                    try:
                        out.add(Const(v.value[e[2]], v.assumed))
                    except IndexError:
                        out.add(Unknown("index"))
                elif isinstance(v, SeqVal):
                    out |= v.elems
                elif isinstance(v, DictVal) and k == "iter":
                    out |= {Const(key) for key, _ in v.items if key is not None}
                elif isinstance(v, Instance) and k == "iter":
                    out |= self.iterated(v, scope) or {Unknown("element")}
                else:
                    out.add(Unknown("element"))
            return frozenset(out)
        if k == "rest":  # the starred target of an unpacking: a list of the items it takes
            out = set()
            for v in _fixed(self.eval(e[1], scope)):
                if isinstance(v, TupleVal):
                    out |= frozenset().union(*v.items[e[2]:len(v.items) - e[3]])
                elif isinstance(v, SeqVal):
                    out |= v.elems
                else:
                    out.add(Unknown("element"))
            return frozenset({SeqVal(frozenset(out))})
        if k == "enter":
            out = set()
            cm = self._contextmanager_yields(e[1], scope)
            if cm is not None:
                return cm
            for v in _fixed(self.eval(e[1], scope)):
                if isinstance(v, Instance):
                    enter = self.member(v.cls, "__enter__", v)
                    out |= frozenset().union(*(self.call(f, (), (), scope) for f in _fixed(enter))) if enter else {v}
                else:
                    out.add(v)
            return frozenset(out)
        if k == "annot":
            return self.instances_of(e[1], scope) or UNKNOWN
        if k == "starred":
            return self.eval(e[1], scope)
        if k in ("cmp", "bool", "not"):
            t, assumed = self.truth_and_assumptions(e, scope)
            if t is not None:
                return frozenset({Const(t, assumed)})
            if k == "not" or k == "cmp" and self._python_operands(e, scope):
                return _EITHER_BOOL  # `not x`, and a comparison of Python values, is a bool, whichever it is
            return frozenset({Unknown("bool")})
        return frozenset({Unknown(k)})

    def _str_method(self, base: frozenset, name: str, args, kwargs, scope: Scope) -> Optional[frozenset]:
        """A pure ``str`` method called on constant strings with constant arguments, folded
        (``qualname.rsplit(".", 1)`` of a dotted path; a list result is a tuple constant, so that unpacking and
        indexing read its items); what the receiver may be besides a constant string is unknown.  None when no
        receiver is a constant string or an argument is not a constant."""
        strings = [v for v in base if isinstance(v, Const) and isinstance(v.value, str)]
        if not strings or len(strings) > MAX_FOLDED_STRINGS:
            return None
        argv = []
        assumed = frozenset()  # the configuration defaults the arguments were computed from
        for a in args:
            if a[0] == "starred":
                return None
            got = self.eval(a, scope)
            if len(got) != 1 or not isinstance(next(iter(got)), Const):
                return None
            argv.append(next(iter(got)).value)
            assumed |= assumed_in(got)
        kw = {}
        for key, a in kwargs:
            got = self.eval(a, scope) if key else EMPTY
            if not key or len(got) != 1 or not isinstance(next(iter(got)), Const):
                return None
            kw[key] = next(iter(got)).value
            assumed |= assumed_in(got)
        out = set()
        for v in sorted(strings, key=lambda c: c.value):
            try:
                r = getattr(str, name)(v.value, *argv, **kw)
            except (TypeError, ValueError):
                return None
            out.add(Const(tuple(r) if isinstance(r, list) else r, v.assumed | assumed))
        if len(strings) < len(base):  # the receiver may be something else too (`None` where a plugin declines)
            out.add(Unknown(f"str.{name} of a value not a constant string"))
        return frozenset(out)

    def _constructed_contents(self, cid: str) -> frozenset:
        """What a dict subclass's instances hold, for its own ``super().__getitem__(key)``: the dicts its
        module builds instances from at the top level (transformers' ``ACT2FN = ClassInstantier(ACT2CLS)``,
        whose ``__getitem__`` instantiates the class ``ACT2CLS[key]`` names)."""
        mod, _, qual = cid.partition(":")
        m = self.module(mod)
        if m is None or "." in qual:
            return EMPTY
        out: set = set()
        for bindings in m.bindings.values():
            for b in bindings:
                v = b.value
                if b.kind == "assign" and v[:2] == ("call", ("name", qual)) and len(v[2]) == 1 and not v[3]:
                    out |= {d for d in self.eval(v[2][0], Scope(mod)) if isinstance(d, DictVal)}
        return frozenset(out)

    def iterated(self, inst: Instance, scope: Scope) -> frozenset:
        """What ``for x in inst`` binds: the iterator is ``inst.__iter__()``, each element its ``__next__()``
        (or, for an ``__iter__`` written as a generator, what it yields); without ``__iter__``, what
        ``__getitem__`` returns."""
        out: set = set()
        if (getitem := self.special_method(inst.cls, "__getitem__")) is not None and \
                self.special_method(inst.cls, "__iter__") is None:
            # the sequence protocol: `for x in view` calls view[0], view[1], ... until IndexError
            return self.call(getitem, (("const", 0),), (), scope)
        for it in _fixed(self.member(inst.cls, "__iter__", inst)):
            for r in _fixed(self.call(it, (), (), scope)):
                if isinstance(r, Instance):
                    nxt = self.member(r.cls, "__next__", r)
                    out |= frozenset().union(*(self.call(f, (), (), scope) for f in _fixed(nxt))) if nxt else EMPTY
                elif isinstance(r, SeqVal):
                    out |= r.elems
        return frozenset(out)

    def _contextmanager_yields(self, ctx, scope: Scope) -> Optional[frozenset]:
        """``with cm(args) as x``, ``cm`` a ``@contextlib.contextmanager`` function: ``x`` is what it yields."""
        if ctx[0] != "call":
            return None
        out = set()
        for c in _fixed(self.eval(ctx[1], scope)):
            if not (isinstance(c, Func) and "contextmanager" in c.flags):
                return None
            f = self.function(c.id)
            if f is None or not f.yields or scope.depth >= MAX_CALL_DEPTH:
                return None
            bindings = self.bind_args(f, c, ctx[2], ctx[3], scope)
            inner = Scope(split_id(c.id)[0], f, c.id, c.self_cls, bindings, scope.depth + 1)
            for y in f.yields:
                out |= self.eval(y, inner)
        return frozenset(out) if out else None

    def _container_view(self, base: frozenset, method: str) -> Optional[frozenset]:
        """``d.values()``, ``d.items()``, ``d.keys()`` of a dict literal, and ``blocks.values()`` /
        ``.children()`` / ``.named_children()`` of a module container (a ModuleDict or ModuleList is kept as the
        sequence of its modules); None when ``base`` holds something else (an ordinary method call)."""
        if not base or not all(isinstance(v, (SeqVal, DictVal, TupleVal)) for v in base):
            return None
        out = set()
        for v in base:
            if isinstance(v, DictVal):
                keys = frozenset(Const(k) if k is not None else Unknown("key") for k, _ in v.items)
                vals = frozenset().union(*(vs for _, vs in v.items)) if v.items else EMPTY
            else:
                keys = frozenset({Unknown("key")})
                vals = v.elems if isinstance(v, SeqVal) else (frozenset().union(*v.items) if v.items else EMPTY)
            if method in ("keys",):
                out.add(SeqVal(keys))
            elif method in ("items", "named_children", "named_modules"):
                out.add(SeqVal(frozenset({TupleVal((keys, vals))})))
            else:
                out.add(SeqVal(vals))
        return frozenset(out)

    def _subscript(self, base: frozenset, key_expr, scope: Scope) -> frozenset:
        if key_expr[:2] == _SLICE:  # `self.blocks[:-1]`: a slice of a sequence is a sequence of the same elements
            out = set()
            bounds = key_expr[2:]  # constant bounds, when the index kept them
            for v in _fixed(base):
                if isinstance(v, SeqVal) and v.items and bounds:
                    part = v.items[bounds[0]:bounds[1]]
                    out.add(SeqVal(frozenset().union(*part) if part else EMPTY, part))
                elif isinstance(v, SeqVal):
                    out.add(v)
                elif isinstance(v, TupleVal):
                    out.add(SeqVal(frozenset().union(*v.items) if v.items else EMPTY))
                else:
                    out.add(Unknown("slice"))
            return frozenset(out)
        out = set()
        key_vals = None
        for v in _fixed(base):
            if isinstance(v, DictVal):
                if key_vals is None:
                    key_vals = self.eval(key_expr, scope)
                consts = [kv.value for kv in key_vals if isinstance(kv, Const)]
                if consts and len(consts) == len(key_vals) and not assumed_in(key_vals):
                    # (a key that is a configuration default picks one entry for the default configuration
                    # only: every entry, as for a key not known)
                    hit = False
                    for kc in consts:
                        for key, vals in v.items:
                            if key == kc or key == ANY_KEY:
                                out |= vals
                                hit = True
                    if not hit:
                        out.add(Unknown("missing key"))
                else:
                    for _, vals in v.items:
                        out |= vals
            elif isinstance(v, SeqVal):
                kv = self.eval(key_expr, scope) if v.items else EMPTY
                idx = [x.value for x in kv if isinstance(x, Const) and type(x.value) is int]
                if v.items and idx and len(idx) == len(kv) and all(-len(v.items) <= i < len(v.items) for i in idx):
                    for i in idx:  # a list literal's position
                        out |= v.items[i]
                else:
                    out |= v.elems
            elif isinstance(v, TupleVal):
                kv = self.eval(key_expr, scope)
                idx = [x.value for x in kv if isinstance(x, Const) and isinstance(x.value, int)]
                if len(idx) == len(kv) and idx and all(-len(v.items) <= i < len(v.items) for i in idx):
                    for i in idx:
                        out |= v.items[i]
                else:
                    out |= frozenset().union(*v.items) if v.items else EMPTY
            elif isinstance(v, Const) and isinstance(v.value, (tuple, list, str, dict)):
                kv = self.eval(key_expr, scope)
                if len(kv) == 1 and isinstance(next(iter(kv)), Const):
                    try:
                        out.add(Const(v.value[next(iter(kv)).value], v.assumed | assumed_in(kv)))
                        continue
                    except (KeyError, IndexError, TypeError):
                        pass
                out.add(Unknown("subscript"))
            elif isinstance(v, External) and v.name == "os.environ" and self.facts and \
                    (read := self._environ_item(key_expr, scope)) is not None:
                out |= read
            elif isinstance(v, (External, Class)) or isinstance(v, ExternalInstance) and v.type.startswith("typing"):
                out.add(v)  # typing generics: List[int] -> the origin
            elif isinstance(v, Instance) and (getitem := self.special_method(v.cls, "__getitem__")) is not None:
                out |= self.call(getitem, (key_expr,), (), scope)  # `ALL_MASK_ATTENTION_FUNCTIONS[impl]`
            else:
                out.add(Unknown("subscript"))
        return frozenset(out)

    # An attribute of something outside the program (``torch.float16``, ``x.shape`` of a tensor) depends on its
    # names only (and the target architecture): worked out once per name (Program._external_attrs and
    # _external_instance_attrs), not each of the millions of times a big scan asks (py-spy, the bench site's
    # cold scan: 6.6 s of self time on the line that made an instance's attribute).
    def _external_attr(self, dotted: str, name: str) -> frozenset:
        full = model.normalize(f"{dotted}.{name}")
        if self.arch is not None and self.arch.known_attr(full):
            return frozenset({Const(self.arch.attr(full))})
        return frozenset({External(derived_name(full))})

    def _external_instance_attr(self, type_name: str, name: str) -> frozenset:
        if self.arch is not None and self.arch.known_attr(f"{type_name}.{name}"):
            return frozenset({Const(self.arch.attr(f"{type_name}.{name}"))})
        if type_name == "pathlib.Path":
            if name in ("parent",):
                return frozenset({ExternalInstance("pathlib.Path")})
            if name in ("parents",):
                return frozenset({SeqVal(frozenset({ExternalInstance("pathlib.Path")}))})
        return frozenset({External(derived_name(model.normalize(f"{type_name}.{name}")))})

    def _environ_item(self, key_expr, scope: Scope) -> Optional[frozenset]:
        """``os.environ[NAME]`` where the user's ``--env`` sets NAME (an unset one raises: no value)."""
        keys = self.eval(key_expr, scope)
        key = next(iter(keys)) if len(keys) == 1 else None
        if not isinstance(key, Const) or not isinstance(key.value, str):
            return None
        got = self.facts.env_value(key.value)
        return frozenset({Const(got)}) if isinstance(got, str) else None

    # ------------------------------------------------------------- attributes
    def attr(self, v, name: str) -> frozenset:
        if isinstance(v, Module):
            return self.resolve_global(v.name, name)
        if isinstance(v, External):
            got = self._external_attrs.get((v.name, name))
            if got is None:
                got = self._external_attrs[(v.name, name)] = self._one_set(self._external_attr(v.name, name))
            return got
        if isinstance(v, Instance):
            return self.member(v.cls, name, v)
        if isinstance(v, Class):
            return self.member(v.id, name, None)
        if isinstance(v, Super):
            mro = self.mro(v.self_cls)
            try:
                after = mro[mro.index(v.cls) + 1:]
            except ValueError:
                after = mro[1:]
            return self._member_in(after, name, Instance(v.self_cls))
        if isinstance(v, ExternalInstance):
            got = self._external_instance_attrs.get((v.type, name))
            if got is None:
                got = self._external_instance_attrs[(v.type, name)] = self._one_set(
                    self._external_instance_attr(v.type, name))
            return got
        if isinstance(v, Foreign):
            return frozenset({Foreign(v.origin, f"{v.path}.{name}" if v.path else name)})
        if isinstance(v, Namespace):
            for n, vals in v.items:
                if n == name:
                    return vals
            return frozenset({Unknown("namespace attr")})
        if isinstance(v, Op):
            return frozenset({v})
        if isinstance(v, Func):
            if name in ("__wrapped__", "__func__"):
                return frozenset({Func(v.id, v.self_cls)})
            return frozenset({Unknown("function attribute")})
        return frozenset({Unknown("attr")})
