"""The calls Python makes without a call expression at the site, as walk actions.

An attribute read runs the class's ``__getattribute__`` (transformers' ``PreTrainedConfig`` defines one, so
every ``config.x`` runs it), and ``__getattr__`` where the attribute is not found the ordinary way (an
``nn.Module``'s submodules live in ``_modules``: ``self.pos_embed`` runs diffusers' ``ModelMixin.__getattr__``);
``getattr`` / ``hasattr`` are attribute reads too, with their property getters.  ``x[k]`` runs
``__getitem__`` (``k in x`` its ``__contains__``; and a store ``x[k] = v`` / ``x.a = v`` or ``setattr`` its ``__setitem__`` /
``__setattr__``); ``for v in x`` runs ``__iter__`` (or ``__getitem__``); ``len(x)`` runs ``__len__``;
constructing a ``@dataclass`` runs the ``__init__`` it generated, which assigns every field through
``__setattr__`` and calls ``__post_init__`` (transformers' ``ModelOutput``); ``F.apply(x)`` on a
``torch.autograd.Function`` subclass runs ``F.forward``, and Dynamo traces ``F.backward`` too.  Only methods of
scanned classes are entered: an external base's own are opaque.

``ImplicitCallsMixin`` is one part of ``Reach`` (``self.p`` is the Program); it keeps no state.
"""
from __future__ import annotations

from typing import Optional

from .actions import Action
from .dynamo import model
from .program import Scope, dotted
from .summary import AttrLoad
from .values import Class, Const, External, Func, Instance, ordered

# the ``detail`` of an enter action Python performs implicitly: the site's arguments are not its arguments
IMPLICIT = "implicit"
# what the builtins that read an attribute are called
_ATTRIBUTE_BUILTINS = ("builtins.getattr", "builtins.hasattr")


class ImplicitCallsMixin:
    def _enter_special(self, inst: Instance, name: str, at: tuple) -> list:
        fn = self.p.special_method(inst.cls, name)
        if fn is None:
            return []
        return [Action("enter", *at, target=fn, callee=dotted(fn.id), detail=IMPLICIT)]

    def _attribute_read_actions(self, base_vals, attr: Optional[str], at: tuple) -> list:
        """``base.attr`` read on an instance: ``__getattribute__`` first, ``__getattr__`` when the attribute is
        not found on the class or the instance (``attr`` None: a computed name, which may be either)."""
        out = []
        for inst in ordered(base_vals):
            if not isinstance(inst, Instance):
                continue
            out += self._enter_special(inst, "__getattribute__", at)
            if attr is None or self._reaches_getattr(inst.cls, attr):
                out += self._enter_special(inst, "__getattr__", at)
        return out

    def _reaches_getattr(self, cid: str, attr: str) -> bool:
        """Whether reading ``attr`` falls through to ``__getattr__``: nothing in the scanned classes defines it,
        or it is an ``nn.Module``'s submodule (``Module.__setattr__`` keeps those in ``_modules``, not in the
        instance's ``__dict__``)."""
        if self.p.special_method(cid, "__getattr__") is None:
            return False
        stored = False
        for c_id in self.p.mro(cid):
            c = self.p.klass(c_id) if ":" in c_id else None
            if c is None:
                continue
            if attr in c.methods or attr in c.class_attrs:
                return False
            stored = stored or attr in c.self_attrs
        if not stored:
            return True
        if not self.p.is_nn_module(cid):
            return False
        vals = self.p.member(cid, attr, Instance(cid))
        return any(isinstance(v, Instance) and self.p.is_nn_module(v.cls) for v in vals)

    def _attribute_builtin_actions(self, site, scope: Scope) -> list:
        """``getattr(obj, "name"[, default])`` / ``hasattr(obj, "name")``: the read, as ``obj.name`` would be
        (property getters included); a computed name runs the dunders only."""
        if not site.args:
            return []
        at = (site.line, site.col, site.guards)
        attr = None
        if len(site.args) > 1:
            names = self.p.eval(site.args[1], scope)
            if len(names) == 1 and isinstance(c := next(iter(names)), Const) and isinstance(c.value, str):
                attr = c.value
        out = []
        if attr is not None:
            out += self._attr_actions(AttrLoad(site.args[0], attr, site.line, site.col, site.guards), scope)
        else:
            out += self._attribute_read_actions(self.p.eval(site.args[0], scope), None, at)
        return out

    def _builtin_call_actions(self, name: str, site, scope: Scope) -> list:
        """The dunders a builtin call runs on its argument."""
        if name in _ATTRIBUTE_BUILTINS:
            return self._attribute_builtin_actions(site, scope)
        if name == "builtins.setattr" and site.args:
            return self._dunder_actions(site.args[0], "__setattr__", (site.line, site.col, site.guards), scope)
        if name == "builtins.len" and len(site.args) == 1:
            return self._dunder_actions(site.args[0], "__len__", (site.line, site.col, site.guards), scope)
        return []

    def _dunder_actions(self, target, dunder: str, at: tuple, scope: Scope) -> list:
        """The ``dunder`` Python calls on each instance ``target`` may be: ``__getitem__`` for ``target[k]``,
        ``__setitem__`` / ``__setattr__`` for ``target[k] = v`` / ``target.a = v``, ``__len__`` for
        ``len(target)``."""
        return [a for v in ordered(self.p.eval(target, scope)) if isinstance(v, Instance)
                for a in self._enter_special(v, dunder, at)]

    def _membership_actions(self, container_vals, at: tuple) -> list:
        """``key in obj``: ``obj.__contains__`` (a Mapping subclass's comes from the ABC and calls its
        ``__getitem__``: ``Program.member`` resolves it so)."""
        out = []
        for v in ordered(container_vals):
            if isinstance(v, Instance):
                out += [Action("enter", *at, target=fn, callee=dotted(fn.id), detail=IMPLICIT)
                        for fn in ordered(self.p.member(v.cls, "__contains__", v)) if isinstance(fn, Func)]
        return out

    def _iteration_actions(self, iterable, at: tuple, scope: Scope) -> list:
        """``for x in obj``: ``obj.__iter__()`` and the iterator's ``__next__``; an object without ``__iter__``
        is iterated through ``__getitem__`` (the sequence protocol: transformers' ``_PerLayerConfigView``)."""
        out = []
        for v in ordered(self.p.eval(iterable, scope)):
            if not isinstance(v, Instance):
                continue
            it = self._enter_special(v, "__iter__", at)
            if not it:
                out += self._enter_special(v, "__getitem__", at)
                continue
            out += it
            for r in ordered(self.p.call(it[0].target, (), (), scope)):
                if isinstance(r, Instance):
                    out += self._enter_special(r, "__next__", at)
        return out

    def _subclass_callback_actions(self, vals, site, scope: Scope) -> list:
        """``GeLUFunction.apply(x)`` on a ``torch.autograd.Function`` subclass: torch's ``apply`` runs the
        class's own ``forward`` (and ``setup_context``), and Dynamo traces its ``backward`` with it
        (``model.SUBCLASS_CALLBACKS``).  The methods the scanned class defines are entered."""
        if site.func[0] != "attr":
            return []
        names = sorted({model.normalize(v.name) for v in vals if isinstance(v, External)})
        methods = [m for n in names for m in model.SUBCLASS_CALLBACKS.get(n, ())]
        if not methods:
            return []
        at = (site.line, site.col, site.guards)
        out = []
        for owner in ordered(self.p.eval(site.func[1], scope)):
            cid = owner.id if isinstance(owner, Class) else owner.cls if isinstance(owner, Instance) else None
            for m in (methods if cid is not None else ()):
                out += [Action("enter", *at, target=fn, callee=dotted(fn.id), detail=IMPLICIT)
                        for fn in ordered(self.p.member(cid, m, None)) if isinstance(fn, Func)]
        return out

    def _dataclass_init_actions(self, cid: str, at: tuple) -> list:
        """Constructing a ``@dataclass``: its generated ``__init__`` assigns each field (through a scanned
        ``__setattr__``) and then calls ``__post_init__``."""
        if not self.p.is_dataclass(cid):
            return []
        inst = Instance(cid)
        return (self._metaclass_init_wrappers(cid, at) + self._enter_special(inst, "__setattr__", at)
                + self._enter_special(inst, "__post_init__", at))

    def _metaclass_init_wrappers(self, cid: str, at: tuple) -> list:
        """``@dataclass`` installs the generated ``__init__`` with ``setattr(cls, "__init__", fn)``, which runs
        the metaclass's ``__setattr__``; one that wraps the value (transformers' ``_BCCacheNameMeta``, for every
        ``ModelOutput``: ``def __init__(self, *args, **kwargs): _rename_kwargs_for_bc(kwargs); init(...)``)
        installs a function it defines itself -- the only way such a function leaves the method -- and that
        wrapper is what calling the class runs."""
        meta = self.p.metaclass(cid)
        hook = self.p.special_method(meta, "__setattr__") if meta else None
        fs = self.p.function(hook.id) if hook is not None else None
        if fs is None:
            return []
        mod = hook.id.partition(":")[0]
        out = []
        for exprs in fs.locals.values():
            for e in exprs:
                fid = f"{mod}:{e[1]}" if e[:1] == ("func",) else None
                if fid is not None and self.p.function(fid) is not None:
                    out.append(Action("enter", *at, target=Func(fid, cid), callee=dotted(fid), detail=IMPLICIT))
        return out


def builtin_name(v) -> Optional[str]:
    """The normalised name of an external builtin value, or None."""
    name = getattr(v, "name", None)
    return model.normalize(name) if isinstance(name, str) and name.startswith("builtins.") else None
