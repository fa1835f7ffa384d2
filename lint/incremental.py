"""Incremental analysis: after an edit, walk again only the regions whose inputs changed.

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
  walked first depends on that node's reads, not on the other region's.  Tables that several units update
  (the context counters that bound context sensitivity) remember every writer.

After an edit whose file set is unchanged, each changed file's old and new summaries are compared item by
item; the units that read a changed item are stale, and so is every unit that used a stale one (the
dependency edges, followed forward).  The scan then runs in a fresh program with the same order of units:
a top unit that is not stale returns its recorded result (the regions a file holds, a region's findings);
a stale one runs again, tracked.  Anything not tracked (a new or deleted file, another search path, other
options, the user's facts) makes a full scan, as before.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

_MISS = object()
ROOT = 0


class Tracker:
    """Per unit: the items it read (``reads``) and the units whose results it used (``uses``)."""

    def __init__(self, first_id: int = 1):
        self.reads: dict = {ROOT: set()}
        self.uses: dict = {ROOT: set()}
        self.stack: list = [ROOT]
        self.cur = ROOT
        self.cur_reads = self.reads[ROOT]
        self.cur_uses = self.uses[ROOT]
        self.next_id = first_id
        self.checks: dict = {}  # check item -> the value it had
        self.last_closed = ROOT
        self.made = 0  # memo entries made so far (Tracker.frame)
        # unit -> the units that wrote a shared counter it read (SharedMemo): a unit walked again must see
        # the counter as a full scan does, so those writers run again before it (stale_units)
        self.shared: dict = {}
        # a report's text reads a function's summary for its qualname only: whether the function exists
        # (item "fx"), not its body
        self.exists_only = False
        self.loaded: list = []  # modules in the order they were loaded

    def open(self) -> int:
        uid = self.next_id
        self.next_id += 1
        self.reads[uid] = set()
        self.uses[uid] = set()
        self.cur_uses.add(uid)  # the enclosing unit uses what this one computes
        self._enter(uid)
        return uid

    def _enter(self, uid: int) -> None:
        self.stack.append(uid)
        self.cur = uid
        self.cur_reads = self.reads[uid]
        self.cur_uses = self.uses[uid]

    def close(self) -> None:
        self.stack.pop()
        uid = self.stack[-1]
        self.cur = uid
        self.cur_reads = self.reads[uid]
        self.cur_uses = self.uses[uid]

    def frame(self, fn, *args):
        """``fn(*args)`` in a unit of its own if it makes a memo entry (what it computes is then tagged with
        what it read, not with all the enclosing unit read); else its reads and uses are the enclosing
        unit's (folded: no unit kept)."""
        parent = self.cur
        uid = self.next_id
        self.next_id += 1
        reads, uses = set(), set()
        self.reads[uid] = reads
        self.uses[uid] = uses
        self._enter(uid)
        made = self.made
        try:
            return fn(*args)
        finally:
            self.close()
            if self.made == made:  # nothing is tagged with it
                del self.reads[uid], self.uses[uid]
                self.cur_reads |= reads
                uses.discard(parent)
                self.cur_uses |= uses
                writers = self.shared.pop(uid, None)
                if writers:
                    self.shared.setdefault(parent, set()).update(w for w in writers if w != parent)
            else:
                self.cur_uses.add(uid)

    def run(self, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` as a new unit: (unit id, result)."""
        uid = self.open()
        try:
            return uid, fn(*args, **kwargs)
        finally:
            self.close()


class TrackedMemo(dict):
    """A memo table whose entries remember the unit that computed them: a hit from another unit is a use.
    Entries are stored as (value, unit); reads unwrap them."""

    __slots__ = ("t",)

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
        dict.__setitem__(self, k, (v, self.t.cur))
        self.t.made += 1

    def __getitem__(self, k):
        return self._use(dict.__getitem__(self, k))

    def get(self, k, d=None):
        pair = dict.get(self, k, _MISS)
        if pair is _MISS:
            return d
        if pair[1] != self.t.cur:
            self.t.cur_uses.add(pair[1])
        return pair[0]

    def __contains__(self, k):
        pair = dict.get(self, k, _MISS)
        if pair is _MISS:
            return False
        self._use(pair)
        return True

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


class SharedMemo(dict):
    """A table several units update (a counter, a set that grows): a read uses every unit that wrote the
    entry, a write adds the writer.  Entries are stored as (value, writers)."""

    __slots__ = ("t",)

    def __init__(self, tracker: Tracker):
        dict.__init__(self)
        self.t = tracker

    def _use(self, pair):
        t = self.t
        others = [w for w in pair[1] if w != t.cur]
        if others:
            t.cur_uses.update(others)
            t.shared.setdefault(t.cur, set()).update(others)
        return pair[0]

    def __setitem__(self, k, v):
        pair = dict.get(self, k, _MISS)
        writers = (self.t.cur,) if pair is _MISS else pair[1] + ((self.t.cur,) if self.t.cur not in pair[1] else ())
        dict.__setitem__(self, k, (v, writers))
        self.t.made += 1

    def __getitem__(self, k):
        return self._use(dict.__getitem__(self, k))

    def get(self, k, d=None):
        pair = dict.get(self, k, _MISS)
        return d if pair is _MISS else self._use(pair)

    def __contains__(self, k):
        pair = dict.get(self, k, _MISS)
        if pair is _MISS:
            return False
        self._use(pair)
        return True

    def setdefault(self, k, d=None):
        """Used as ``seen = memo.setdefault(k, set()); seen.add(x)``: a read and a write."""
        pair = dict.get(self, k, _MISS)
        if pair is not _MISS:
            self._use(pair)
            d = pair[0]
        self[k] = d
        return d


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

    def __iter__(self):
        self._all()
        return dict.__iter__(self)

    def keys(self):
        self._all()
        return dict.keys(self)

    def values(self):
        self._all()
        return dict.values(self)

    def items(self):
        self._all()
        return dict.items(self)

    def __len__(self):
        self._all()
        return dict.__len__(self)

    def __reduce__(self):  # pickled (the summary cache, the workers) as a plain dict
        return (dict, (dict(self),))


_TABLES = (("f", "functions"), ("c", "classes"), ("b", "bindings"))


def _wrap_summary(tracker: Tracker, m) -> None:
    for kind, attr in _TABLES:
        table = getattr(m, attr)
        if not isinstance(table, TrackedMap):
            setattr(m, attr, TrackedMap(tracker, kind, m.name, table))


# ------------------------------------------------------------------------------------------------ install
_PROGRAM_MEMOS = ("_global_memo", "_eval_memo", "_call_memo", "_func_value_memo", "_mro_memo", "_subclass_memo",
                  "conditional_wrappers")
_PROGRAM_SHARED = ("_call_contexts",)
_REACH_MEMOS = ("_actions", "_guard_memo", "_skip_memo", "_const_memo", "_hooks_memo", "_self_calls",
                "_steps_memo")
_REACH_SHARED = ("_const_contexts",)
_FINDER_MEMOS = ("_registry_memo", "_marker_name_memo")


def track_program(tracker: Tracker, program) -> None:
    """Record what ``program`` reads, per unit (instance attributes shadow the methods and tables)."""
    for name in _PROGRAM_MEMOS:
        setattr(program, name, TrackedMemo(tracker, getattr(program, name)))
    for name in _PROGRAM_SHARED:
        setattr(program, name, SharedMemo(tracker))
    modules = program.modules
    plain_module = program.module
    functions, classes = program._function_of, program._class_of

    def load(name: str):
        m = modules.get(name, _MISS)
        if m is _MISS:
            m = plain_module(name)
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

    # the computations whose results the walk shares most (a function's return value, a module-level name,
    # a function's decorated value, a class's MRO): each is a unit of its own when it makes an entry, so a
    # unit that reuses it depends on what it read, not on the whole unit that happened to compute it first
    plain_call, plain_global, plain_fvalue, plain_mro = (program.call, program.resolve_global,
                                                         program.function_value, program.mro)
    gmemo, fmemo, mmemo = program._global_memo, program._func_value_memo, program._mro_memo

    def resolve_global(mod, name, typing=False, before=None):
        if dict.__contains__(gmemo, (mod, name, typing, before)):
            return gmemo[(mod, name, typing, before)]
        return tracker.frame(plain_global, mod, name, typing, before)

    def function_value(fid, scope):
        if dict.__contains__(fmemo, fid):
            return fmemo[fid]
        return tracker.frame(plain_fvalue, fid, scope)

    def mro(cid):
        if dict.__contains__(mmemo, cid):
            return mmemo[cid]
        return tracker.frame(plain_mro, cid)

    program.call = lambda v, args, kwargs, scope: tracker.frame(plain_call, v, args, kwargs, scope)
    program.resolve_global, program.function_value, program.mro = resolve_global, function_value, mro
    program._mention_index = _MentionIndexes(tracker)


class _MentionIndexes(dict):
    """``Program._mention_index``: each index's answers are recorded as checks."""

    def __init__(self, tracker: Tracker):
        dict.__init__(self)
        self.t = tracker

    def __setitem__(self, key, index):
        plain = index.files_with
        t = self.t

        def files_with(needle: bytes, in_bases: bool = False, called: bool = False):
            ans = plain(needle, in_bases, called)
            item = ("q", needle, in_bases, called)
            t.cur_reads.add(item)
            got = t.checks.setdefault(item, set())
            got.update(str(p) for _, p, _ in ans)
            return ans

        index.files_with = files_with
        dict.__setitem__(self, key, index)


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
        self.t.checks[("t", k)] = frozenset(v)
        dict.__setitem__(self, k, v)


def track_reach(tracker: Tracker, reach) -> None:
    for name in _REACH_MEMOS:
        setattr(reach, name, TrackedMemo(tracker, getattr(reach, name)))
    for name in _REACH_SHARED:
        setattr(reach, name, SharedMemo(tracker))
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
        return res

    reach._report_text = report_text

    def steps(node, predicates, variant):
        if dict.__contains__(steps_memo, (node, variant)):
            return steps_memo[(node, variant)]
        return tracker.run(plain_steps, node, predicates, variant)[1]

    def actions(fid, self_cls, consts=()):
        if dict.__contains__(actions_memo, (fid, self_cls, consts)):
            return actions_memo[(fid, self_cls, consts)]
        return tracker.run(plain_actions, fid, self_cls, consts)[1]

    reach._steps, reach.actions = steps, actions


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
        uid = tracker.open()
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


# ------------------------------------------------------------------------------------------------ state
@dataclass
class IncState:
    """What an incremental scan keeps between runs (in the result cache, beside the result)."""
    reads: dict  # unit -> the ids (``items``) of the items it read
    uses: dict  # unit -> tuple of units
    checks: dict  # check item -> value
    finds: dict  # candidate module (or "public:pkg", "entry:spec") -> (unit, [Region], [UnresolvedRegion])
    walks: list  # [(top key, Region, unit, result)] in scan order
    loaded: list  # modules loaded, in order
    candidates: tuple  # (module, likely) of each candidate, in order
    next_id: int = 1
    # module -> what the post-walk steps read of it (ModuleStub): a reused region's modules are not loaded
    modinfo: dict = field(default_factory=dict)
    root_modules: frozenset = frozenset()  # modules read outside any unit
    items: dict = field(default_factory=dict)  # item -> its id (a unit's reads are ids: a smaller state)
    shared: dict = field(default_factory=dict)  # unit -> the writers of the shared counters it read


@dataclass
class Plan:
    """What an edit changed: the stale units, and how many files were re-indexed to know it."""
    stale: set
    changed_items: set
    reindexed: int = 0
    changed_files: list = field(default_factory=list)
    texts: dict = field(default_factory=dict)  # path -> (module, new bytes) of each edited file


def changed_items(old, new, mod: str) -> set:
    """The items whose value differs between two summaries of one module."""
    out = set()
    for kind, attr in _TABLES:
        a, b = dict(getattr(old, attr)), dict(getattr(new, attr))
        if kind == "f":
            for t in (a, b):
                top = t.get("<module>")
                if top is not None:
                    top.end_line = 0  # the file's length (see resultcache._analysis_view)
        keys = {k for k in a.keys() | b.keys() if a.get(k, _MISS) != b.get(k, _MISS)}
        out.update((kind, mod, k) for k in keys)
        if kind == "f":  # added or removed: what a report's text reads of a function
            out.update(("fx", mod, k) for k in a.keys() ^ b.keys())
        if keys:
            out.add((kind + "*", mod))
    rest = ("name", "is_package", "star_imports", "dunder_all", "stores", "required_imports", "env_keys_set",
            "env_keys_removed", "suppressions", "file_suppressions", "error")
    if any(getattr(old, r) != getattr(new, r) for r in rest):
        out.add(("m", mod))
    return out


_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def _mentions(data: bytes, needle: bytes, in_bases: bool, called: bool = False) -> bool:
    """Whether a file's text answers a mention query (program/locator.py's _MentionIndex)."""
    from .program.locator import _CALLED_RE, _CLASS_BASES_RE

    if in_bases:
        return needle in {w for h in _CLASS_BASES_RE.findall(data) for w in _IDENT.findall(h)}
    if called:
        return needle in set(_CALLED_RE.findall(data))
    word = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(needle) + rb"(?![A-Za-z0-9_])")
    return needle in data and word.search(data) is not None


def stale_checks(checks: dict, changed: dict) -> set:
    """The check items whose answer differs on the changed files' new text.  ``changed``: path -> (module,
    new bytes)."""
    from .regions import _ALIAS_RE, IMPORT_RE

    out = set()
    by_module = {m: data for m, data in changed.values()}
    for item, value in checks.items():
        if item[0] == "q":
            for path, (_, data) in changed.items():
                if _mentions(data, *item[1:]) != (path in value):
                    out.add(item)
                    break
        elif item[0] == "t" and item[1] in by_module:
            data = by_module[item[1]]
            names = {w for m in IMPORT_RE.finditer(data) for w in _IDENT.findall(m.group())}
            names.update(_ALIAS_RE.findall(data))
            if frozenset(names) != value:
                out.add(item)
    return out


def stale_units(state: IncState, items: set) -> set:
    """The units that read a changed item, and every unit that used one of them."""
    users: dict = {}
    for u, used in state.uses.items():
        for v in used:
            users.setdefault(v, []).append(u)
    ids = {state.items[it] for it in items if it in state.items}
    stale = {u for u, reads in state.reads.items() if not ids.isdisjoint(reads)}
    todo = list(stale)
    while todo:
        u = todo.pop()
        # forward: what used a stale unit; backward: the writers of a shared counter a stale unit read (the
        # context caps), so that the counter is what a full scan's is when it is read again
        for w in list(users.get(u, ())) + list(state.shared.get(u, ())):
            if w not in stale:
                stale.add(w)
                todo.append(w)
    return stale


class Incremental:
    """One scan's tracking, and the reuse of a previous scan's units (``old`` and ``plan``) when given."""

    def __init__(self, old: Optional[IncState] = None, plan: Optional[Plan] = None):
        self.old = old if plan is not None else None
        self.plan = plan
        self.t = Tracker(first_id=old.next_id if self.old is not None else 1)
        self.finds: dict = {}
        self.walks: list = []
        self.kept: set = set()  # old units whose results this scan reused
        self._old_walks: dict = {}
        if self.old is not None:
            for key, region, uid, result in self.old.walks:
                self._old_walks.setdefault(key, []).append((region, uid, result))
        self.walked = 0  # regions walked again
        self.reused = 0

    def install(self, program, reach, finder) -> None:
        track_program(self.t, program)
        track_reach(self.t, reach)
        track_finder(self.t, finder)

    def find(self, key: str, do_find, unresolved: list) -> list:
        old = self.old.finds.get(key) if self.old is not None else None
        if old is not None and old[0] not in self.plan.stale:
            uid, regions, unres = old
            self.kept.add(uid)
            unresolved.extend(unres)
            self.finds[key] = old
            return list(regions)
        n = len(unresolved)
        uid, regions = self.t.run(do_find)
        self.finds[key] = (uid, list(regions), list(unresolved[n:]))
        return regions

    def walk(self, key: str, region, do_walk):
        for i, (r, uid, result) in enumerate(self._old_walks.get(key, ())):
            if r == region and uid not in self.plan.stale:
                del self._old_walks[key][i]
                self.kept.add(uid)
                self.walks.append((key, region, uid, result))
                self.reused += 1
                return result
        uid, result = self.t.run(do_walk)
        self.walks.append((key, region, uid, result))
        self.walked += 1
        return result

    def state(self, candidates: tuple, modules: Optional[dict] = None) -> IncState:
        """``modules``: the program's loaded modules (their ModuleStub data is kept)."""
        st = self._state(candidates)
        if self.old is not None:
            st.modinfo.update((m, i) for m, i in self.old.modinfo.items())
        for name, m in (modules or {}).items():
            if m is not None and not isinstance(m, ModuleStub):
                st.modinfo[name] = module_info(m)
        return st

    def _state(self, candidates: tuple) -> IncState:
        table = dict(self.old.items) if self.old is not None else {}
        reads, uses = {}, {}
        for u, r in self.t.reads.items():
            used = self.t.uses[u]
            if u == ROOT or not (r or used):
                continue  # a unit that read nothing and used nothing is never stale
            reads[u] = tuple(table.setdefault(it, len(table)) for it in r)
            uses[u] = tuple(used)
        shared = {u: tuple(w) for u, w in self.t.shared.items() if u != ROOT and w}
        checks = {k: (frozenset(v) if isinstance(v, set) else v) for k, v in self.t.checks.items()}
        loaded = list(self.t.loaded)
        if self.old is not None:  # the old units still in use, and everything they used
            todo = list(self.kept)
            seen = set()
            while todo:
                u = todo.pop()
                if u in seen or u in reads:
                    continue
                seen.add(u)
                if u not in self.old.reads:
                    continue
                reads[u] = self.old.reads[u]
                uses[u] = self.old.uses.get(u, ())
                if u in self.old.shared:
                    shared[u] = self.old.shared[u]
                    todo.extend(shared[u])
                todo.extend(uses[u])
            for k, v in self.old.checks.items():
                if k[0] == "q":  # the files any unit saw answer, old or new: each path's answer is its text's
                    checks[k] = v | checks.get(k, frozenset())
                elif k not in checks:
                    checks[k] = v
            for k, v in checks.items():  # the edited files' answers are their new text's
                if k[0] == "q":
                    gone = {p for p, (_, data) in self.plan.texts.items() if p in v and not _mentions(data, *k[1:])}
                    if gone:
                        checks[k] = v - gone
            before = set(self.old.loaded)
            loaded = list(self.old.loaded) + [m for m in loaded if m not in before]
        root = {it[1] for it in self.t.reads[ROOT] if it[0] in _MODULE_ITEMS}
        st = IncState(reads, uses, checks, self.finds, self.walks, loaded, candidates, self.t.next_id)
        st.root_modules = frozenset(root)
        st.items = table
        st.shared = shared
        return st

    def modules_read(self, state: IncState) -> list:
        """The modules the units of ``state`` loaded, in load order."""
        mods = set(state.root_modules)
        read = set().union(*state.reads.values())
        mods.update(it[1] for it, i in state.items.items() if i in read and it[0] in _MODULE_ITEMS)
        return [m for m in state.loaded if m in mods]

    def stand_in(self, program, state: IncState, load) -> None:
        """Put in ``program.modules``, in load order, every module the units of ``state`` loaded: what this
        scan loaded itself, and for the others a ModuleStub (``load(name, path, is_package)`` reads the
        summary if a post-walk step asks for more than the stub holds)."""
        modules = program.modules
        ordered = {}
        for name in self.modules_read(state):
            if name in modules:
                ordered[name] = modules[name]
                continue
            info = state.modinfo.get(name)
            if info is None:
                ordered[name] = program.module(name)
                continue
            stub = ModuleStub(name, info, load)
            program.env_set.update(stub.env_keys_set)
            program.env_removed.update(stub.env_keys_removed)
            ordered[name] = stub
        rest = [(k, v) for k, v in modules.items() if k not in ordered]
        modules.clear()
        modules.update(ordered)
        modules.update(rest)


_MODULE_ITEMS = frozenset({"m", "f", "fx", "c", "b", "f*", "c*", "b*"})


def module_info(m) -> tuple:
    from .coverage import _import_sites

    return (m.path, m.is_package, tuple(m.env_keys_set), tuple(m.env_keys_removed), dict(m.suppressions),
            tuple(m.file_suppressions), m.error, tuple(_import_sites(m)))


class ModuleStub:
    """A module a reused region loaded, as the post-walk steps see it (lint/engine.py: the keys the program
    sets, suppressions, coverage's imports), without reading its summary; any other attribute reads it."""

    def __init__(self, name: str, info: tuple, load):
        self.name = name
        (self.path, self.is_package, self.env_keys_set, self.env_keys_removed, self.suppressions,
         self.file_suppressions, self.error, self.import_sites) = info
        self._load = load

    def __getattr__(self, attr):
        if attr.startswith("__") or attr in ("_load", "_real"):
            raise AttributeError(attr)
        real = self.__dict__.get("_real")
        if real is None:
            real = self.__dict__["_real"] = self._load(self.name, self.path, self.is_package)
        return getattr(real, attr)
