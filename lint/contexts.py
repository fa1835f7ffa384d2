"""Context caps: how many contexts a function is worked out in precisely.

The resolver works a function's return value out per binding of its arguments (``Program.call``), and the
walk enters a function once per constant context (``Reach._const_args``).  A recursion that counts
(``_format_value(v, depth + 1)``) would make new contexts without end, so each function keeps its first
``cap`` distinct contexts precise and widens every later one.  Which contexts come first is a matter of the
order of the scan: lint/tracking.py's TrackedContextCaps records that order, so that an incremental scan
answers as a full scan of the edited tree would without running again every unit that met the function.
"""
from __future__ import annotations

import dataclasses
import hashlib


class ContextCaps:
    """Per key (a function), the first ``cap`` distinct contexts met are precise; ``admit`` says whether
    ``context`` is one of them (the caller widens it if not)."""

    __slots__ = ("cap", "seen")

    def __init__(self, cap: int):
        self.cap = cap
        self.seen: dict = {}  # key -> the contexts admitted

    def admit(self, key, context) -> bool:
        seen = self.seen.get(key)
        if seen is None:
            self.seen[key] = {context}
            return True
        if context in seen:
            return True
        if len(seen) >= self.cap:
            return False
        seen.add(context)
        return True

    def clear(self) -> None:
        self.seen.clear()


# ------------------------------------------------------------------------------------------------ digests
_FIELDS: dict = {}
_SCALARS = (str, int, float, bool, bytes, complex, type(None), type(Ellipsis))


def digest(value, memo: dict) -> int:
    """A 64-bit digest of a value of the resolver (values.py's frozen dataclasses, tuples, frozensets,
    constants) that is the same in every process: ``hash`` is salted per process, and a frozenset's ``repr``
    follows its hash order.  A container's digest is worked out from its elements' (a set's sorted), so that
    the shared parts of many contexts are digested once: ``memo``, id -> (value, digest), holds them (and
    keeps them alive while it is used)."""
    t = type(value)
    if t in _SCALARS:
        return _hash(repr(value))
    got = memo.get(id(value))
    if got is not None and got[0] is value:
        return got[1]
    if t is tuple or t is list:
        text = "(" + ",".join(str(digest(e, memo)) for e in value)
    elif t is frozenset or t is set:
        text = "{" + ",".join(map(str, sorted(digest(e, memo) for e in value)))
    elif t is dict:
        text = "d" + ",".join(sorted(f"{digest(k, memo)}:{digest(v, memo)}" for k, v in value.items()))
    else:
        names = _FIELDS.get(t, _FIELDS)
        if names is _FIELDS:
            names = _FIELDS[t] = (tuple(f.name for f in dataclasses.fields(t)) if dataclasses.is_dataclass(t)
                                  else None)
        if names is None:  # (no such value is known to the resolver; its repr, which may hold an address)
            text = f"{t.__name__}:{value!r}"
        else:
            text = t.__name__ + "(" + ",".join(str(digest(getattr(value, n), memo)) for n in names)
    d = _hash(text)
    memo[id(value)] = (value, d)
    return d


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
