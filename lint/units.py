"""``UnitTable``: what the closed units of a tracked scan read and used, held flat while the scan runs
(lint/tracking.py's Tracker fills it; lint/incremental.py makes the state's tables from it).

A tracked cold scan of the benchmark site closes some 1.4 million units, most reading one or two items and
using one or two units.  Held in dicts of tuples of ints while the walks ran, that was about 300 MB at the
walks' end (two dicts' entries, an int object per unit id and item id, a tuple per distinct value and the
table that made them one).  Here each unit's ints are a run in one ``array`` of unsigned 32-bit ints, led by
its length, and the unit's id (less the first id of the scan's units: an edit's scan numbers its units on
from the previous state's) indexes an array of where its run starts: 4 bytes per int read or used, 8 per unit
id.  A value is made a tuple when it is asked for.

Only the scan's own tables are held so: the state between runs (lint/incstate.py) keeps dicts of tuples,
which an edit's plan iterates over more than once (the users of every unit, the units reading a changed
item); iterating this table makes a tuple per unit, some ten times slower than a dict's items.
"""
from __future__ import annotations

from array import array
from typing import Iterable, Iterator

_NONE = 0  # a unit's start: not in the table (the run at 0 is never a unit's: _flat starts with a pad)
_ABSENT = object()  # (get's default, for __getitem__)


class UnitTable:
    """A mapping unit id -> tuple of ints (item ids or unit ids), both under 2**32; what ``dict`` offers the
    tracker: set (a unit set again leaves its old run in place, unused), get, membership, iteration in the
    units' order (ids ascending, not insertion order)."""

    __slots__ = ("_base", "_start", "_flat", "_len")

    def __init__(self, init=None, base: int = 0):
        self._base = base  # the first unit id it may hold
        self._start = array("I")  # unit id - base -> where its run starts in _flat (its length first), or _NONE
        self._flat = array("I", (0,))
        self._len = 0
        for u, v in (init.items() if init else ()):
            self[u] = v

    def _run(self, u: int) -> int:
        i = u - self._base
        return self._start[i] if 0 <= i < len(self._start) else _NONE

    def get(self, u: int, default=None):
        s = self._run(u)
        if s == _NONE:
            return default
        return tuple(self._flat[s + 1:s + 1 + self._flat[s]])

    def __getitem__(self, u: int) -> tuple:
        got = self.get(u, _ABSENT)
        if got is _ABSENT:
            raise KeyError(u)
        return got

    def __contains__(self, u) -> bool:
        return type(u) is int and self._run(u) != _NONE

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[int]:
        return (u for u, s in enumerate(self._start, self._base) if s != _NONE)

    def keys(self) -> Iterator[int]:
        return iter(self)

    def values(self) -> Iterator[tuple]:
        flat = self._flat
        return (tuple(flat[s + 1:s + 1 + flat[s]]) for s in self._start if s != _NONE)

    def items(self) -> Iterator[tuple]:
        flat = self._flat
        return ((u, tuple(flat[s + 1:s + 1 + flat[s]])) for u, s in enumerate(self._start, self._base)
                if s != _NONE)

    def __setitem__(self, u: int, value: Iterable[int]) -> None:
        i = u - self._base
        if i < 0:
            raise KeyError(u)
        run = array("I", value)  # (first: a value it cannot hold changes nothing)
        starts = self._start
        if i >= len(starts):
            starts.frombytes(bytes(4 * (i + 1 - len(starts))))
        if starts[i] == _NONE:
            self._len += 1
        flat = self._flat
        starts[i] = len(flat)
        flat.append(len(run))
        flat.extend(run)

    def __repr__(self) -> str:
        return f"UnitTable({dict(self.items())!r})"
