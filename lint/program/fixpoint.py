"""Cycles of the resolver through calls, globals, classes and expressions, solved to their least fixpoint.

A value of the resolver may depend on itself: ``f`` returns ``g()``, which returns ``f()``; a field of a config
class is what its constructions pass, which reads the field.  The resolver used to cut such a recursion where
it was met, with an empty value, and memoise every entry worked out meanwhile.  Entering the cycle at ``f``
then memoised ``g`` as ``g`` with ``f`` empty, and entering it at ``g`` another value: which region met the
cycle first decided what every other region saw.  A full scan and an incremental one (which walks some regions
again in a fresh program) could then disagree (README, "Incremental analysis"), and a value worked out with
half the cycle missing could decide a guard the program does not decide (an error that is not certain).

Every memoised computation of ``Program`` runs through ``_solve``:

- While it runs, its memo entry holds a ``_Busy`` marker with its index on the stack of computations under
  way.  Meeting the marker is a *cut*: it gives the value worked out so far (the site's start value in the
  first round, EMPTY for a value set) and notes that the reader depends on that index (``_low``, the lowest
  index of an unfinished computation the current one read).
- A computation that was cut (the *head* of a cycle) is worked out again, with the cuts giving its last
  round's value, until a round gives the value the round before it gave: the least fixpoint of the cycle's
  equations, the same whichever of its members was entered first.  A member of a cycle whose head is below
  it has no rounds of its own (nested rounds multiply): it is worked out again in the head's next round, its
  cuts giving its last value (``_seeds``), and the head goes on while any member changed.  After
  ``MAX_ROUNDS`` rounds the head and its members keep what the last round gave (``Stats.fixpoint_unsettled``,
  the scan's ``cycles_unsettled``).  The values a cycle feeds back are bounded (widening.py: a name derived
  from an external object, a container's nesting), so that its rounds reach a value the round before gave;
  without the bounds some grew without end (``self.keys = self.keys.to(...)``: ``torch.tensor().to().to()...``).
- An entry worked out while a head below it was unfinished (its ``_low`` below its own index) is
  *provisional*: it is memoised as ``_Provisional`` (a reader of it depends on that head too), dropped when
  the head starts another round, and made final, as it is, when the head settles: it was worked out in the
  head's last round, from the head's final value.  An entry that met no unfinished computation is final at
  once.  A call whose arguments were worked out from an unfinished value is provisional on it too, with what
  is worked out in its scope (``Scope.pending``, ``floor``): each round asks with other arguments, and the
  rounds' entries, kept, ran the bench site's full scan out of memory.
- A value that depends on no value yet is no value: a call whose argument is empty in a round gives nothing
  (not its return annotation's fallback), an attribute whose stores give nothing yet is empty (not its
  declared type, nor "no attribute"), and a round's argument context is not one of the function's first
  contexts (``ContextCaps``).  A fallback taken in the first round would feed the next round and stay for
  good: which member was entered first decided whether it was there.

An expression's own cycle (``self.hf_config = draft(self.hf_config)``, sglang's ``ModelConfig``) is solved
like any other (session 29: the cut it used to have gave ``hf_config`` 3 or 88 values whichever attribute
was asked first, and moved the context caps of 17-35 functions after an edit of the bench site).  A local's
own cycle (``hidden_states = layer(hidden_states)``: ``solving=False``) is cut as it always was: its cut
gives EMPTY for good and its reader does not depend on it.  Solved too, these were 13,526 of the real-code
suite's 16,475 cycles, and with the expressions' the bench site's full scan did not end in 7 minutes (session
28, before the bounds).  A value outside every computation (the reach walk's, a rule's) is always final: the
stack is empty there.  What still depends on the order of evaluation: those cuts, the unsettled cycles, the
call depth bound (``MAX_CALL_DEPTH``: a call's value is memoised at the depth first asked), the truth guards
(``GuardMixin``: a cut truth is undecided), abstract dispatch's guard, and which contexts of a function are
precise (``ContextCaps``: the first ones met).
"""
from __future__ import annotations

MAX_ROUNDS = 6
_NO_CUT = 1 << 62  # ``_low`` when nothing unfinished was read (and ``Scope.pending``'s default)
MISSING = object()  # a memo table's answer for a key it does not hold


class _Busy:
    """The memo entry of a computation under way: its index on the stack, the value its cuts give, and
    whether a cut met it in this round."""

    __slots__ = ("index", "value", "cut", "solving")

    def __init__(self, index: int, value, solving: bool):
        self.index, self.value, self.cut, self.solving = index, value, False, solving


class _Provisional:
    """A memo entry worked out from an unfinished computation's value so far: ``head``, the lowest index of
    an unfinished computation it depends on."""

    __slots__ = ("value", "head")

    def __init__(self, value, head: int):
        self.value, self.head = value, head


def settled(v) -> bool:
    """Whether a memo table's stored value is a final one (not a computation under way, nor provisional)."""
    t = type(v)
    return t is not _Busy and t is not _Provisional


def _set_keeping_tag(memo, key, value) -> None:
    """Store ``value`` for ``key``, keeping the unit a tracked memo table (lint/tracking.py) tagged it with:
    the unit that worked the provisional value out, not the one that happened to settle its head."""
    keep = getattr(memo, "set_keeping_tag", None)
    if keep is None:
        memo[key] = value
    else:
        keep(key, value)


class FixpointMixin:
    """``_solve`` (a memoised computation, rounds and all), ``_memo_hit`` (a stored value, cuts and provisional
    entries accounted), and the bookkeeping of provisional entries.  The state lives on ``Program``
    (``reset_fixpoint``): ``_depth`` (computations under way), ``_low``, ``_provisional`` (head index -> its
    entries), ``_seeds`` / ``_seed_log`` (members' last values) and ``_changes``."""

    def _memo_hit(self, v):
        """The value a memo entry gives its reader: a cut's value so far, or a provisional entry's value
        (the reader then depends on the unfinished computations it does)."""
        t = type(v)
        if t is _Busy:
            if not v.solving:  # an expression's or a local's own cycle: cut, as it always was
                return v.value
            v.cut = True
            if v.index < self._low:
                self._low = v.index
            return v.value
        if t is _Provisional:
            if v.head < self._low:
                self._low = v.head
            return v.value
        return v

    def _met_unfinished(self) -> bool:
        """Whether the computation under way read an unfinished value (a cut, a provisional entry) so far."""
        return self._low != _NO_CUT

    def _open_reads(self) -> int:
        """Start noting what a part of the computation under way reads; give ``_close_reads`` the result."""
        outer = self._low
        self._low = _NO_CUT
        return outer

    def _close_reads(self, outer: int) -> int:
        """The lowest unfinished computation the part since ``_open_reads`` read (``_NO_CUT``: none); the
        computation under way depends on it as well."""
        low = self._low
        if outer < low:
            self._low = outer
        return low

    def _memoised(self, memo, key, start, compute, *args, solving: bool = True):
        """``memo[key]``, worked out by ``compute(*args)`` if it is not there (``start``: what a cut gives in
        the first round)."""
        v = memo.get(key, MISSING)
        if v is not MISSING:
            return v if v.__class__ is frozenset else self._memo_hit(v)  # a final value set: the common case
        return self._solve(memo, key, start, compute, *args, solving=solving)

    def _solve(self, memo, key, start, compute, *args, solving: bool = True, floor: int = _NO_CUT):
        """Work out ``compute(*args)`` as ``memo[key]`` (not there yet), to its fixpoint if it is cut
        (``solving``; else a cut gives ``start`` for good, and the reader does not depend on it).  ``floor``:
        the head its arguments depend on (``Scope.pending``): the entry is provisional on it from the start."""
        i = self._depth
        self._depth = i + 1
        seeds = self._seeds
        seed_key = None
        if seeds:  # a member of a cycle under way, worked out again in its head's next round: from its last value
            seed_key = (id(memo), key)
            start = seeds.get(seed_key, start)
        busy = _Busy(i, start, solving)
        memo[key] = busy
        outer_low = self._low
        changes = self._changes
        n_seeds = len(self._seed_log)
        rounds = 0
        try:
            while True:
                self._low = floor
                res = compute(*args)
                if self._low < i:
                    # a member of a cycle whose head is below: that head's rounds work it out again, from this
                    # value where it was cut (no rounds of its own: nested rounds would multiply)
                    if busy.cut and res != busy.value:
                        if seed_key is None:
                            seed_key = (id(memo), key)
                        if seed_key not in seeds:
                            self._seed_log.append(seed_key)
                        seeds[seed_key] = res
                        self._changes += 1
                    break
                # the head of every cycle it met: another round while its value or a member's changed
                if not busy.cut and self._changes == changes:
                    break
                rounds += 1
                if res == busy.value and self._changes == changes:
                    break
                if rounds >= MAX_ROUNDS:
                    # still growing (``self.keys = self.keys.to(...)``: a method's result once more each round,
                    # without end): its value and its members' as this round left them.  Not an unknown beside
                    # them: a value set with one leaves argument contexts (a callable passed on is then not
                    # called); nor dropped: each member asked again would enter the cycle anew
                    self.stats.fixpoint_unsettled += 1
                    break
                busy.value, busy.cut = res, False
                self._changes = changes
                self._drop_provisional(i)
            if rounds:
                self.stats.fixpoint_rounds += rounds
        except BaseException:
            for h in [h for h in self._provisional if h >= i]:
                self._drop_provisional(h)
            self._forget_seeds(n_seeds)
            if memo.get(key, None) is busy:
                del memo[key]
            self._depth, self._low, self._changes = i, outer_low, changes
            raise
        self._depth = i
        low = self._low
        mine = self._provisional.pop(i, None)
        if low >= i:  # every cycle it met closes here: it and the entries made in its last round are final
            memo[key] = res
            for m, k, p in mine or ():
                if m.get(k, None) is p:
                    _set_keeping_tag(m, k, p.value)
            self._forget_seeds(n_seeds)
            self._changes = changes
            self._low = outer_low
            return res
        p = _Provisional(res, low)
        memo[key] = p
        below = self._provisional.setdefault(low, [])
        below.append((memo, key, p))
        for entry in mine or ():
            entry[2].head = low
            below.append(entry)
        if low < outer_low:
            outer_low = low
        self._low = outer_low
        return res

    def _forget_seeds(self, n: int) -> None:
        """The cycle the seeds since the ``n``-th were kept for is settled (or given up)."""
        log = self._seed_log
        while len(log) > n:
            del self._seeds[log.pop()]

    def _drop_provisional(self, head: int) -> None:
        """Forget the entries worked out from the head's value so far: its next round works them out again."""
        for m, k, p in self._provisional.pop(head, ()):
            if m.get(k, None) is p:
                del m[k]


def reset_fixpoint(program) -> None:
    """The state ``FixpointMixin`` keeps on ``Program``: nothing under way."""
    program._depth = 0
    program._low = _NO_CUT
    program._provisional = {}
    program._seeds = {}  # (id(memo table), key) -> the last value of a cycle's member cut in a round under way
    program._seed_log = []  # the keys of _seeds, in the order they were added
    program._changes = 0  # how many times a cycle's member cut in a round changed value (a head's next round)
