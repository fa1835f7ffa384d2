"""Frozen dataclasses that are dict keys millions of times in a walk (``Node``, ``Condition``): their hash is
worked out once per instance instead of from every field at each lookup (a node's constants can hold
closures).  A profiled incremental walk of sglang + flashinfer made about 180 million hash calls, 22 s of its
279 s; the rows measured after the change cost about the same (README "Incremental rows"): the walk's
condition bookkeeping, not hashing, is its cost."""
from __future__ import annotations


class HashOnce:
    """Mixed into a frozen dataclass whose class body says ``__hash__ = HashOnce.__hash__`` (else the
    dataclass writes its own) and lists the fields its equality compares in ``_HASHED``.  The hash is kept
    in the instance's ``__dict__`` and never pickled: another process may hash strings with another seed."""

    __slots__ = ()
    _HASHED: tuple = ()

    def __hash__(self) -> int:
        d = self.__dict__
        h = d.get("_hash")
        if h is None:
            h = d["_hash"] = hash(tuple([getattr(self, f) for f in self._HASHED]))  # (frozen: not setattr)
        return h

    def __getstate__(self):
        d = self.__dict__
        if "_hash" not in d:
            return d
        d = dict(d)
        del d["_hash"]
        return d


class HashedTuple(tuple):
    """A tuple that hashes once: a walk's variant (its predicates, fullgraph) is part of the key of every
    visit's steps (``(node, variant)``), and hashing it anew at each visit was 9 % of a replayed leaf edit
    (py-spy).  Equal to, and hashed as, the plain tuple; the hash is not pickled (another process may hash
    strings with another seed)."""

    def __hash__(self) -> int:
        d = self.__dict__
        h = d.get("_hash")
        if h is None:
            h = d["_hash"] = tuple.__hash__(self)
        return h

    def __reduce__(self):
        return (HashedTuple, (tuple(self),))
