"""A module a reused region loaded, stood in for without reading its summary: what the post-walk steps
(lint/postwalk.py, lint/coverage.py) read of it is kept in the incremental state (``IncState.modinfo``)."""
from __future__ import annotations


def module_info(m) -> tuple:
    from .coverage import _import_sites

    return (m.path, m.is_package, tuple(m.env_keys_set), tuple(m.env_keys_removed), dict(m.suppressions),
            tuple(m.file_suppressions), m.error, tuple(_import_sites(m)), decorated_functions(m))


def decorated_functions(m) -> frozenset:
    """The qualnames of ``m``'s decorated ``def``s: the only ones a decorator can make cached.  (Taken from the
    table as a dict: not a read of the scan's tracker.)"""
    return frozenset(q for q, f in dict.items(m.functions) if f.decorators)


def has_decorated_def(m, qualname: str) -> bool:
    """Is ``qualname`` a decorated ``def`` of ``m``?  A ModuleStub answers without reading its summary (engine's
    CL301 notes ask it of every function on the findings' paths)."""
    if isinstance(m, ModuleStub):
        return qualname in m.decorated
    f = m.functions.get(qualname)
    return f is not None and bool(f.decorators)


class ModuleStub:
    """A module a reused region loaded, as the post-walk steps see it (lint/engine.py: the keys the program
    sets, suppressions, coverage's imports, the decorated functions), without reading its summary; any other
    attribute reads it."""

    def __init__(self, name: str, info: tuple, load):
        self.name = name
        (self.path, self.is_package, self.env_keys_set, self.env_keys_removed, self.suppressions,
         self.file_suppressions, self.error, self.import_sites, self.decorated) = info
        self._load = load

    def __getattr__(self, attr):
        if attr.startswith("__") or attr in ("_load", "_real"):
            raise AttributeError(attr)
        real = self.__dict__.get("_real")
        if real is None:
            real = self.__dict__["_real"] = self._load(self.name, self.path, self.is_package)
        return getattr(real, attr)


class PutAside(ModuleStub):
    """A module whose summary the scan put aside (Program.evict: a candidate file whose region search found
    nothing).  ``Program.module`` reads it again when asked for it; the post-walk steps and the incremental
    state (``info``: its IncState.modinfo) take what the stub holds."""

    def __init__(self, name: str, info: tuple, load):
        super().__init__(name, info, load)
        self.info = info
