"""Classes: linearised bases (MRO), members looked up along them, subclasses, abstract dispatch.

``ClassMixin`` is one part of ``Program`` (``_mro_memo``, ``_subclass_memo``, ``_mention_index`` live in
``__init__.py``).  The subclass search parses only files that name a class in a base list (``locator.py``).
"""
from __future__ import annotations

from typing import Optional

from ..dynamo import model
from ..values import EMPTY, Class, Const, External, Func, Instance, Op, Partial, Unknown
from .fixpoint import _NO_CUT, MISSING
from .locator import _MentionIndex, package_index, split_id
from .scope import Scope, _fixed


# Bases that add no behaviour worth naming: a member missing from the indexed classes is unknown, not theirs.
# the abstract bases whose mixin methods call the subclass's __getitem__, and those methods
_MAPPING_ABCS = frozenset({"collections.abc.Mapping", "collections.abc.MutableMapping", "typing.Mapping",
                           "typing.MutableMapping"})
_MAPPING_MIXINS = frozenset({"get", "__contains__", "pop", "setdefault"})
_TRIVIAL_BASES = frozenset({"builtins.object", "object", "abc.ABC", "typing.Generic", "typing.Protocol",
                            "typing_extensions.Protocol", "enum.Enum", "builtins.Exception", "typing.NamedTuple",
                            "abc.ABCMeta"})


class ClassMixin:
    """subclasses / files_mentioning, mro, is_nn_module, member / _member_in (methods, properties, class and
    instance attributes), the abstract checks, and what calling an instance runs (callable_members)."""

    # ------------------------------------------------------------ hierarchy
    def subclasses(self, cid: str, limit: int = 300) -> list:
        """Indexed subclasses of a class, transitively.  Only files that mention a class's name are parsed,
        and only within the same top-level package (or the scanned code)."""
        return self._memoised(self._subclass_memo, cid, [], self._subclasses, cid, limit)

    def _subclasses(self, cid: str, limit: int) -> list:
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
        return found

    def files_mentioning(self, top: str, needle: bytes, outside_too: bool = False, in_bases: bool = False,
                         called: bool = False) -> list:
        """The .py files of package ``top`` (scanned or on the search path; ``outside_too``: and every other
        scanned file) whose text mentions the identifier ``needle`` (``in_bases``: in a class's base list;
        ``called``: as a capitalised name called), as (module, path, is_package).

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
            unscanned = self._mention_index[top] = package_index(
                [e for e in self.locator.package_files(top) if str(e[1]) not in paths])
        hits = scanned.files_with(needle, in_bases, called)
        in_top = [e[0] == top or e[0].startswith(top + ".") for e in hits]
        out = [e for e, t in zip(hits, in_top) if t] + unscanned.files_with(needle, in_bases, called)
        if outside_too:
            out += [e for e, t in zip(hits, in_top) if not t]
        return out

    def mro(self, cid: str) -> list:
        """Linearised bases: class ids of indexed classes and ``External`` names of outside ones, in Python's
        C3 order (``class D(B, C)`` with ``B(A)``, ``C(A)``: D, B, C, A -- C's methods before A's).  A
        hierarchy C3 rejects (Python raises TypeError at the ``class`` statement) keeps the depth-first order."""
        hit = self._mro_memo.get(cid, MISSING)
        if hit is not MISSING:
            return self._memo_hit(hit)
        return self._solve(self._mro_memo, cid, [cid], self._mro, cid)

    def _mro(self, cid: str) -> list:
        bases: list = []
        c = self.klass(cid)
        if c is not None:
            mod = split_id(cid)[0]
            for b in c.bases:
                for bv in _fixed(self.eval(b, Scope(mod))):
                    if isinstance(bv, Class):
                        bases.append((bv.id, self.mro(bv.id)))
                    elif isinstance(bv, External):
                        n = model.normalize(bv.name)
                        bases.append((n, [n]))
        return [cid] + (_c3_merge([m for _, m in bases] + [[b for b, _ in bases]]) or _depth_first(bases, cid))

    def is_nn_module(self, cid: str) -> bool:
        return any(model.is_nn_module_base(x) for x in self.mro(cid) if ":" not in x)

    def decorator_stores(self, cid: str) -> dict:
        """{attribute: values} a class decorator stores on the class it decorates (transformers'
        ``@use_experts_implementation``: ``experts_class.forward = forward``, a wrapper that dispatches to
        the configured experts implementation): the decorator, or a function nested in it (the decorator a
        factory returns), assigning attributes of its first parameter, bound to this class."""
        # the stored values may read the class's own members: a cycle
        return self._memoised(self._mro_memo, ("decorator stores", cid), {}, self._decorator_stores, cid)

    def _decorator_stores(self, cid: str) -> dict:
        self._decorating += 1
        try:
            return self._decorator_stores_of(cid)
        finally:
            self._decorating -= 1

    def _decorator_stores_of(self, cid: str) -> dict:
        c = self.klass(cid) if ":" in cid else None
        out: dict = {}
        mod = split_id(cid)[0]
        for d in (c.decorators if c is not None else ()):
            for fv in _fixed(self.eval(d, Scope(mod))):
                if not isinstance(fv, Func):
                    continue
                fmod, _, fqual = fv.id.partition(":")
                m = self.module(fmod)
                if m is None:
                    continue
                inner = f"{fqual}.<locals>."
                for qual in [fqual] + [q for q in m.functions if q.startswith(inner) and "." not in q[len(inner):]]:
                    fs = m.functions.get(qual)
                    if fs is None or not fs.params or not fs.param_stores:
                        continue
                    scope = Scope(fmod, fs, f"{fmod}:{qual}", None, {fs.params[0]: frozenset({Class(cid)})})
                    for param, attr, expr in fs.param_stores:
                        if param == fs.params[0]:
                            out[attr] = out.get(attr, frozenset()) | self.eval(expr, scope)
        return out

    def _decorated_members(self, cid: str) -> dict:
        """{name: values} of the members class decorators replace along ``cid``'s MRO: a class's own member
        hides what a decorator stores on a class after it in the MRO."""
        key = ("decorated members", cid)
        hit = self._mro_memo.get(key, MISSING)
        if hit is not MISSING:
            return self._memo_hit(hit)
        if self._decorating:  # asked from inside a decorator's evaluation, some stores are not known yet
            return self._decorated_members_of(cid)
        return self._solve(self._mro_memo, key, {}, self._decorated_members_of, cid)

    def _decorated_members_of(self, cid: str) -> dict:
        out: dict = {}
        hidden: set = set()
        for c_id in self.mro(cid):
            c = self.klass(c_id) if ":" in c_id else None
            if c is None:
                continue
            for name, vals in (self.decorator_stores(c_id).items() if c.decorators else ()):
                if name not in hidden and name not in out and vals:
                    out[name] = vals
            hidden |= set(c.methods) | set(c.class_attrs)
        return out

    def member(self, cid: str, name: str, inst: Optional[Instance]) -> frozenset:
        stored = self._decorated_members(cid).get(name)
        if stored:  # a decorator's store replaces the member of the class it decorates
            return frozenset(Func(v.id, inst.cls, v.flags, v.wrappers, v.closure)
                             if isinstance(v, Func) and inst is not None else v for v in stored)
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
            declared = set()  # `self.x: T` with no value: T's instances, where the stores say nothing
            outer = self._open_reads()
            for cid in mro:
                if ":" not in cid:
                    continue
                c = self.klass(cid)
                if c is None or name not in c.self_attrs:
                    continue
                mod = split_id(cid)[0]
                for expr, method_qual in c.self_attrs[name]:
                    mid = f"{mod}:{method_qual}"
                    fs = self.function(mid)
                    got = self.eval(expr, Scope(mod, fs, mid, inst.cls))
                    if expr[0] == "name" and fs is not None and expr[1] in fs.params[1:] and fs.name != "__init__":
                        # what the class passes its setter, before the parameter's declared type
                        got = self._setter_arguments(mro, method_qual, fs, expr[1], inst) or got
                    elif expr[0] == "name" and fs is not None and fs.name == "__init__":
                        got = got | self._constructor_arguments(inst.cls, mid, fs, expr[1])
                    if method_qual.endswith(".__init_subclass__") and first and first[0] == "method":
                        got = self._subclass_wrapped(first, got, inst)
                    if expr[0] == "annot":
                        declared |= got
                    else:
                        vals |= got
            read_unfinished = self._close_reads(outer) != _NO_CUT
            if read_unfinished and not vals:
                # stores with no value yet (a cycle's first round): no value, not a fallback the next
                # round's value would keep for good (the declared type, "no attribute")
                return EMPTY
            if not any(not isinstance(v, Unknown) and v != Const(None) for v in vals):
                # a declaration assigns nothing: the type is a fallback, as a return annotation is (vLLM's
                # `self.quant_method: QuantizeMethodBase` then `self.quant_method = UnquantizedLinearMethod()`:
                # the declared base would dispatch to every subclass's methods, the MoE ones too)
                vals |= declared
            if vals:
                return frozenset(vals)
        if first is None:
            ext = [x for x in mro if ":" not in x and x not in _TRIVIAL_BASES]
            if ext and inst is not None and name in _MAPPING_MIXINS and ext[0] in _MAPPING_ABCS and \
                    (getitem := self.special_method(inst.cls, "__getitem__")) is not None:
                # `Mapping.get` / `__contains__` look the key up with the subclass's own __getitem__
                # (transformers' GeneralInterface registries: `super().get(impl, default)`, `impl in self`)
                return frozenset({getitem})
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
        vals = frozenset().union(*(self.eval(x, Scope(mod)) for x in payload))
        if inst is not None and name in self.klass(cid).fields and self.has_field_defaults(inst.cls):
            vals = self._field_value(inst.cls, name, vals, f"{split_id(cid)[1]}.{name}")
        return vals | self._classmethod_stores(mro, name)

    def has_field_defaults(self, cid: str) -> bool:
        """Whether an instance of ``cid`` takes its annotated class attributes from its constructor, the class
        value being the default: a dataclass (``@dataclass``, transformers' configs through huggingface_hub's
        ``@strict``), a pydantic model, an attrs class.  ``sglang``'s ``ServerArgs.quantization: str = None`` is
        what the server was started with, not None."""
        return self._memoised(self._mro_memo, ("field defaults", cid), False, self._has_field_defaults, cid)

    def _has_field_defaults(self, cid: str) -> bool:
        return self.is_dataclass(cid) or any(x in _MODEL_BASES for x in self.mro(cid)) or self._attrs_class(cid)

    def _attrs_class(self, cid: str) -> bool:
        for c_id in self.mro(cid):
            c = self.klass(c_id) if ":" in c_id else None
            if c is None:
                continue
            for d in c.decorators:
                target = d[1] if d[0] == "call" else d
                if any(isinstance(v, External) and v.name in _ATTRS_DECORATORS
                       for v in self.eval(target, Scope(split_id(c_id)[0]))):
                    return True
        return False

    def _setter_arguments(self, mro: list, setter_qual: str, setter, param: str, inst: Instance) -> frozenset:
        """What a setter method stores (``def set_processor(self, processor): self.processor = processor``):
        the arguments the class's own methods pass it through ``self`` (diffusers' ``Attention.__init__``:
        ``processor = AttnProcessor2_0() if ... else AttnProcessor()``, then ``self.set_processor(processor)``)."""
        # a setter whose argument reads the attribute it sets: a cycle
        return self._memoised(self._mro_memo, ("setter", inst.cls, setter_qual, param), EMPTY,
                              self._setter_arguments_of, mro, setter_qual, setter, param, inst)

    def _setter_arguments_of(self, mro: list, setter_qual: str, setter, param: str, inst: Instance) -> frozenset:
        method = setter_qual.rsplit(".", 1)[-1]
        index = setter.params.index(param) - 1  # the call's positional index (after self)
        out: set = set()
        for cid in mro:
            c = self.klass(cid) if ":" in cid else None
            if c is None:
                continue
            mod = split_id(cid)[0]
            for qual in c.methods.values():
                mid = f"{mod}:{qual}"
                fs = self.function(mid)
                if fs is None or not fs.params:
                    continue
                for site in fs.calls_named(method):
                    if site.func != ("attr", ("name", fs.params[0]), method):
                        continue
                    arg = next((v for k, v in site.kwargs if k == param), None)
                    if arg is None and index < len(site.args) and site.args[index][0] != "starred":
                        arg = site.args[index]
                    if arg is not None:
                        out |= self.eval(arg, Scope(mod, fs, mid, inst.cls))
                        if arg[0] == "name" and fs.name == "__init__":
                            out |= self._constructor_arguments(inst.cls, mid, fs, arg[1])
        return frozenset(v for v in out if not isinstance(v, Unknown))

    def _constructor_arguments(self, cid: str, init_id: str, init, param: str) -> frozenset:
        """The objects (instances, classes, functions) the program's constructions ``C(...)`` of ``cid`` pass
        for a parameter of the ``__init__`` they run: diffusers' ``WanAttention(..., processor=WanAttnProcessor())``
        in WanTransformerBlock, the processor ``__init__`` gives ``self.set_processor(processor)``; SD3's
        ``Attention(..., processor=JointAttnProcessor2_0())``, though the parameter is declared ``AttnProcessor``
        (an annotation does not limit what is passed).  Flow-insensitive, as PyCG's parameters: every
        construction the program makes, found through the files that call the class's name (the class's
        package and the scanned files); constants are left out, so no branch is decided by them."""
        # an argument that reads the attribute being worked out: a cycle
        return self._memoised(self._mro_memo, ("constructed", cid, init_id, param), EMPTY,
                              self._constructor_arguments_of, cid, init_id, init, param)

    def _constructor_arguments_of(self, cid: str, init_id: str, init, param: str) -> frozenset:
        out: set = set()
        pos = init.params.index(param) - 1 if param in init.params[1:] else None  # after self
        if (pos is not None or param in init.kwonly) and self._runs_init(cid, init_id):
            for site, scope in self._constructions(cid):
                arg = next((v for k, v in site.kwargs if k == param), None)
                if arg is None and pos is not None and pos < len(site.args) and \
                        all(a[0] != "starred" for a in site.args[:pos + 1]):
                    arg = site.args[pos]
                if arg is not None:
                    out |= {v for v in self.eval(arg, scope) if isinstance(v, (Instance, Class, Func, Partial))}
        return frozenset(out)

    def _constructions(self, cid: str) -> tuple:
        """The calls ``C(...)`` of class ``cid`` the program makes, as (call site, scope): found through the
        files that call the class's name (its package's and the scanned files), each call's callee resolved."""
        # a construction whose callee is being worked out: a cycle
        return self._memoised(self._mro_memo, ("constructions", cid), (), self._constructions_of, cid)

    def _constructions_of(self, cid: str) -> tuple:
        out = []
        mod, qual = split_id(cid)
        name = qual.rsplit(".", 1)[-1]
        for mname, _, _ in self.files_mentioning(mod.split(".")[0], name.encode(),
                                                 outside_too=bool(self.scanned_modules), called=True):
            m = self.module(mname)
            for fq, fs in (m.functions.items() if m is not None else ()):
                for site in fs.calls_named(name):
                    f = site.func
                    scope = Scope(mname) if fq == "<module>" else Scope(mname, fs, f"{mname}:{fq}")
                    if Class(cid) in self.eval(f, scope):
                        out.append((site, scope))
        return tuple(out)

    def _field_value(self, inst_cls: str, name: str, default: frozenset, origin: str) -> frozenset:
        """What a field of a dataclass-like class holds on an instance: what the program's constructions pass
        by keyword (sglang's ``TopKConfig(top_k=..., use_grouped_topk=use_grouped_topk)``), and its class value
        where one omits it or none is seen -- the default, an assumption (``Const.assumed``).  A ``**kwargs``
        construction (``cls(**config_dict)``) passes the configuration the assumption speaks of: it omits."""
        key = ("field", inst_cls, name)
        hit = self._mro_memo.get(key, MISSING)
        if hit is not MISSING:
            return self._memo_hit(hit)
        # while being worked out: the default
        return self._solve(self._mro_memo, key, _as_defaults(default, origin), self._field_value_of, inst_cls,
                           name, default, origin)

    def _field_value_of(self, inst_cls: str, name: str, default: frozenset, origin: str) -> frozenset:
        passed: set = set()
        omitted = False
        sites = self._constructions(inst_cls)
        for site, scope in sites:
            arg = next((v for k, v in site.kwargs if k == name), None)
            if arg is None:
                omitted = True
            else:
                passed |= self.eval(arg, scope)
        res = frozenset(passed)
        if omitted or not sites:
            res |= _as_defaults(default, origin)
        return res

    def _runs_init(self, cid: str, init_id: str) -> bool:
        """Whether constructing ``cid`` runs ``init_id`` (the first ``__init__`` along its MRO)."""
        for c_id in self.mro(cid):
            c = self.klass(c_id) if ":" in c_id else None
            if c is not None and "__init__" in c.methods:
                return f"{split_id(c_id)[0]}:{c.methods['__init__']}" == init_id
        return False

    def _classmethod_stores(self, mro: list, name: str) -> frozenset:
        """What ``cls.name = value`` in a classmethod stores: the class attribute changes when it runs (the
        singleton ``if cls._instance is None: cls._instance = AutoTuner()`` -- FlashInfer's AutoTuner.get),
        so the class-level default is one of its values, not the only one."""
        out = set()
        for cid in mro:
            c = self.klass(cid) if ":" in cid else None
            if c is None or name not in c.self_attrs:
                continue
            mod = split_id(cid)[0]
            for expr, method_qual in c.self_attrs[name]:
                mid = f"{mod}:{method_qual}"
                f = self.function(mid)
                if f is not None and ("name", "classmethod") in f.decorators:
                    out |= self.eval(expr, Scope(mod, f, mid, cid))
        return frozenset(out)

    def _subclass_wrapped(self, first: tuple, got: frozenset, inst: Instance) -> frozenset:
        """``cls.forward = wrapper`` in a base's ``__init_subclass__`` (transformers' GradientCheckpointingLayer):
        every subclass's own ``forward`` is wrapped when the class is defined, and the wrapper calls it (its
        closure ``forward = cls.forward``).  Calling it runs the wrapper and the subclass's method."""
        _, cid, qual = first
        fv = self.function_value(f"{split_id(cid)[0]}:{qual}", Scope(split_id(cid)[0]))
        if not isinstance(fv, Func):
            return got
        wrappers = tuple(g.id for g in got if isinstance(g, Func) and g.id != fv.id)
        if not wrappers:
            return got
        return frozenset({Func(fv.id, inst.cls, fv.flags, fv.wrappers + wrappers)})

    def special_method(self, cid: str, name: str) -> Optional[Func]:
        """The ``name`` dunder Python calls implicitly on an instance of ``cid`` (``__getattribute__`` on every
        attribute read, ``__getitem__`` on ``x[k]``, ``__post_init__`` from a dataclass's ``__init__``),
        bound to ``cid``: the first scanned class of the MRO that defines it; None when none does (the
        external bases' own are opaque and run nothing we index)."""
        return self._memoised(self._mro_memo, ("special", cid, name), None, self._special_method_of, cid, name)

    def _special_method_of(self, cid: str, name: str) -> Optional[Func]:
        found = None
        for c_id in self.mro(cid):
            c = self.klass(c_id) if ":" in c_id else None
            if c is None or name not in c.methods:
                continue
            mod = split_id(c_id)[0]
            fv = self.function_value(f"{mod}:{c.methods[name]}", Scope(mod))
            if isinstance(fv, Func) and "staticmethod" not in fv.flags:
                f = self.function(fv.id)
                if f is not None and not f.is_stub:
                    found = Func(fv.id, cid, fv.flags, fv.wrappers)
            break
        return found

    def metaclass(self, cid: str) -> Optional[str]:
        """The scanned metaclass of ``cid``: the first ``metaclass=`` of its MRO (a metaclass is inherited)."""
        for c_id in self.mro(cid):
            c = self.klass(c_id) if ":" in c_id else None
            if c is None or c.metaclass is None:
                continue
            for v in _fixed(self.eval(c.metaclass, Scope(split_id(c_id)[0]))):
                if isinstance(v, Class):
                    return v.id
            return None
        return None

    def is_dataclass(self, cid: str) -> bool:
        """Whether ``cid``'s ``__init__`` is the one ``@dataclass`` generates: a class of its MRO decorated with
        ``dataclasses.dataclass`` (bare or called) comes before any that writes an ``__init__`` of its own
        (transformers' ``BaseModelOutputWithPast`` over ``ModelOutput.__init__``)."""
        for c_id in self.mro(cid):
            c = self.klass(c_id) if ":" in c_id else None
            if c is None:
                continue
            if "__init__" in c.methods:
                return False
            mod = split_id(c_id)[0]
            for d in c.decorators:
                target = d[1] if d[0] == "call" else d
                if any(isinstance(v, External) and v.name == "dataclasses.dataclass"
                       for v in self.eval(target, Scope(mod))):
                    return True
        return False

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


# bases and decorators whose classes build instances from their annotated class attributes (has_field_defaults)
_MODEL_BASES = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic_settings.BaseSettings",
                          "msgspec.Struct"})
_ATTRS_DECORATORS = frozenset({"attr.s", "attr.attrs", "attr.define", "attr.frozen", "attr.mutable",
                               "attrs.define", "attrs.frozen", "attrs.mutable"})


def _as_defaults(vals: frozenset, origin: str) -> frozenset:
    """A field's class value read on an instance: its constants are the default configuration's, an
    assumption (``Const.assumed``) that a test deciding on them names."""
    return frozenset(Const(v.value, v.assumed | {f"{origin} = {v.value!r}"}) if type(v) is Const else v for v in vals)


def _c3_merge(seqs: list) -> list:
    """C3's merge of the bases' linearisations and the base list; [] when there is none (an inconsistent
    hierarchy)."""
    seqs = [list(q) for q in seqs if q]
    out: list = []
    while seqs:
        for q in seqs:
            head = q[0]
            if not any(head in other[1:] for other in seqs):
                break
        else:
            return []
        out.append(head)
        seqs = [[x for x in q if x != head] for q in seqs]
        seqs = [q for q in seqs if q]
    return out


def _depth_first(bases: list, cid: str) -> list:
    out: list = []
    for _, m in bases:
        for x in m:
            if x not in out and x != cid:
                out.append(x)
    return out
