"""Read tracking for incremental analysis (lint/incremental.py keeps and uses what it records).

A scan is a sequence of *top units*: the region search of each candidate file (``find``), then the walk of
each region (``walk``).  While they run, a ``Tracker`` records, per unit, what it read:

- *items* of summaries: ``("f", module, qualname)`` a function's summary (``Program.function`` and the
  module's ``functions`` table), ``("c", ...)`` a class's, ``("b", module, name)`` a module-level binding,
  ``("f*"|"c*"|"b*", module)`` a whole table (iterated), ``("m", module)`` anything else of the module (asked
  for through ``Program.module``: imports, stores, ``__all__``...);
- *checks*: answers computed from file text without a summary (which files mention an identifier, the
  names a module's import statements bind), kept with their value, so an edit is checked against them;
- the units whose results it reused: the walk shares its memo tables between regions (one walk per node,
  one value per expression...), so a unit that hits an entry another unit computed depends on what that
  unit read.  Every memo table of ``Program``, ``Reach`` and ``RegionFinder`` is replaced by a
  ``TrackedMemo``, which keeps with each entry the unit that computed it; the walk's shared per-node work
  (``Reach._steps``, ``Reach.actions``) is a unit of its own, so a region that meets a node another region
  walked first depends on that node's reads, not on the other region's.  The context caps (which contexts
  of a function are precise: lint/contexts.py) are no memo: ``TrackedContextCaps`` records the order in
  which the top units met each function's contexts, and answers an incremental scan from it.
"""
from __future__ import annotations

from typing import Optional

from .contexts import ContextCaps, digest
from .modulestub import PutAside
from .program.fixpoint import settled
from .summary import FunctionSummary, callee_name
from .units import UnitTable

_MISS = object()
ROOT = 0


class Tracker:
    """Per unit: the items it read and the units whose results it used.  While a unit runs, sets of them in
    ``open_reads`` and ``open_uses`` (the root's stays open: items it read, units it used); once it closes
    (_freeze), the items' ids (``item_ids``) in ``reads`` and the units in ``uses``, tables held flat."""

    def __init__(self, first_id: int = 1, item_ids: Optional[dict] = None):
        self.open_reads: dict = {ROOT: set()}
        self.open_uses: dict = {ROOT: set()}
        self.reads = UnitTable(base=first_id)
        self.uses = UnitTable(base=first_id)
        # item -> its id: the next state's table (IncState.items; an incremental scan's starts as the previous
        # state's and grows in place).  A read makes its item anew (``("fl", "module:qualname", name)``): kept
        # as items, the bench site's 1.4 M units held 5.9 M item tuples (about 380 MB) at the walks' end
        self.item_ids: dict = {} if item_ids is None else item_ids
        self.stack: list = [ROOT]
        self.cur = ROOT
        self.cur_reads = self.open_reads[ROOT]
        self.cur_uses = self.open_uses[ROOT]
        self.next_id = first_id
        self.checks: dict = {}  # check item -> the value it had
        self.last_closed = ROOT
        # the (value, unit) pair of the memo entry made last (TrackedMemo): a unit often makes several entries
        # of one value in a row (an expression's value under each of its keys), and each was a pair of its own
        self.last_pair: tuple = (_MISS, ROOT)
        self.made = 0  # memo entries made so far (Tracker.frame)
        # the top unit (a file's region search, a region's walk) being run, ROOT between them, and where the
        # previous scan ran it (its place in that scan's order: TrackedContextCaps)
        self.top = ROOT
        self.top_old_pos = -1.0
        self.moved: set = set()  # context caps met with a context that moves their first ones (TrackedContextCaps)
        # a report's text reads a function's summary for its qualname only: whether the function exists
        # (item "fx"), not its body
        self.exists_only = False
        self.loaded: list = []  # modules in the order they were loaded
        self.func_items: dict = {}  # id(FunctionSummary) -> its part items (TrackedFunction)
        # units whose value a replayed walk works out again and compares (lint/reach_replay.py): a walk that
        # used one that is stale may still be replayed
        self.replay_checked: set = set()
        # what a replayed walk does again itself (what a report says, the entries, whether a function registers
        # hooks and which): it may use a stale one, and needs none of the logged walk's
        self.redone_units: set = set()
        # of those, whether a function registers module hooks and which: a replay that keeps the previous
        # findings of the hazards an edit did not touch (reach_replay._KeepingReplay) takes them as they were
        # (not asked again) and keeps using these units
        self.hook_units: set = set()
        self.detached = False  # past the walks' end (detach)

    def open(self) -> int:
        uid = self.next_id
        self.next_id += 1
        self.open_reads[uid] = set()
        self.open_uses[uid] = set()
        self.cur_uses.add(uid)  # the enclosing unit uses what this one computes
        self._enter(uid)
        return uid

    def _enter(self, uid: int) -> None:
        self.stack.append(uid)
        self.cur = uid
        self.cur_reads = self.open_reads[uid]
        self.cur_uses = self.open_uses[uid]

    def close(self) -> None:
        """Leave the current unit; what it read and used is final: kept in the flat tables (a set costs 216
        bytes empty, and a scan of sglang + flashinfer keeps about a million units, most with one read and one
        use)."""
        self._freeze(self.stack[-1])
        self._leave()

    def _freeze(self, uid: int) -> None:
        r = self.open_reads.pop(uid)
        if r:
            ids = self.item_ids
            r = [ids.setdefault(it, len(ids)) for it in r]
        self.reads[uid] = r
        self.uses[uid] = self.open_uses.pop(uid)

    def _leave(self) -> None:
        self.stack.pop()
        uid = self.stack[-1]
        self.cur = uid
        self.cur_reads = self.open_reads[uid]
        self.cur_uses = self.open_uses[uid]

    def frame(self, fn, *args):
        """``fn(*args)`` in a unit of its own if it makes a memo entry (what it computes is then tagged with
        what it read, not with all the enclosing unit read); else its reads and uses are the enclosing
        unit's (folded: no unit kept)."""
        parent = self.cur
        uid = self.next_id
        self.next_id += 1
        reads, uses = set(), set()
        self.open_reads[uid] = reads
        self.open_uses[uid] = uses
        self._enter(uid)
        made = self.made
        try:
            return fn(*args)
        finally:
            self._leave()
            if self.made == made:  # nothing is tagged with it
                del self.open_reads[uid], self.open_uses[uid]
                self.cur_reads |= reads
                uses.discard(parent)
                self.cur_uses |= uses
            else:
                self._freeze(uid)
                self.cur_uses.add(uid)

    def run(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` as a new unit: (unit id, result)."""
        uid = self.open()
        try:
            return uid, fn(*args, **kwargs)
        finally:
            self.close()

    def detach(self) -> None:
        """The walks' end: what runs after it (the post-walk steps: suppressions, coverage, cache notes) is no
        unit's and adds nothing the state keeps -- no unit, no read or use of the root, no module loaded, no
        check, no context met --, so that the state may be built later, after the answer
        (incstate.PendingState), as it stood here.  A unit asked for runs its function plainly; what is read
        goes into sets nobody keeps."""
        assert self.cur == ROOT, "detached inside a unit"
        self.detached = True
        self.cur_reads, self.cur_uses = set(), set()
        self.frame = _plain_frame
        self.run = _plain_run
        self.open = self.close = _no_unit


def _plain_frame(fn, *args):
    return fn(*args)


def _plain_run(fn, *args, **kwargs):
    return ROOT, fn(*args, **kwargs)


def _no_unit() -> int:
    return ROOT


class _UnitTable(dict):
    """A memo table whose entries are stored as (value, what made it); a read goes through ``_use``."""

    __slots__ = ("t",)

    def _use(self, pair):
        raise NotImplementedError

    def __getitem__(self, k):
        return self._use(dict.__getitem__(self, k))

    def __contains__(self, k):
        pair = dict.get(self, k, _MISS)
        if pair is _MISS:
            return False
        self._use(pair)
        return True


class TrackedMemo(_UnitTable):
    """A memo table whose entries remember the unit that computed them: a hit from another unit is a use.
    Entries are stored as (value, unit); reads unwrap them."""

    __slots__ = ()

    def __init__(self, tracker: Tracker, init=None):
        dict.__init__(self)
        self.t = tracker
        for k, v in (init or {}).items():
            dict.__setitem__(self, k, (v, ROOT))

    def _use(self, pair):
        if pair[1] != self.t.cur:
            self.t.cur_uses.add(pair[1])
        return pair[0]

    def __setitem__(self, k, v):
        t = self.t
        pair = t.last_pair
        if pair[0] is not v or pair[1] != t.cur:
            pair = t.last_pair = (v, t.cur)
        dict.__setitem__(self, k, pair)
        t.made += 1

    def get(self, k, d=None):
        pair = dict.get(self, k, _MISS)
        if pair is _MISS:
            return d
        if pair[1] != self.t.cur:
            self.t.cur_uses.add(pair[1])
        return pair[0]

    def set_keeping_tag(self, k, v):
        """Replace the value of an entry, still tagged with the unit that computed it (a provisional value
        made final: lint/program/fixpoint.py)."""
        dict.__setitem__(self, k, (v, dict.__getitem__(self, k)[1]))

    def setdefault(self, k, d=None):
        pair = dict.get(self, k, _MISS)
        if pair is _MISS:
            self[k] = d
            return d
        return self._use(pair)

    def pop(self, k, *d):
        pair = dict.pop(self, k, _MISS)
        if pair is _MISS:
            if d:
                return d[0]
            raise KeyError(k)
        return pair[0]

    def values(self):
        return [self._use(p) for p in dict.values(self)]

    def items(self):
        return [(k, self._use(p)) for k, p in dict.items(self)]

    def __iter__(self):
        for p in dict.values(self):
            self._use(p)
        return dict.__iter__(self)


class _LastUnitMemo(TrackedMemo):
    """A table whose entries are set right after the unit that computed them closed (``x = memo[k] =
    compute()``): each entry is tagged with that unit (``Tracker.last_closed``), not the enclosing one."""

    __slots__ = ()

    def __setitem__(self, k, v):
        dict.__setitem__(self, k, (v, self.t.last_closed))


class ContextsMoved(Exception):
    """An incremental scan met contexts that may change which contexts of some functions are precise (the
    previous scan's order no longer decides them): the scan is planned again with those functions' units stale
    (lint/engine.py)."""

    def __init__(self, first: dict):
        super().__init__(len(first))
        # (table, digest of the function) -> (the digests of its first contexts in the order of the scan that
        # found them moved, where the top unit that reached the cap ran in the previous scan's order or None)
        self.first = first


class TrackedContextCaps(ContextCaps):
    """A context cap (lint/contexts.py) that records, per function, the contexts each top unit met, in scan
    order, and the unit that met each (IncState.contexts).

    Seeded (an incremental scan; ``seeds``: key digest -> Seed, the previous scan's first contexts of each
    function), it answers as a full scan of the edited tree would, without running again the units that met
    the function before:
    - a context among the previous scan's precise ones is precise;
    - a function below its cap admits a new context while it stays within the cap (every context precise in
      both scans);
    - a function at its cap widens a new context met after the top unit that reached the cap; one met before
      it would change which contexts are first: the scan goes on and is planned again (``Tracker.moved``).
    Whether the previous scan's first contexts are still first in this scan's order (a top unit run again
    may meet others, or no longer meet one) is checked after the walks (Incremental.settle).  Before, every
    unit that counted used every unit that counted before it, and those ran again before a unit walked again:
    100,614 stale units for one edit of the sglang checkout, 11 now.  A key without a seed (a full scan, or a
    function met first in this scan) counts as ContextCaps does."""

    __slots__ = ("t", "name", "log", "seeds", "keyinfo", "digests", "one")

    def __init__(self, tracker: Tracker, name: str, cap: int, seeds: Optional[dict] = None):
        super().__init__(cap)
        self.t, self.name = tracker, name
        self.log: dict = {}  # key -> [[top unit, [(context, unit), ...]], ...] in scan order
        # one object per context the log holds: a call makes its context anew each time (a tuple of value
        # sets), and the untracked scan drops it at once; logged as made, the bench site's 92,775 contexts
        # met held 197 MB at the walks' end, 37 MB so
        self.one: dict = {}
        self.seeds = seeds or {}
        self.keyinfo: dict = {}  # key -> its Seed or None
        self.digests: dict = {}  # contexts.digest's memo

    def admit(self, key, context) -> bool:
        t = self.t
        t.made += 1  # a unit that met a context is kept (IncState.contexts names it)
        if not t.detached:
            entries = self.log.get(key)
            if entries is None:
                entries = self.log[key] = []
            if not entries or entries[-1][0] != t.top:
                entries.append((t.top, []))
            context = self.one.setdefault(context, context)
            entries[-1][1].append((context, t.cur))
        if not self.seeds:
            return ContextCaps.admit(self, key, context)
        seed = self.keyinfo.get(key, _MISS)
        if seed is _MISS:
            seed = self.keyinfo[key] = self.seeds.get(digest(key, self.digests))
        if seed is None:
            return ContextCaps.admit(self, key, context)
        seen = self.seen.get(key)
        if seen is None:
            seen = self.seen[key] = set()
        if context in seen:
            return True
        d = digest(context, self.digests)
        if d in seed.precise:
            seen.add(context)
            return True
        if len(seed.precise) < self.cap:
            seed.precise.add(d)
            seen.add(context)
            return True
        if seed.cap_pos is None or t.top_old_pos < seed.cap_pos:
            # a new context before the cap was reached: the scan goes on (it finds every such cap at once),
            # and is planned again (Incremental.settle)
            t.moved.add((self.name, seed.key))
        return False


def _reading_all(name: str):
    """``dict.<name>`` that first records a read of the whole table (``self._all()``)."""
    plain = getattr(dict, name)

    def method(self, *args):
        self._all()
        return plain(self, *args)

    method.__name__ = name
    return method


class TrackedMap(dict):
    """A summary's ``functions`` / ``classes`` / ``bindings`` table: each key read is an item, iterating is a
    read of the whole table."""

    __slots__ = ("t", "kind", "mod")

    def __init__(self, tracker: Tracker, kind: str, mod: str, data: dict):
        dict.__init__(self, data)
        self.t, self.kind, self.mod = tracker, kind, mod

    def get(self, k, d=None):
        self.t.cur_reads.add((self.kind, self.mod, k))
        return dict.get(self, k, d)

    def __getitem__(self, k):
        self.t.cur_reads.add((self.kind, self.mod, k))
        return dict.__getitem__(self, k)

    def __contains__(self, k):
        self.t.cur_reads.add((self.kind, self.mod, k))
        return dict.__contains__(self, k)

    def _all(self):
        self.t.cur_reads.add((self.kind + "*", self.mod))

    __iter__, keys, values, items, __len__ = (_reading_all(n) for n in ("__iter__", "keys", "values", "items",
                                                                        "__len__"))

    def __reduce__(self):  # pickled (the summary cache, the workers) as a plain dict
        return (dict, (dict(self),))


_TABLES = (("f", "functions"), ("c", "classes"), ("b", "bindings"))

# A function's summary is read in parts: item ("f", module, qualname) is its signature (what Program.function
# gives: name, lines, decorators, parameters, annotations, defaults, owner), ("fc", ...) what walking its node
# does (its calls, attribute reads, effects), ("fv", ...) what a call of it gives (returns and their guards,
# yields, stores on parameters), and each local name one item ("fl", "module:qualname", name) (iterating them:
# ("fl*", "module:qualname")).  An edit of a body line that adds a hazard then changes "fc" and one local: the
# units that only resolved the function, entered it or took its return value are not stale.  A reader that
# looks only for calls spelled with some names (FunctionSummary.calls_named: a class's construction sites, a
# setter called on `self`) reads ("fcn", module, qualname, name) per name instead of "fc".
FUNCTION_PARTS = (("fc", ("calls", "attrs", "effects")),
                  ("fv", ("returns", "return_guards", "yields", "param_stores")))
_ACTIVE: list = [None]  # the tracker of the scan in progress (TrackedFunction's properties record into it)


def _slot(name: str):
    return getattr(FunctionSummary, name)  # the slot's member descriptor


def _part_property(name: str, part: int):
    slot = _slot(name)

    def get(self):
        t = _ACTIVE[0]
        if t is not None:
            items = t.func_items.get(id(self))
            if items is not None:
                t.cur_reads.add(items[part])
        return slot.__get__(self)

    return property(get, slot.__set__)


class TrackedFunction(FunctionSummary):
    """A FunctionSummary whose body parts (FUNCTION_PARTS) record a read of their item when read.  The class of
    a loaded summary's functions is set to it (no new slot: the items are in ``Tracker.func_items``, by id);
    it compares, hashes and pickles as a plain FunctionSummary."""

    __slots__ = ()

    def __eq__(self, other):
        if not isinstance(other, FunctionSummary):
            return NotImplemented
        return all(s.__get__(self) == s.__get__(other) for s in _ALL_SLOTS)

    __hash__ = None

    def calls_named(self, *names: str) -> list:
        """Read as the items ("fcn", module, qualname, name) of those names, not the whole body ("fc")."""
        t = _ACTIVE[0]
        items = t.func_items.get(id(self)) if t is not None else None
        if items is not None:
            _, mod, qual = items[0]
            t.cur_reads.update(("fcn", mod, qual, n) for n in names)
        return [s for s in _CALLS.__get__(self) if callee_name(s.func) in names]

    def __reduce_ex__(self, protocol):  # every field is an __init__ parameter, in slot order
        return (FunctionSummary, tuple(s.__get__(self) for s in _ALL_SLOTS))


_ALL_SLOTS = tuple(_slot(n) for n in FunctionSummary.__slots__)
for _i, (_kind, _names) in enumerate(FUNCTION_PARTS):
    for _n in _names:
        setattr(TrackedFunction, _n, _part_property(_n, _i))
_LOCALS = _slot("locals")
_CALLS = _slot("calls")


def _wrap_summary(tracker: Tracker, m) -> None:
    for kind, attr in _TABLES:
        table = getattr(m, attr)
        if not isinstance(table, TrackedMap) or table.t is not tracker:
            setattr(m, attr, TrackedMap(tracker, kind, m.name, dict(table)))
    mod = m.name
    items = tracker.func_items
    for qual, f in dict.items(m.functions):
        if not isinstance(f, FunctionSummary):
            continue
        items[id(f)] = tuple((kind, mod, qual) for kind, _ in FUNCTION_PARTS)
        loc = _LOCALS.__get__(f)
        if not isinstance(loc, TrackedMap) or loc.t is not tracker:
            _LOCALS.__set__(f, TrackedMap(tracker, "fl", f"{mod}:{qual}", dict(loc)))
        if type(f) is FunctionSummary:
            f.__class__ = TrackedFunction


# ------------------------------------------------------------------------------------------------ install
_PROGRAM_MEMOS = ("_global_memo", "_eval_memo", "_call_memo", "_func_value_memo", "_mro_memo", "_subclass_memo",
                  "conditional_wrappers")
_REACH_MEMOS = ("_actions", "_guard_memo", "_skip_memo", "_const_memo", "_hooks_memo", "_self_calls",
                "_steps_memo", "_hook_sites_memo")
_FINDER_MEMOS = ("_registry_memo", "_marker_name_memo")


def track_program(tracker: Tracker, program, seeds: Optional[dict] = None) -> None:
    """Record what ``program`` reads, per unit (instance attributes shadow the methods and tables).  ``seeds``:
    table ("call") -> the context caps' seeds of an incremental scan (TrackedContextCaps)."""
    seeds = seeds or {}
    for name in _PROGRAM_MEMOS:
        setattr(program, name, TrackedMemo(tracker, getattr(program, name)))
    program._call_contexts = TrackedContextCaps(tracker, "call", program._call_contexts.cap, seeds.get("call"))
    modules = program.modules
    plain_module = program.module
    _ACTIVE[0] = tracker
    for m in list(modules.values()):  # loaded before the tracking began
        if m is not None:
            _wrap_summary(tracker, m)
    functions, classes = program._function_of, program._class_of

    def load(name: str):
        m = modules.get(name, _MISS)
        if m is _MISS or m.__class__ is PutAside:  # (put aside: Program.evict; loaded already)
            first = m is _MISS
            m = plain_module(name)
            if first and not tracker.detached:
                tracker.loaded.append(name)
            if m is not None:
                _wrap_summary(tracker, m)
        return m

    def module(name: str):
        tracker.cur_reads.add(("m", name))
        return load(name)

    def function(fid: str):
        mod, _, qual = fid.partition(":")
        tracker.cur_reads.add(("fx" if tracker.exists_only else "f", mod, qual))
        f = functions.get(fid, _MISS)
        if f is _MISS:
            m = load(mod)
            f = functions[fid] = dict.get(m.functions, qual) if m else None
        return f

    def klass(cid: str):
        mod, _, qual = cid.partition(":")
        tracker.cur_reads.add(("c", mod, qual))
        c = classes.get(cid, _MISS)
        if c is _MISS:
            m = load(mod)
            c = classes[cid] = dict.get(m.classes, qual) if m else None
        return c

    program.module, program.function, program.klass = module, function, klass
    plain_evict = program.evict

    def evict(name: str):
        m = modules.get(name)
        plain_evict(name)
        if m is not None and modules.get(name) is not m:  # (keyed by the function's id: another may take it)
            for f in dict.values(m.functions):
                tracker.func_items.pop(id(f), None)

    program.evict = evict

    # the computations whose results the walk shares most (a function's return value, a module-level name,
    # a function's decorated value, a class's MRO): each is a unit of its own when it makes an entry, so a
    # unit that reuses it depends on what it read, not on the whole unit that happened to compute it first
    plain_call, plain_global, plain_fvalue, plain_mro = (program.call, program.resolve_global,
                                                         program.function_value, program.mro)
    gmemo, fmemo, mmemo = program._global_memo, program._func_value_memo, program._mro_memo

    # (an entry under way or provisional goes to the plain method, which accounts for it: fixpoint.py)
    def resolve_global(mod, name, typing=False, before=None):
        v = gmemo.get((mod, name, typing, before), _MISS)
        if v is not _MISS and settled(v):
            return v
        return tracker.frame(plain_global, mod, name, typing, before)

    def function_value(fid, scope):
        v = fmemo.get(fid, _MISS)
        if v is not _MISS and settled(v):
            return v
        return tracker.frame(plain_fvalue, fid, scope)

    def mro(cid):
        v = mmemo.get(cid, _MISS)
        if v is not _MISS and settled(v):
            return v
        return tracker.frame(plain_mro, cid)

    program.call = lambda v, args, kwargs, scope: tracker.frame(plain_call, v, args, kwargs, scope)
    program.resolve_global, program.function_value, program.mro = resolve_global, function_value, mro
    program._mention_index = _MentionIndexes(tracker)


class _MentionIndexes(dict):
    """``Program._mention_index``: each index's answers are recorded as checks.  ``kept``: (files, parts,
    texts) of the previous scan's index of the scanned files (lint/incremental.py), taken over when this
    scan's has the same files (``_MentionIndex.restore``)."""

    def __init__(self, tracker: Tracker):
        dict.__init__(self)
        self.t = tracker
        self.kept: Optional[tuple] = None

    def __setitem__(self, key, index):
        if key is None and self.kept is not None:
            files, parts, texts = self.kept
            if files == mention_files(index):
                index.restore(parts, texts)
        plain = index.files_with
        t = self.t

        def files_with(needle: bytes, in_bases: bool = False, called: bool = False):
            ans = plain(needle, in_bases, called)
            if not t.detached:
                item = ("q", needle, in_bases, called)
                t.cur_reads.add(item)
                got = t.checks.setdefault(item, set())
                got.update(str(p) for _, p, _ in ans)
            return ans

        index.files_with = files_with
        dict.__setitem__(self, key, index)


def mention_files(index) -> tuple:
    """The files of a ``_MentionIndex``, as the incremental state keeps them."""
    return tuple((m, str(p), pkg) for m, p, pkg in index.files)


class _Rebound(dict):
    """``RegionFinder._rebound``: module -> the names its import statements and aliases bind (from its text),
    recorded as a check."""

    def __init__(self, tracker: Tracker):
        dict.__init__(self)
        self.t = tracker

    def get(self, k, d=None):
        v = dict.get(self, k, d)
        if v is not d:
            self.t.cur_reads.add(("t", k))
        return v

    def __setitem__(self, k, v):
        self.t.cur_reads.add(("t", k))
        if not self.t.detached:
            self.t.checks[("t", k)] = frozenset(v)
        dict.__setitem__(self, k, v)


def track_reach(tracker: Tracker, reach, reuse_steps=None, seeds: Optional[dict] = None) -> None:
    """``reuse_steps(key)``: a previous scan's (unit, steps) of node ``key`` if that unit is not stale, else
    None (lint/incremental.py): a region walked again then walks again only the nodes an edit touched.
    ``seeds``: as track_program's ("const")."""
    seeds = seeds or {}
    for name in _REACH_MEMOS:
        setattr(reach, name, TrackedMemo(tracker, getattr(reach, name)))
    reach._const_contexts = TrackedContextCaps(tracker, "const", reach._const_contexts.cap, seeds.get("const"))
    plain_steps, plain_actions, plain_text = reach._steps, reach.actions, reach._report_text
    steps_memo, actions_memo = reach._steps_memo, reach._actions
    # what a report says is worked out once per (action, node...) and kept in _report_memo: as a unit of its
    # own, so that the regions reporting the same hazard depend on what the report read (its node's path
    # and qualname), not on the whole walk of the region that reported it first
    reach._report_memo = _LastUnitMemo(tracker)

    def report_text(*args, **kwargs):
        tracker.exists_only = True  # it reads the node's function and loader for their qualnames
        try:
            uid, res = tracker.run(plain_text, *args, **kwargs)
        finally:
            tracker.exists_only = False
        tracker.last_closed = uid
        tracker.redone_units.add(uid)
        return res

    reach._report_text = report_text

    def steps(node, predicates, variant):
        key = (node, variant)
        pair = dict.get(steps_memo, key)
        if pair is not None:  # (one lookup: asked at every visit of every walk)
            return steps_memo._use(pair)
        old = reuse_steps(key) if reuse_steps is not None else None
        if old is not None:
            uid, kept = old
            dict.__setitem__(steps_memo, key, (kept, uid))  # later visits in this scan use it like any entry
            tracker.cur_uses.add(uid)
            return kept
        return tracker.run(plain_steps, node, predicates, variant)[1]

    def actions(fid, self_cls, consts=()):
        if dict.__contains__(actions_memo, (fid, self_cls, consts)):
            return actions_memo[(fid, self_cls, consts)]
        return tracker.run(plain_actions, fid, self_cls, consts)[1]

    plain_hooks, hooks_memo = reach._registers_hooks, reach._hook_sites_memo

    def registers_hooks(fid):
        if dict.__contains__(hooks_memo, fid):
            return hooks_memo[fid]
        uid, found = tracker.run(plain_hooks, fid)
        tracker.redone_units.add(uid)  # asked again by a replay of every node reached (its phase 3)
        tracker.hook_units.add(uid)
        return found

    reach._steps, reach.actions, reach._registers_hooks = steps, actions, registers_hooks
    # what a function's body does is worked out in a unit below its actions' one, which reads the body's parts
    # (the item "fc"), and what visiting a node does below its steps' one, which uses those actions: the values
    # they work out in the function's scope (a local, an argument's expression) are shared with every call
    # from there (bound as arguments), and tagged with the actions' or the steps' unit they carried the read
    # of the whole body -- on the bench site, a line added to one method made 13,816 units stale through two
    # calls from it, 116 with these units
    plain_body, plain_steps_of = reach._body_actions, reach._steps_of
    reach._body_actions = lambda *args: tracker.frame(plain_body, *args)
    reach._steps_of = lambda *args: tracker.frame(plain_steps_of, *args)
    # the memo entries a walk makes itself (a method's calls on its own `self`, a class's registered hooks,
    # the values an entry's defaults and a hook's registration evaluate) are units of their own: a region
    # that reuses one depends on what it read, not on the whole walk that made it first -- else an edit below
    # that walk would make every region sharing the entry stale as a walk, not replayable (reach_replay.py)
    plain_self_call, self_calls = reach._is_self_call, reach._self_calls
    plain_class_hooks, class_hooks = reach._registered_hooks, reach._hooks_memo

    def is_self_call(node, act):
        if dict.__contains__(self_calls, node.fid):
            return plain_self_call(node, act)  # (the memo's read adds the use of the unit that made it)
        # the frame's unit (it makes the memo entry): a replayed walk works out again the facts on `self` that
        # an edited node's calls give (reach_replay.py), so a walk that used this unit, stale, may be replayed
        tracker.replay_checked.add(tracker.next_id)
        return tracker.frame(plain_self_call, node, act)

    def registered_hooks(cid):
        if dict.__contains__(class_hooks, cid):
            return class_hooks[cid]
        return tracker.frame(plain_class_hooks, cid)

    plain_entries, plain_registrations = reach._entry_nodes, reach._hook_registrations

    def redone(fn, *args, hooks: bool = False):
        tracker.redone_units.add(tracker.next_id)  # (the frame's unit, if it makes an entry)
        if hooks:
            tracker.hook_units.add(tracker.next_id)
        return tracker.frame(fn, *args)

    # whether torch skips a callee's file: asked by every function that calls into the module, made by the
    # first; a unit of its own (it reads the module), or every function's actions calling into a module would
    # depend on the whole body of the function that happened to ask first (on the sglang checkout, the actions
    # of 177 functions depended on SageAttentionImpl.forward's body so)
    plain_skipped, skip_memo = reach._skipped_file, reach._skip_memo

    def skipped_file(fid):
        if dict.__contains__(skip_memo, fid.partition(":")[0]):
            return plain_skipped(fid)  # (the memo's read adds the use of the unit that made it)
        return tracker.frame(plain_skipped, fid)

    reach._is_self_call, reach._registered_hooks, reach._skipped_file = is_self_call, registered_hooks, skipped_file
    reach._entry_nodes = lambda region, default_call=False: redone(plain_entries, region, default_call)
    reach._hook_registrations = lambda *args: redone(plain_registrations, *args, hooks=True)


def track_finder(tracker: Tracker, finder) -> None:
    """The region search of a file iterates its functions (a read of the whole table); what it works out for
    each decorator and call site is a unit of its own that reads that function (and the scope it is
    evaluated in), so that the memo entries it makes do not carry the whole file's reads to the walks that
    reuse them."""
    for name in _FINDER_MEMOS:
        setattr(finder, name, TrackedMemo(tracker, getattr(finder, name)))
    finder._rebound = _Rebound(tracker)
    may, dec, cdec, call = (finder._may_make_region, finder._from_decorator, finder._from_class_decorator,
                            finder._from_call)

    def scope_item(scope):
        return ("f", *scope.func_id.partition(":")[::2]) if scope.func_id else ("f", scope.module, "<module>")

    def unit(items: tuple, fn, *args):
        tracker.open()
        try:
            tracker.cur_reads.update(items)
            return fn(*args)
        finally:
            tracker.close()

    finder._may_make_region = lambda func, module_name, f: unit(
        (("f", module_name, f.qualname) if f is not None else ("m", module_name),), may, func, module_name, f)
    finder._from_decorator = lambda d, f, fid, path, scope: unit(
        (("f", *fid.partition(":")[::2]), scope_item(scope)), dec, d, f, fid, path, scope)
    finder._from_class_decorator = lambda d, c, cid, path, scope: unit(
        (("c", *cid.partition(":")[::2]), scope_item(scope)), cdec, d, c, cid, path, scope)
    finder._from_call = lambda site, path, scope: unit((scope_item(scope),), call, site, path, scope)
