"""The resolver's small data: the scope an expression is evaluated in, the scan counters, and the helpers
that make value sets and bindings usable as memo keys in a fixed order."""
from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Optional

from ..summary import FunctionSummary
from .fixpoint import _NO_CUT


MAX_CALL_DEPTH = 8


@dataclass
class Scope:
    module: str
    func: Optional[FunctionSummary] = None
    func_id: Optional[str] = None
    self_cls: Optional[str] = None
    bindings: Optional[dict] = None  # param -> frozenset (a call evaluated for its value)
    depth: int = 0
    closure: Optional[dict] = None  # the enclosing function's bindings, for a nested function
    # a statement of a module's top level (the whole-program call graph): its names are bound as the lines
    # before it left them (Program.resolve_global's ``before``); None: as the module's import left them
    line: Optional[int] = None
    # the lowest index of an unfinished computation (a cycle's head, fixpoint.py) its bindings were worked out
    # from: what is worked out in it is provisional on that head.  Not part of the key.
    pending: int = _NO_CUT

    def key(self):
        """Identity of the scope for memoisation: bound values are part of it (value sets are hashable)."""
        k = self.__dict__.get("_key")
        if k is None:
            k = (self.module, self.func_id, self.self_cls, _freeze(self.bindings), _freeze(self.closure), self.line)
            k = _SCOPE_KEYS.setdefault(k, k)  # one key object per distinct scope: memo keys share it
            self.__dict__["_key"] = k
        return k


_SCOPE_KEYS: dict = {}
# one object per (name, value set) pair of the keys' bindings: a function's scopes narrowed to what each
# expression reads (EvaluatorMixin._narrowed) and the call memo's keys (calls._call_key) each sorted their
# bindings into new pairs -- on the benchmark site 1,164,993 pairs of 74,533 values at the walks' end.  The
# keys compare by value anyway (a dict's), so one pair per value changes no lookup
_BINDING_PAIRS: dict = {}
_NAME = itemgetter(0)


def _fixed(values):
    """A value set in a fixed order when the order can matter (two or more values).  The resolver's memo
    tables meet recursion in evaluation order; iterating a set in hash order made results depend on the
    hash seed (3,280 vs 3,312 findings on a whole site-packages)."""
    return values if len(values) < 2 else sorted(values, key=repr)


def _freeze(d: Optional[dict]):
    if not d:
        return None
    return sorted_pairs(d)


def sorted_pairs(d: dict) -> tuple:
    """``d``'s items in name order, each the one pair object of its value (_BINDING_PAIRS)."""
    one = _BINDING_PAIRS.setdefault
    return tuple(sorted([one(kv, kv) for kv in d.items()], key=_NAME))


@dataclass
class Stats:
    modules_indexed: int = 0
    modules_from_search_path: int = 0
    parse_errors: list = field(default_factory=list)
    cache_hits: int = 0
    # cycles of the resolver solved to their fixpoint (fixpoint.py): rounds worked out again, and heads whose
    # value still changed after MAX_ROUNDS (kept as their last round left them)
    fixpoint_rounds: int = 0
    fixpoint_unsettled: int = 0
