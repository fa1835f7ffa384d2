"""Library mode's regions: the package's API as its users call it, each a fullgraph region.

Public = what the package's ``__init__`` exports (``__all__``, else its non-underscore names), and the public
names of the submodules it imports them from (``flashinfer.norm`` when ``flashinfer/__init__.py`` says
``from .norm import rmsnorm``).  Of those:

- a function is an API, named where it is defined (``flashinfer.norm.rmsnorm``), once, whatever its aliases;
- a class gives one API per public method and property, its inherited ones of the package included, named by
  the exported class (``flashinfer.gemm.gemm_base.SegmentGEMMWrapper.run``) and walked with ``self`` an
  instance of it: its attributes are what its ``__init__`` (and its other methods) assign;
- a ``functools.partial`` is an API named where it is bound (``flashinfer.fused_moe.cutlass_fused_moe_fp8 =
  partial(cutlass_fused_moe, ...)``): its target, with the constant arguments the partial binds.
"""
from __future__ import annotations

from .program import Program, Scope, dotted, split_id
from .regions import Region
from .values import Class, Const, Func, Partial, ordered

# dunder methods users call through syntax, which are part of the API as much as a named method
_CALLABLE_DUNDERS = ("__call__",)


class PublicApi:
    """The regions of one package (``regions()``), built once."""

    def __init__(self, program: Program, package: str):
        self.p = program
        self.package = package
        self.out: list = []
        self.seen: set = set()

    def regions(self) -> list:
        m = self.p.module(self.package)
        if m is None:
            return []
        names = m.dunder_all if m.dunder_all is not None else [n for n in m.bindings if not n.startswith("_")]
        surfaced = set()
        for n in names:
            self.add(self.p.resolve_global(self.package, n), self.package, n)
            for b in m.bindings.get(n, ()):
                if b.kind == "import" and b.value[0].startswith(self.package + "."):
                    surfaced.add(b.value[0])
        for mname in sorted(surfaced):
            if any(part.startswith("_") for part in mname.split(".")):
                continue
            sm = self.p.module(mname)
            if sm is None or sm.error:
                continue
            public = sm.dunder_all if sm.dunder_all is not None else [n for n in sm.bindings if not n.startswith("_")]
            for n in public:
                if any(b.kind in ("def", "class") for b in sm.bindings.get(n, ())):
                    self.add(self.p.resolve_global(mname, n), mname, n)
        return self.out

    def _inside(self, vid: str) -> bool:
        mod = split_id(vid)[0]
        return mod == self.package or mod.startswith(self.package + ".")

    def add(self, values, module: str, name: str) -> None:
        for v in ordered(values):
            if isinstance(v, Func):
                self.add_function(v)
            elif isinstance(v, Class) and self._inside(v.id):
                self.add_class(v.id)
            elif isinstance(v, Partial):
                self.add_partial(v, self._bound_where(module, name))

    def _bound_where(self, module: str, name: str) -> str:
        """``module.name`` followed through ``from .x import name`` to where the name is assigned."""
        for _ in range(8):  # re-export chains are short; a cycle ends here
            m = self.p.module(module)
            imports = [b for b in (m.bindings.get(name, ()) if m else ()) if b.kind == "import"]
            if len(imports) != 1 or imports[0].value[1] is None:
                break
            module, name = imports[0].value[0], imports[0].value[1]
        return f"{module}.{name}"

    def add_function(self, v: Func) -> None:
        if "op" in v.flags or not self._inside(v.id) or v.id in self.seen:
            return
        f = self.p.function(v.id)
        if f is None or f.class_name is not None or f.parent is not None:
            return
        self.seen.add(v.id)
        self._region(v.id, f.line, dotted(v.id), [(v.id, None)])

    def add_class(self, cid: str) -> None:
        """Each public method / property of the class, its package bases' included (the nearest definition)."""
        if cid in self.seen:
            return
        self.seen.add(cid)
        taken = set()
        for base in self.p.mro(cid):
            c = self.p.klass(base) if ":" in base else None
            if c is None:
                continue
            for name, qual in c.methods.items():
                if name in taken or name.startswith("_") and name not in _CALLABLE_DUNDERS:
                    continue
                taken.add(name)  # a subclass's definition hides the base's
                if not self._inside(base):
                    continue
                fid = f"{split_id(base)[0]}:{qual}"
                fv = self.p.function_value(fid, Scope(split_id(base)[0]))
                f = self.p.function(fid)
                if not isinstance(fv, Func) or "op" in fv.flags or f is None or f.is_stub:
                    continue
                self._region(fid, f.line, f"{dotted(cid)}.{name}", [(fid, None if "staticmethod" in fv.flags else cid)])

    def add_partial(self, v: Partial, api: str) -> None:
        if api in self.seen:
            return
        targets = [t for t in ordered(v.target) if isinstance(t, Func) and self._inside(t.id)]
        if len(targets) != 1:
            return
        t = targets[0]
        f = self.p.function(t.id)
        if f is None:
            return
        self.seen.add(api)
        params = list(f.params[1:] if t.self_cls and f.params else f.params) + list(f.kwonly)
        bound = []
        for i, vals in enumerate(v.args):
            if i < len(params) and (c := _constant(vals)) is not None:
                bound.append((params[i], c))
        bound += [(k, c) for k, vals in v.kwargs if k is not None and (c := _constant(vals)) is not None]
        self._region(t.id, f.line, api, [(t.id, t.self_cls)], tuple(sorted(bound)))

    def _region(self, fid: str, line: int, api: str, entries: list, bound: tuple = ()) -> None:
        m = self.p.module(split_id(fid)[0])
        self.out.append(Region(m.path if m else "", line, api, "public-api", True, entries, bound=bound))


def _constant(vals) -> tuple | None:
    """A partial's bound argument as a walk constant: one simple Python value."""
    if len(vals) == 1 and isinstance(c := next(iter(vals)), Const) and \
            (c.value is None or isinstance(c.value, (bool, int, float, str))):
        return (c.value,)
    return None


def public_api(program: Program, package: str) -> list:
    return PublicApi(program, package).regions()
