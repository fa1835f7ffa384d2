"""Abstract values: what an expression may refer to.  The resolver (``program/``) maps an ``Expr`` to a
frozenset of these; unions are normal (``self.mlp`` may be two classes)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Func:
    """A function defined in indexed code.  ``self_cls`` is set for a method bound to an instance."""

    id: str  # "module:qualname"
    self_cls: str | None = None
    flags: frozenset = frozenset()  # cached, disabled, property, cached_property, staticmethod, classmethod, tracetime:<kind>
    wrappers: tuple = ()  # ids of decorator wrapper functions the call also runs
    # For a nested function defined while a call was being evaluated: the enclosing call's parameter
    # bindings, so `def build(): return layer_fn(...)` inside `make_layers(layer_fn)` sees the argument.
    closure: tuple = ()

    def with_flags(self, *flags: str) -> "Func":
        return Func(self.id, self.self_cls, self.flags | frozenset(flags), self.wrappers, self.closure)


@dataclass(frozen=True)
class Class:
    id: str


@dataclass(frozen=True)
class Instance:
    cls: str  # class id


@dataclass(frozen=True)
class Module:
    name: str  # an indexed module


@dataclass(frozen=True)
class External:
    """Anything outside the indexed code, by dotted name: ``subprocess.check_output``, ``pathlib.Path.exists``."""

    name: str


@dataclass(frozen=True)
class ExternalInstance:
    type: str  # "pathlib.Path", "threading.Lock", or "<callee>()" for an unknown external call's result


@dataclass(frozen=True)
class Foreign:
    """A native module loaded at run time (tvm_ffi, cpp_extension) or something reached through it."""

    origin: str
    path: str = ""


@dataclass(frozen=True)
class Op:
    """A real op: opaque to Dynamo, its body is never traced."""

    name: str


@dataclass(frozen=True)
class Const:
    value: object
    # the configuration defaults the value was computed from, when the code does not say that the object was
    # built with them (a dataclass field's default read on an instance: ``T5Config.feed_forward_proj = 'relu'``)
    # -- an assumption, shown as a condition where it decides a branch (issue [B]); not part of equality
    assumed: frozenset = field(default=frozenset(), compare=False)


def assumed_in(vals) -> frozenset:
    """The defaults the constants among ``vals`` were computed from."""
    out = frozenset()
    for v in vals:
        if type(v) is Const and v.assumed:
            out |= v.assumed
    return out


def with_assumed(c: "Const", assumed: frozenset) -> "Const":
    return Const(c.value, c.assumed | assumed) if assumed else c


@dataclass(frozen=True)
class DictVal:
    items: tuple  # ((key Const value or None, frozenset of values), ...); ANY_KEY: stored under an unknown key


@dataclass(frozen=True)
class SeqVal:
    elems: frozenset
    # the value set of each position, when the sequence is a list literal's (``[f1, f2][1]`` is f2); () when
    # the positions are not known (a comprehension, a list grown by a store at an unknown index)
    items: tuple = ()


@dataclass(frozen=True)
class TupleVal:
    """A tuple literal, positions kept: ``return modules, start, end`` unpacks by index."""

    items: tuple  # (frozenset, ...)


@dataclass(frozen=True)
class Namespace:
    """``types.SimpleNamespace(a=f, b=g)``."""

    items: tuple  # ((name, frozenset), ...)


@dataclass(frozen=True)
class Partial:
    """``functools.partial(f, *args, **kwargs)``: the bound arguments are kept as value sets."""

    target: frozenset
    args: tuple = ()  # (frozenset, ...)
    kwargs: tuple = ()  # ((name, frozenset), ...)


@dataclass(frozen=True)
class Super:
    cls: str  # the class whose MRO successor is searched
    self_cls: str


@dataclass(frozen=True)
class Unknown:
    why: str = ""


EMPTY = frozenset()
UNKNOWN = frozenset({Unknown()})


# One object per repr text: equal values made apart (a container of tensors' fakes worked out again in each
# context) each kept their own copy of the same text, up to 17 KB, 291 copies of one (the bench site: 130 MB
# of a cold scan's strings were copies).  A new Program empties it (``forget_reprs``): the texts stay with
# their values, and a warm process does not keep every scan's.
_REPR_TEXTS: dict = {}


def forget_reprs() -> None:
    _REPR_TEXTS.clear()


def _cached_repr(cls):
    """Keep each value's repr once computed: value sets are put in a fixed order by repr (``ordered``,
    ``program._fixed``) millions of times in a big scan, and the dataclass repr is slow.  Values are frozen,
    so the text cannot go stale; it is stored beside the fields, not among them (no effect on eq/hash)."""
    plain = cls.__repr__
    texts = _REPR_TEXTS

    def __repr__(self):
        d = self.__dict__
        r = d.get("_repr")
        if r is None:
            r = plain(self)
            r = d["_repr"] = texts.setdefault(r, r)
        return r

    cls.__repr__ = __repr__
    return cls


for _cls in (Func, Class, Instance, Module, External, ExternalInstance, Foreign, Op, Const, DictVal, SeqVal, TupleVal,
             Namespace, Partial, Super, Unknown):
    _cached_repr(_cls)


def ordered(values) -> list:
    """A deterministic order for a value set (reports must not depend on hash seeds)."""
    return sorted(values, key=repr)


# The key of a DictVal item stored under a key the resolver cannot tell (``d[key] = f``): any lookup may hit it.
ANY_KEY = ("<any key>",)
