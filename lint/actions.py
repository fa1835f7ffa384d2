"""The walk's data model: a ``Node`` (a function as the walk enters it) and an ``Action`` (what one site in
its body means).  ``reach.py`` builds and walks them; ``implicit.py`` adds the actions Python performs
without a call expression."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .hashonce import HashOnce


@dataclass(frozen=True)
class Node(HashOnce):
    fid: str
    self_cls: Optional[str]
    mode: str = "trace"
    # The outermost cached loader on the way here: the fix point.  Part of the node, so a hazard reached
    # through two loaders is found once through each (fixing one loader does not fix the other).
    loader: Optional[str] = None
    # Parameters bound to constants at the call site (defaults included): Dynamo traces with the real
    # values, so `if major == 12:` and `backend_modules[backend]` are decided per call.
    consts: tuple = ()

    _HASHED = ("fid", "self_cls", "mode", "loader", "consts")
    __hash__ = HashOnce.__hash__


@dataclass(frozen=True)
class Action:
    kind: str  # enter | sink | shape | env | random | mutate | skipped | foreign | cached_property | stop | unresolved
    line: int
    col: int
    guards: tuple
    target: object = None  # Func for enter / cached_property
    rule: str = ""
    callee: str = ""
    detail: str = ""
    args: tuple = ()  # the call's argument expressions (enter actions), for constant propagation
    kwargs: tuple = ()
    # where the call's expression ends: Python calls what a line holds in the order their expressions end
    # (`gen_module(...).build_and_load()`: the generator first), so it orders two hazards on one line
    end: tuple = ()
