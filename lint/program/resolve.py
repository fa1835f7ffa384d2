"""Names: loading a module's summary, and what a name, an import or a type annotation refers to.

``ResolverMixin`` is one part of ``Program`` (``__init__.py`` holds the state it uses: ``modules``,
``_function_of``, ``_class_of``, ``_global_memo``, ``_eval_memo``, ``_active``, ``stats``...).
"""
from __future__ import annotations

from typing import Optional

from ..dynamo import model
from ..modulestub import ModuleStub, PutAside, module_info
from ..summary import FunctionSummary, ModuleSummary
from ..values import (ANY_KEY, EMPTY, Class, Const, DictVal, External, ExternalInstance, Func, Instance, Module, SeqVal,
                      Unknown)
from .locator import BUILTIN_NAMES
from .scope import Scope, _fixed


_NOT_LOADED = object()
# the generic containers whose annotation says what their elements are (``list[X]``, ``Sequence[X]``)
_SEQUENCE_TYPES = frozenset({
    "builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset", "typing.List", "typing.Tuple",
    "typing.Set", "typing.FrozenSet", "typing.Sequence", "typing.MutableSequence", "typing.Iterable",
    "typing.Iterator", "collections.abc.Sequence", "collections.abc.MutableSequence", "collections.abc.Iterable",
    "collections.abc.Iterator"})
_MAPPING_TYPES = frozenset({
    "builtins.dict", "typing.Dict", "typing.Mapping", "typing.MutableMapping", "collections.abc.Mapping",
    "collections.abc.MutableMapping", "collections.OrderedDict", "typing.OrderedDict"})


class ResolverMixin:
    """module() / function() / klass() loading; resolve_global, import_from, lookup, param_value;
    annotations (instances_of) and the spelling of a name through its imports (syntactic_name)."""

    # ------------------------------------------------------------------ modules
    def module(self, name: str) -> Optional[ModuleSummary]:
        m = self.modules.get(name, _NOT_LOADED)
        if m is not _NOT_LOADED:
            if m.__class__ is not PutAside:
                return m
            # put aside after a region search that found nothing (evict): read again, the same summary
            m = self.modules[name] = getattr(self._load_summary, "reload", self._load_summary)(
                name, m.path, m.is_package)
            return m
        loc = self.locator.find(name)
        summ = None
        if loc is not None:
            path, is_pkg = loc
            if path is None:
                summ = ModuleSummary(name=name, path="", is_package=True)
            else:
                summ = self._load_summary(name, path, is_pkg)
                self.stats.modules_indexed += 1
                if name not in self.scanned_modules:
                    self.stats.modules_from_search_path += 1
                if summ.error:
                    self.stats.parse_errors.append((str(path), summ.error))
                self.env_set.update(summ.env_keys_set)
                self.env_removed.update(summ.env_keys_removed)
        self.modules[name] = summ
        return summ

    def evict(self, name: str) -> None:
        """Put ``name``'s summary aside: a ModuleStub stands in for it in ``modules`` (what the post-walk steps
        read of a module), and ``module()`` reads it again if anything asks for more.  For a candidate file whose
        region search found nothing: on the benchmark site 2,000 of them, searched after every region was
        walked, held some 500 MB of summaries nobody read again."""
        m = self.modules.get(name)
        if m is None or isinstance(m, ModuleStub) or not m.path:
            return
        # (its stub reads the summary through module(), should a post-walk step ask it for more)
        self.modules[name] = PutAside(name, module_info(m), lambda *_: self.module(name))
        # (an id that named nothing stays None: the file is the same when read again)
        for qual, f in dict.items(m.functions):
            self._function_of.pop(f"{name}:{qual}", None)
            self._reads_memo.pop(id(f), None)  # (keyed by the function's id: another function may take it)
            self._value_reads_memo.pop(id(f), None)
        for qual in dict.keys(m.classes):
            self._class_of.pop(f"{name}:{qual}", None)

    # function() and klass() are asked millions of times on a large scan, for ~100,000 distinct ids: a module's
    # summary never changes once loaded, so each answer is kept (None too)
    def function(self, fid: str) -> Optional[FunctionSummary]:
        try:
            return self._function_of[fid]
        except KeyError:
            pass
        mod, _, qual = fid.partition(":")
        m = self.module(mod)
        f = self._function_of[fid] = m.functions.get(qual) if m else None
        return f

    def klass(self, cid: str):
        try:
            return self._class_of[cid]
        except KeyError:
            pass
        mod, _, qual = cid.partition(":")
        m = self.module(mod)
        c = self._class_of[cid] = m.classes.get(qual) if m else None
        return c

    def module_value(self, name: str) -> frozenset:
        if self.module(name) is not None:
            return frozenset({Module(name)})
        return frozenset({External(model.normalize(name))})

    # ------------------------------------------------------------- name lookup
    def resolve_global(self, mod: str, name: str, typing: bool = False, before: Optional[int] = None) -> frozenset:
        """What a module-level name may be bound to at run time (``typing=True``: as a type checker sees it,
        with ``if TYPE_CHECKING:`` imports, for annotations); ``before``: at that line of the module's top
        level, by the bindings above it."""
        return self._memoised(self._global_memo, (mod, name, typing, before), EMPTY, self._resolve_global_interned,
                              mod, name, typing, before)

    def _resolve_global_interned(self, mod: str, name: str, typing: bool, before: Optional[int]) -> frozenset:
        return self._interned(self._resolve_global(mod, name, typing, before))

    def _resolve_global(self, mod: str, name: str, typing: bool = False, before: Optional[int] = None) -> frozenset:
        m = self.module(mod)
        if m is None:
            return frozenset({External(model.normalize(f"{mod}.{name}"))})
        out = set()
        scope = Scope(mod)
        preds = {"typing.TYPE_CHECKING": True} if typing else None
        stores = m.stores.get(name, ())
        # The module's top level runs once, in order: a binding that always runs replaces what came before
        # it (`a = dec1` then `a = dec2`: a is dec2), and an item stored at the top level replaces that item
        # (`d["a"] = f2` after `d = {"a": f1}`).  A binding whose value reads the name itself
        # (`f = lru_cache(f)`) adds to the earlier ones: evaluating it meets the recursion guard.
        top_stores = [b for b in stores if b.value[2] is None]
        events = sorted([(b.line, 0, i, b) for i, b in enumerate(m.bindings.get(name, ()))]
                        + [(b.line, 1, i, b) for i, b in enumerate(top_stores)], key=lambda x: x[:3])
        for line, _, _, b in events:
            if before is not None and line >= before:
                break
            # a guard that tests the name itself (`if not X: X = ...`) is _guarded_rebinding's: asked here, it
            # would read the value being worked out (a cycle, whose rounds would see the binding undo itself)
            guards = tuple(g for g in b.guards if _own_test(g.cond, name) is None) if b.guards else ()
            if guards and not self.guards_may_hold(guards, scope, preds):
                continue
            if b.kind == "store":
                out = self._stored(out, b, mod, before is not None)
                continue
            if b.kind == "def":
                vals = {self.function_value(f"{mod}:{b.value}", scope)}
            elif b.kind == "class":
                vals = {Class(f"{mod}:{b.value}")}
            elif b.kind == "assign":  # read as the lines above it left the names (when asked at a line)
                vals = self.eval(b.value, Scope(mod, line=b.line) if before is not None else scope)
            elif b.kind == "import":
                target = b.value
                vals = self.module_value(target[0]) if target[1] is None else self.import_from(target[0], target[1])
            else:
                continue
            if b.kind == "assign" and _reads_name(b.value, name):
                out |= vals
            elif b.guards:
                out = self._guarded_rebinding(out, vals, b.guards, name, scope, preds)
            else:
                out = set(vals)
        for b in stores:  # stores in functions: may have run, in any order
            if b.value[2] is not None and self.guards_may_hold(b.guards, scope, preds):
                if not b.value[0]:  # `global name; name = v` in a function: v, besides what the top level bound
                    out |= self._stored_value(b, mod)
                else:
                    out = self._stored(out, b, mod)
        if out:
            return frozenset(out)
        # `from m import *`, in order: one that always runs replaces what an earlier one bound; one under a
        # branch (`if BACKEND == "torch": from .torch_impl import *` / `else: from .triton_impl import *`) may
        # have run, and adds to it.  So, read backwards: the guarded providers after the last unconditional one,
        # and that one -- a lazy package read as a type checker (transformers' ~450 star imports under
        # TYPE_CHECKING) stops at its provider instead of loading every module
        starred: set = set()
        for star_mod, guards in reversed(m.star_imports):
            verdicts = [self.truth(g.cond, scope, preds) for g in guards]
            if any(t is not None and t != g.polarity for t, g in zip(verdicts, guards)):
                continue  # never runs
            sm = self.module(star_mod)
            if sm is None:
                continue
            exported = sm.dunder_all if sm.dunder_all is not None else None
            if (exported is not None and name in exported) or (
                exported is None and not name.startswith("_") and (name in sm.bindings or any(True for _ in sm.star_imports))
            ):
                r = self.resolve_global(star_mod, name)
                if r and not all(isinstance(v, Unknown) for v in r):
                    starred |= r
                    if all(t == g.polarity for t, g in zip(verdicts, guards)):
                        break  # runs every time (or under TYPE_CHECKING, read as a type checker): earlier ones are replaced
        if starred:
            return frozenset(starred)
        if m.is_package:
            sub = f"{mod}.{name}"
            if self.locator.find(sub) is not None:
                return frozenset({Module(sub)})
        if name in BUILTIN_NAMES:
            return frozenset({External(f"builtins.{name}")})
        # `from ctypes import *` of a module not among the sources (the standard library without the
        # environment): a public name bound nowhere else comes from it, when it is the only such star import
        outside = [sm for sm, guards in m.star_imports if self.module(sm) is None]
        if len(outside) == 1 and not name.startswith("_"):
            return frozenset({External(model.normalize(f"{outside[0]}.{name}"))})
        if name in ("__name__", "__file__", "__doc__", "__package__", "__spec__", "__path__"):
            return frozenset({Unknown("module dunder")})
        if not typing and (getattr_fn := self._module_getattr(mod, m)) is not None:
            # PEP 562: a name the module does not bind is what its own `__getattr__(name)` returns (vLLM's
            # `current_platform`, made on first access from the detected platform's dotted path)
            got = self.call(getattr_fn, (("__value__", frozenset({Const(name)})),), (), Scope(mod))
            if got and not all(isinstance(v, Unknown) for v in got):
                return got
        if not typing and m.is_package:
            # the lazy-module idiom (transformers, diffusers: `if TYPE_CHECKING: from .moe import
            # use_experts_implementation` / `else: sys.modules[__name__] = _LazyModule(...)`): what a package
            # binds only for type checkers is what its lazy module serves at run time
            r = self.resolve_global(mod, name, typing=True)
            if r and not all(isinstance(v, Unknown) for v in r):
                return r
        return frozenset({Unknown(f"unbound name {mod}.{name}")})

    def _module_getattr(self, mod: str, m) -> Optional[Func]:
        """The module's top-level ``def __getattr__(name)``, if it has one."""
        if "__getattr__" not in m.bindings:
            return None
        for v in self.resolve_global(mod, "__getattr__"):
            if isinstance(v, Func) and v.id == f"{mod}:__getattr__":
                return v
        return None

    def _guarded_rebinding(self, before: set, vals, guards, name: str, scope: Scope, preds) -> set:
        """A top-level binding under guards.  Where each guard is decided to hold or tests the name itself,
        the binding replaces the values it runs for and keeps the others: after
        ``_USE_CUDA = env == "1"``, ``if not _USE_CUDA: try: from .kernels import k`` /
        ``except ImportError: _USE_CUDA = True`` with the import failing, ``_USE_CUDA`` is True either way
        (FlashInfer's norm).  Otherwise the binding may or may not have run: it adds to what came before."""
        own = []  # (the test as a function of the name's value, the truth the binding needs)
        for g in guards:
            test = _own_test(g.cond, name)
            if test is not None:
                own.append((test, g.polarity))
            elif self.truth(g.cond, scope, preds) is not g.polarity:
                return before | set(vals)
        if not own:
            return set(vals)
        kept = set()
        for v in before:
            runs = {test(v) == polarity for test, polarity in own} if isinstance(v, Const) else {None}
            if runs == {False}:
                kept.add(v)
            elif runs != {True}:
                return before | set(vals)
        return kept | set(vals)

    def _stored_value(self, b, mod: str) -> frozenset:
        """The value a function binds to a module-level name it declares ``global``."""
        _, value, where = b.value
        fid = f"{mod}:{where}"
        return frozenset(v for v in self.eval(value, Scope(mod, self.function(fid), fid)) if not isinstance(v, Unknown))

    def _stored(self, vals: set, b, mod: str, at_line: bool = False) -> set:
        """The values of a container after ``container[k1][k2] = value`` (a ``store`` of ModuleSummary.stores)."""
        keys, value, where = b.value
        scope = Scope(mod, line=b.line) if at_line else Scope(mod)
        if where is not None:
            fid = f"{mod}:{where}"
            scope = Scope(mod, self.function(fid), fid)
        key_vals = tuple(self.eval(k, scope) for k in keys)
        new = self.eval(value, scope)
        replace = where is None and not b.guards  # a top-level store that always runs
        return {_with_item(v, key_vals, new, replace) for v in vals}

    def import_from(self, module: str, name: str) -> frozenset:
        m = self.module(module)
        if m is None:
            return frozenset({External(model.normalize(f"{module}.{name}"))})
        if name in m.bindings or not m.is_package:
            return self.resolve_global(module, name)
        sub = f"{module}.{name}"
        if self.locator.find(sub) is not None:
            return frozenset({Module(sub)})
        return self.resolve_global(module, name)

    def lookup(self, name: str, scope: Scope) -> frozenset:
        s: Optional[Scope] = scope
        while s is not None and s.func is not None:
            f = s.func
            if name in f.params or name in f.kwonly or name == f.vararg or name == f.kwarg:
                got = self.param_value(name, s)
                if name in f.locals and got and all(isinstance(v, (Const, Func, Unknown)) for v in got):
                    # reassigned in the body (`if backend == "auto": backend = pick()`, transformers'
                    # `mask_function = and_masks(mask_function, ...)`, diffusers' `if processor is None:
                    # processor = self._default_processor_cls()`): the constant or function passed, or nothing
                    # known of it, or the value assigned -- what was passed must not hide what the body makes of it
                    got = got | self._local_value(name, s)
                return got
            if name in f.locals:
                return self._local_value(name, s)
            if f.parent is None:
                break
            parent_id = f"{s.module}:{f.parent}"
            s = Scope(s.module, self.function(parent_id), parent_id, s.self_cls, s.closure, s.depth)
        top_level = scope.line is not None and (scope.func is None or scope.func.qualname == "<module>")
        return self.resolve_global(scope.module, name, before=scope.line if top_level else None)

    def _local_value(self, name: str, s: Scope) -> frozenset:
        """Every value the function's assignments to ``name`` may give it (flow-insensitive)."""
        return self._memoised(self._eval_memo, ("local", s.key(), name), EMPTY, self._local_interned, name, s,
                              solving=False)

    def _local_interned(self, name: str, s: Scope) -> frozenset:
        return self._interned(frozenset().union(*(self.eval(e, s) for e in s.func.locals[name])))

    def param_value(self, name: str, s: Scope) -> frozenset:
        f = s.func
        if s.bindings is not None and name in s.bindings:
            return s.bindings[name]
        if f.class_name is None and name == "self" and f.params[:1] == ("self",) and s.self_cls is not None:
            # a method wrapper a decorator defines (`def wrapper(self, *args, **kwargs)` around `forward`),
            # walked with the wrapped method's class (Reach._wrapper_self)
            return frozenset({Instance(s.self_cls)})
        if f.params and name == f.params[0] and f.class_name is not None:
            owner = f"{s.module}:{f.class_name}"
            flags = getattr(self.function_value(s.func_id, s), "flags", frozenset()) if s.func_id else frozenset()
            if "staticmethod" in flags:
                pass
            elif "classmethod" in flags:
                return frozenset({Class(s.self_cls or owner)})
            else:
                return frozenset({Instance(s.self_cls or owner)})
        ann = f.annotations.get(name)
        if ann is not None:
            inst = self.instances_of(ann, Scope(s.module))
            if inst:
                return inst
        if name == f.vararg or name == f.kwarg:
            return frozenset({Unknown("varargs")})
        passed = self.argument_values.get(s.func_id, {}).get(name) if s.func_id else None
        if passed:
            return passed | {Unknown(f"parameter {name}")}
        return frozenset({Unknown(f"parameter {name}")})

    def instances_of(self, type_expr, scope: Scope) -> frozenset:
        """Values of a type annotation: ``Foo`` -> Instance(Foo); ``Optional[Foo]``, ``Foo | None``, ``"Foo"``."""
        k = type_expr[0]
        if k == "const" and isinstance(type_expr[1], str):
            name = type_expr[1].strip()
            expr = ("name", name) if "." not in name else _dotted_expr(name)
            return self.instances_of(expr, scope) if expr else EMPTY
        if k == "binop" and type_expr[1] == "BitOr":
            return self.instances_of(type_expr[2], scope) | self.instances_of(type_expr[3], scope)
        if k == "sub":
            base = self.eval(type_expr[1], scope)
            names = {v.name for v in base if isinstance(v, External)}
            inner = type_expr[2]
            items = inner[2] if inner[0] == "seq" else (inner,)
            if names & {"typing.Optional", "typing.Union"}:
                return frozenset().union(*(self.instances_of(i, scope) for i in _fixed(items)))
            if names & _SEQUENCE_TYPES:  # `layers: list[CacheLayerMixin | DummyLayer]`: a list of those
                elems = frozenset().union(*(self.instances_of(i, scope) for i in items if i != ("const", Ellipsis)))
                return frozenset({SeqVal(elems)}) if elems else EMPTY
            if names & _MAPPING_TYPES and len(items) == 2:  # `dict[str, Processor]`: values under any key
                elems = self.instances_of(items[1], scope)
                return frozenset({DictVal(((ANY_KEY, elems),))}) if elems else EMPTY
            return EMPTY
        out = set()
        for v in _fixed(self._eval_type(type_expr, scope)):
            if isinstance(v, Class):
                out.add(Instance(v.id))
            elif isinstance(v, External) and v.name not in ("builtins.None",) and not v.name.startswith("typing."):
                out.add(ExternalInstance(model.normalize(v.name)))
        return frozenset(out)

    def syntactic_name(self, e, scope: Scope) -> Optional[str]:
        """The dotted name an expression spells through its imports, without resolving into indexed code.

        ``from filelock import FileLock; FileLock(...)`` is ``filelock.FileLock`` here, whatever class the
        installed filelock binds that name to: sinks are matched on this spelling first.
        """
        if e[0] == "attr":
            base = self.syntactic_name(e[1], scope)
            return f"{base}.{e[2]}" if base else None
        if e[0] != "name":
            return None
        name = e[1]
        f = scope.func
        if f is not None:
            if name in f.params or name in f.kwonly or name in (f.vararg, f.kwarg):
                return None
            if name in f.locals:
                exprs = f.locals[name]
                if len(exprs) == 1 and exprs[0][0] == "modref":
                    return exprs[0][1]
                if len(exprs) == 1 and exprs[0][0] == "importfrom":
                    return f"{exprs[0][1]}.{exprs[0][2]}"
                return None
        m = self.module(scope.module)
        if m is None:
            return None
        bs = m.bindings.get(name, ())
        if not bs:
            return None
        b = bs[-1]
        if b.kind != "import" or any(x.kind != "import" or x.value != b.value for x in bs):
            return None
        module, attr = b.value[0], b.value[1]
        return module if attr is None else f"{module}.{attr}"

    def _eval_type(self, e, scope: Scope) -> frozenset:
        if e[0] == "name":
            return self.resolve_global(scope.module, e[1], typing=True)
        if e[0] == "attr":
            base = self._eval_type(e[1], scope)
            return frozenset().union(*(self.attr(v, e[2]) for v in _fixed(base))) if base else EMPTY
        return self.eval(e, scope)


def _dotted_expr(name: str):
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        return None
    e = ("name", parts[0])
    for p in parts[1:]:
        e = ("attr", e, p)
    return e


def _own_test(cond, name: str):
    """A guard that tests the name it guards a binding of (``if not X: X = ...``, ``if X is None: X = ...``):
    the test's truth as a function of the name's constant value; None for any other guard."""
    if cond == ("name", name):
        return lambda v: bool(v.value)
    if cond == ("not", ("name", name)):
        return lambda v: not v.value
    if cond[0] == "cmp" and cond[1] == ("name", name) and len(cond[2]) == 1 and cond[2][0][1] == ("const", None):
        op = cond[2][0][0]
        if op == "Is":
            return lambda v: v.value is None
        if op == "IsNot":
            return lambda v: v.value is not None
    return None


def _reads_name(e, name: str) -> bool:
    """Does the expression read the name (``("name", name)`` anywhere in it)?"""
    if isinstance(e, tuple):
        if len(e) == 2 and e[0] == "name" and e[1] == name:
            return True
        return any(_reads_name(x, name) for x in e)
    return False


def _with_item(v, key_vals: tuple, new: frozenset, replace: bool):
    """``v`` after ``v[k1][k2]... = new`` (the keys' value sets in order).  A dict's item under a constant key
    is replaced when ``replace`` (the store always runs), else the new values add to it; a key the resolver
    cannot tell is ANY_KEY.  A list literal's position is replaced the same way; any other store to a list
    adds to its elements and forgets the positions."""
    if not key_vals:
        return v
    if isinstance(v, Const) and isinstance(v.value, tuple):  # a list of constants, folded: its items
        v = SeqVal(frozenset(Const(x) for x in v.value), tuple(frozenset({Const(x)}) for x in v.value))
    kv, rest = key_vals[0], key_vals[1:]
    consts = [x.value for x in kv if isinstance(x, Const)]
    exact = len(consts) == 1 == len(kv)
    if isinstance(v, DictVal):
        if rest:  # d["a"]["b"] = f: into the item(s) under "a"
            return DictVal(tuple((k, frozenset(_with_item(x, rest, new, replace and exact) for x in vals))
                                 if k in consts or not consts or k == ANY_KEY else (k, vals) for k, vals in v.items))
        keys = consts if consts and len(consts) == len(kv) else [ANY_KEY]
        kept = tuple((k, vals) for k, vals in v.items if not (replace and exact and k == keys[0]))
        return DictVal(kept + tuple((k, new) for k in keys))
    if isinstance(v, SeqVal):
        if rest:
            return v
        pos = consts[0] if exact and type(consts[0]) is int else None
        if pos is not None and v.items and -len(v.items) <= pos < len(v.items):
            items = list(v.items)
            items[pos] = new if replace else items[pos] | new
            return SeqVal(frozenset().union(*items), tuple(items))
        return SeqVal(v.elems | new)
    return v
