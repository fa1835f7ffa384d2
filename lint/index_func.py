"""The index's builder of one ``FunctionSummary`` (lint/index.py): what a function's body calls, reads, returns
and binds, gathered while its statements are indexed, and its scope's names worked out only when asked for."""
from __future__ import annotations

import ast
from typing import Optional

from .summary import FunctionSummary

_NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _scope_names(body: list) -> tuple:
    """(locals, globals) of a function body: the names it binds and the names it declares ``global``, not
    counting nested scopes (a ``global`` in a nested function is that function's own).

    One pass with its own child loop: ``ast.iter_child_nodes`` (a generator per node) made this, called for
    every function, a third of the indexer's time."""
    names: set = set()
    globals_: set = set()
    stack = list(body)
    while stack:
        n = stack.pop()
        t = type(n)
        if t is ast.Name:
            if type(n.ctx) is not ast.Load:  # Store or Del
                names.add(n.id)
            continue
        if t in _NEW_SCOPES:
            names.add(n.name)
            continue
        if t is ast.Lambda or t is ast.Constant:
            continue
        if t is ast.Import or t is ast.ImportFrom:
            for a in n.names:
                names.add((a.asname or a.name).split(".")[0])
            continue
        if t is ast.Global:
            globals_.update(n.names)
            continue
        if t is ast.ExceptHandler and n.name:
            names.add(n.name)
        for field in n._fields:
            v = getattr(n, field, None)
            if type(v) is list:
                stack.extend(x for x in v if isinstance(x, ast.AST))
            elif isinstance(v, ast.AST):
                stack.append(v)
    return names, globals_


_NO_NAMES: frozenset = frozenset()


class FuncBuilder:
    """Mutable builder for one FunctionSummary.

    Its scope's names (``_scope_names``, a pass over the whole body) are worked out only when asked for: most
    functions never assign a global or call a mutating method on a name, and a file without the word
    ``global`` declares no global at all."""

    def __init__(self, summary: FunctionSummary, body: Optional[list] = None, params: frozenset = _NO_NAMES,
                 may_declare_global: bool = False):
        self.s = summary
        self._body = body
        self._params = params
        self._may_declare_global = may_declare_global
        self._scope: Optional[tuple] = None
        self.calls: list = []
        self.attrs: dict = {}
        self.effects: list = []
        self.returns: list = []
        self.return_guards: list = []
        self.yields: list = []
        self.locals: dict = {}
        # in a `__new__`: the names (`obj`, `cls._instance`) bound to the instance it makes (`super().__new__(cls)`)
        self.new_instances: set = set()

    def add_local(self, name: str, expr) -> None:
        self.locals.setdefault(name, []).append(expr)

    def _names(self) -> tuple:
        if self._scope is None:
            local, globals_ = _scope_names(self._body) if self._body else (set(), set())
            self._scope = (local | self._params, globals_)
            self._body = None
        return self._scope

    @property
    def global_names(self):
        return self._names()[1] if self._may_declare_global else _NO_NAMES

    def is_global(self, name: str) -> bool:
        if name in self._params:
            return False  # (without the body's pass: a parameter is local, declaring it global a SyntaxError)
        local, globals_ = self._names()
        return name in globals_ or name not in local

    def finish(self) -> FunctionSummary:
        s = self.s
        s.calls = tuple(self.calls)
        s.attrs = tuple(self.attrs.values())
        s.effects = tuple(self.effects)
        s.returns = tuple(self.returns)
        s.return_guards = tuple(self.return_guards)
        s.yields = tuple(self.yields)
        s.locals = {k: tuple(v) for k, v in self.locals.items()}
        return s
