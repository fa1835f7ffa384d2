"""Conditions: the three-valued truth of an ``if`` test, and whether a binding's guards may hold.

``GuardMixin`` is one part of ``Program``.  Region predicates (``torch.compiler.is_compiling()`` inside a
region) and ``--target-arch`` facts fold conditions to constants; anything else stays unknown (None).
"""
from __future__ import annotations

from typing import Optional

from ..dynamo import model
from ..summary import is_raises
from ..values import EMPTY, Class, Const, DictVal, External, Func, Instance, Partial, TupleVal, assumed_in
from .facts import UNSET
from .locator import dotted, split_id
from .scope import MAX_CALL_DEPTH, Scope, _fixed


class GuardMixin:
    """truth (with _isinstance_truth, _call_truth, _predicate) and guards_may_hold."""

    # the configuration defaults the decisions of the truth() under way read (truth_and_assumptions)
    _assumed_log: Optional[set] = None

    # ------------------------------------------------------------ conditions
    def truth_and_assumptions(self, e, scope: Scope, predicates: Optional[dict] = None) -> tuple:
        """``truth`` and the configuration defaults its decision rests on (``Const.assumed``): a test decided
        only because a dataclass field was read at its default is decided for the default configuration, not
        for every one (``T5Config.feed_forward_proj = 'relu'``: a flan-T5 checkpoint says 'gated-gelu')."""
        outer = self._assumed_log
        log = self._assumed_log = set()
        try:
            t = self.truth(e, scope, predicates)
        finally:
            self._assumed_log = outer  # the caller notes what it keeps (a `bool` keeps its deciding operands')
        return t, frozenset(log) if t is not None else frozenset()

    def _note_assumed(self, vals) -> None:
        self._note_assumed_set(assumed_in(vals))

    def _decided(self, verdicts: set, read) -> Optional[bool]:
        """The one verdict every combination of the constants read gives (noting the defaults among them), or
        None."""
        if len(verdicts) != 1:
            return None
        t = next(iter(verdicts))
        if t is not None:
            self._note_assumed(read)
        return t

    def _note_assumed_set(self, assumed: frozenset) -> None:
        if assumed and self._assumed_log is not None:
            self._assumed_log |= assumed

    def truth(self, e, scope: Scope, predicates: Optional[dict] = None) -> Optional[bool]:
        """Three-valued truth of a condition: True, False, or None (unknown)."""
        k = e[0]
        if k == "const":
            return bool(e[1])
        if k == "not":
            t = self.truth(e[1], scope, predicates)
            return None if t is None else not t
        if k == "bool":
            # each operand with the defaults it read: the result rests on those of the operands that decide it
            # (one certainly-false operand of an `and` decides it whatever the others assumed)
            parts = [self.truth_and_assumptions(x, scope, predicates) for x in e[2]]
            vals = [t for t, _ in parts]
            short = e[1] != "and"  # the value that decides an `or` (True) or an `and` (False) at once
            deciding = [a for t, a in parts if t is short]
            if deciding:
                self._note_assumed_set(min(deciding, key=len))
                return short
            if all(v is (not short) for v in vals):
                for _, a in parts:
                    self._note_assumed_set(a)
                return not short
            return None
        if k == "raises":  # `except ImportError:` after importing these
            return True if any(self.import_fails(m) for m in e[2]) else None
        if k == "call":
            callees = self.eval(e[1], scope)
            if len(e[2]) == 2 and any(isinstance(c, External) and c.name == "builtins.isinstance" for c in callees):
                return self._isinstance_truth(e[2][0], e[2][1], scope)
            if len(e[2]) == 2 and any(isinstance(c, External) and c.name == "builtins.issubclass" for c in callees):
                return self._isinstance_truth(e[2][0], e[2][1], scope, subclass=True)
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
        if k == "name" and (local := self._local_truth(e[1], scope, predicates)) is not None:
            return local
        if k in ("name", "attr"):
            vals = self.eval(e, scope)
            if len(vals) == 1:
                v = next(iter(vals))
                if isinstance(v, Const):
                    self._note_assumed(vals)
                    return bool(v.value)
                if isinstance(v, External):
                    return self._predicate(v.name, predicates, called=False)
            elif vals and all(isinstance(v, Const) for v in vals):
                ts = {bool(v.value) for v in vals}
                if len(ts) == 1:
                    self._note_assumed(vals)
                    return ts.pop()
            return None
        if k == "cmp" and len(e[2]) == 1:
            empty = _empty_tensor_test(e)
            if empty is not None:
                return empty
            left, right = self.eval(e[1], scope), self.eval(e[2][0][1], scope)
            if left and right and len(left) * len(right) <= 16 and all(isinstance(x, Const) for x in left | right):
                # every combination of the possible constants must agree
                verdicts = {_compare(e[2][0][0], a.value, b.value) for a in left for b in right}
                return self._decided(verdicts, left | right)
            if e[2][0][0] in ("Is", "IsNot") and left and right and len(left) * len(right) <= 64 and \
                    all(isinstance(x, (Class, Const)) for x in left | right):
                # `method_cls is UnquantizedFusedMoEMethod`: a class is itself and nothing else (a constant
                # is no class); every combination must agree
                verdicts = {(a == b) == (e[2][0][0] == "Is") if isinstance(a, Class) or isinstance(b, Class)
                            else _compare(e[2][0][0], a.value, b.value) for a in left for b in right}
                return self._decided(verdicts, left | right)
            if e[2][0][0] in ("In", "NotIn") and self.facts and len(left) == 1 and \
                    right == frozenset({External("os.environ")}):
                present = self._env_present(next(iter(left)))
                if present is not None:  # `"FLASHINFER_X" in os.environ` under the user's --env facts
                    return present if e[2][0][0] == "In" else not present
            if e[2][0][0] in ("In", "NotIn") and left and all(isinstance(x, Const) for x in left) and len(right) == 1:
                keys = _literal_keys(next(iter(right)))
                if keys is not None:  # `backend in backend_modules`, a dict or tuple literal
                    verdicts = {_compare(e[2][0][0], a.value, keys) for a in left}
                    return self._decided(verdicts, left)
        return None

    def import_fails(self, module: str, _seen: Optional[set] = None) -> bool:
        """Importing ``module`` raises ImportError on the deployment: it, or a module its top level always
        imports, is one the user says is not installed (``--not-installed``).  Only a stated fact makes it
        so: a module missing from the search path may be installed where the code runs (a pre-commit hook's
        environment is not the deployment's)."""
        if not self.facts or not self.facts.not_installed:
            return False
        if self.facts.missing(module):
            return True
        seen = _seen if _seen is not None else set()
        if module in seen or len(seen) > 200:
            return False
        seen.add(module)
        m = self.module(module)
        return m is not None and any(self.import_fails(r, seen) for r in m.required_imports)

    def _env_present(self, key) -> Optional[bool]:
        if not isinstance(key, Const) or not isinstance(key.value, str):
            return None
        got = self.facts.env_value(key.value)
        return None if got is None else got is not UNSET

    def _isinstance_truth(self, obj_expr, cls_expr, scope: Scope, subclass: bool = False) -> Optional[bool]:
        """``isinstance(layer, LinearBase)`` when every value of ``layer`` is an instance of an indexed class:
        the narrowing that picks the linear method out of a quantization config's ``get_quant_method``.
        ``subclass``: ``issubclass(layer_type, RoutedExperts)`` when every value is a class (vLLM's Quark
        config dispatches on ``type(layer)``); a ``None`` among them raises there, so takes no branch."""
        objs = self.eval(obj_expr, scope)
        if subclass:
            objs = frozenset(Instance(o.id) for o in objs if isinstance(o, Class)) \
                if all(isinstance(o, Class) or o == Const(None) for o in objs) else EMPTY
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

    def _local_truth(self, name: str, scope: Scope, predicates: Optional[dict]) -> Optional[bool]:
        """Truth of a local from the truth of what is assigned to it: transformers' ``is_tracing`` returns
        ``_is_tracing = is_torchdynamo_compiling() or ...``, later ``_is_tracing |= is_fake_tensor(t)``; a
        flag that starts true stays true through ``|=`` (the assignments are seen flow-insensitively)."""
        f = scope.func
        if f is None or name not in f.locals or name in f.params or name in f.kwonly:
            return None
        key = ("local truth", name, scope.key())
        if key in self._active:
            return None
        self._active.add(key)
        try:
            exprs = f.locals[name]
            ored = [x for x in exprs if x[:3] == ("binop", "BitOr", ("name", name))]
            rest = [x for x in exprs if x not in ored]
            verdicts = {self.truth(x, scope, predicates) for x in rest}
        finally:
            self._active.discard(key)
        if verdicts == {True}:
            return True
        return False if verdicts == {False} and not ored else None

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
            verdicts, handler_verdicts = set(), set()
            guards_list = f.return_guards or tuple(() for _ in f.returns)
            computed = False  # some decided return is a predicate's value, not a bare constant
            for r, g in zip(f.returns, guards_list):
                if g and not self.guards_may_hold(g, inner, predicates):
                    continue
                t = self.truth(r, inner, predicates)
                if any(is_raises(x.cond) for x in g):
                    handler_verdicts.add(t)
                    continue
                verdicts.add(t)
                computed = computed or r[0] != "const"
                if None in verdicts or len(verdicts) > 1:
                    return None
            if len(verdicts) == 1 and computed:
                # `try: return torch.compiler.is_compiling()  except Exception: return False`
                # (transformers' is_torchdynamo_compiling): the helper is the predicate it returns; the handler
                # is for a torch without it.  A bare `return True` after `import flash_attn` is not decided so:
                # whether the import raises is the question.
                return verdicts.pop()
            verdicts |= handler_verdicts
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


def _literal_keys(v) -> Optional[frozenset]:
    """The members of a dict literal (its keys) or a tuple literal, when every one is a known constant."""
    out = []
    if isinstance(v, DictVal):
        for key, _ in v.items:
            if key is None:
                return None
            out.append(key)
    elif isinstance(v, TupleVal):
        for item in v.items:
            if len(item) != 1 or not isinstance(next(iter(item)), Const):
                return None
            out.append(next(iter(item)).value)
    else:
        return None
    try:
        return frozenset(out)
    except TypeError:
        return None


def _is_size(e) -> bool:
    """``x.shape[i]``, ``x.size(i)``, ``x.numel()``: a tensor's extent."""
    if e[0] == "sub" and e[1][0] == "attr" and e[1][2] == "shape":
        return True
    return e[0] == "call" and e[1][0] == "attr" and e[1][2] in ("size", "numel") and len(e[2]) <= 1


def _empty_tensor_test(e) -> Optional[bool]:
    """``x.shape[0] == 0`` and the like: the empty-input fast path (sglang's `if x.shape[0] == 0: return`)
    is assumed not taken.  A region is traced with the inputs it runs on, and a linter that called every
    kernel call conditional on a non-empty batch would have no certain path left.  (README: certainty.)"""
    op, right = e[2][0]
    left = e[1]
    if right == ("const", 0) and _is_size(left):
        return {"Eq": False, "NotEq": True, "Gt": True, "LtE": False}.get(op)
    if left == ("const", 0) and _is_size(right):
        return {"Eq": False, "NotEq": True, "Lt": True, "GtE": False}.get(op)
    return None
