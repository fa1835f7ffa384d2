"""What an incremental scan keeps between runs (``IncState``, in the result cache beside the result), and how
an edit is planned from it (lint/incremental.py's docstring says the whole scheme): the items each changed
file's new summary changed (``changed_items``), the mention and import checks its new text answers otherwise
(``stale_checks``), the units that read one of them and every unit above those (``stale_units``: a ``Plan``),
and the context caps' first contexts in the previous scan (``seeds``)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Optional

from .summary import FunctionSummary, callee_name
from .tracking import _MISS, _TABLES, FUNCTION_PARTS


@dataclass
class IncState:
    """What an incremental scan keeps between runs (in the result cache, beside the result)."""
    reads: dict  # unit -> the ids (``items``) of the items it read
    uses: dict  # unit -> tuple of units
    checks: dict  # check item -> value
    finds: dict  # candidate module (or "public:pkg", "entry:spec") -> (unit, [Region], [UnresolvedRegion])
    walks: list  # [(top key, Region, unit, result, [WalkLog] of its walks: lint/reach_replay.py)] in scan order
    loaded: list  # modules loaded, in order
    candidates: tuple  # (module, likely) of each candidate, in order
    next_id: int = 1
    # module -> what the post-walk steps read of it (ModuleStub): a reused region's modules are not loaded
    modinfo: dict = field(default_factory=dict)
    root_modules: frozenset = frozenset()  # modules read outside any unit
    items: dict = field(default_factory=dict)  # item -> its id (a unit's reads are ids: a smaller state)
    # the context caps (lint/contexts.py), per (table, digest of the function): which contexts each top unit met
    # and which unit met each, in scan order: ((top unit, ((digest of the context, unit), ...)), ...)
    contexts: dict = field(default_factory=dict)
    tops: dict = field(default_factory=dict)  # top unit -> its place in the scan's order
    caps: dict = field(default_factory=dict)  # table -> its cap
    # (node, variant) -> (unit, what visiting the node does: Reach._steps), for every node unit still in use:
    # a region walked again takes the steps of the nodes whose unit is not stale, and works out the others
    steps: dict = field(default_factory=dict)
    # units a replayed walk checks itself (Tracker.replay_checked): stale, they do not keep a walk from replaying
    replay_checked: frozenset = frozenset()
    redone_units: frozenset = frozenset()  # what a replay does again itself (Tracker.redone_units)
    hook_units: frozenset = frozenset()  # of those, which functions register hooks (Tracker.hook_units)
    # the index of which scanned files mention which identifiers (program/locator.py): (files, parts) or None;
    # the next scan takes it over, the edited files' entries worked out again (building it reads every file)
    mentions: Optional[tuple] = None
    # package on the search path -> what the scan asked of its mention index (locator.package_index_use): a warm
    # process builds those after answering from a result (keptstates.write_kept_states)
    package_mentions: dict = field(default_factory=dict)
    # the package directories the scans listed (ModuleLocator.listed_dirs), in order: a warm process lists them
    # after answering from a result (keptstates.write_kept_states)
    package_dirs: tuple = ()
    # the units every other one lies below (through ``uses``): the top units, and what ran or was used outside
    # any; not those a unit uses, which may make a cycle with its user (a memo entry hit while being made)
    roots: frozenset = frozenset()
    # each walk's findings hold one finding per hazard key (engine.walk_one merged them; not the pre-commit
    # hook's, every path kept): a warm process may merge them again for the next edit (postwalk.merge_of_state)
    merged_per_key: bool = False

    def header(self) -> tuple:
        """What an edit that changed no summary (a comment) asks of the state: (checks, candidates).  Pickled
        on its own at the head of the state's file, and read alone there (keptstates.read_state_header)."""
        return self.checks, self.candidates

    def users(self) -> dict:
        """unit -> the units that used it (``uses`` reversed).  Kept on the object, not pickled: a warm process
        works it out after answering (keptstates.write_kept_states), not in the next edit's plan (a seventh of
        a leaf edit's answer on the bench site)."""
        got = self.__dict__.get("_users")
        if got is None:
            got = {}
            for u, used in self.uses.items():
                for v in used:
                    got.setdefault(v, []).append(u)
            self.__dict__["_users"] = got
        return got

    def readers(self, build: bool = True) -> Optional[dict]:
        """item id -> the units that read it (``reads`` reversed), or None if not worked out and not ``build``.
        Kept on the object, not pickled: a warm process works it out after answering, and the next edit's plan
        finds the units that read a changed item from it (stale_units) instead of searching every unit's
        reads (the bench site's 1.3 M units: 0.18 s of a leaf edit's answer)."""
        got = self.__dict__.get("_readers")
        if got is None and build:
            got = {}
            for u, reads in self.reads.items():
                for i in reads:
                    r = got.get(i)
                    if r is None:
                        got[i] = [u]
                    else:
                        r.append(u)
            self.__dict__["_readers"] = got
        return got

    def module_readers(self) -> tuple:
        """(module -> how many units read one of its items, item id -> its module or None).  Kept on the
        object, not pickled: a warm process works them out after answering (keptstates.write_kept_states),
        and each edit's state carries them on from its dead and new units (Incremental._state), so that the
        modules its units read (Incremental.modules_read) are not looked for in every unit's reads again (the
        bench site's 5 M: 0.27 s of a leaf edit's answer)."""
        got = self.__dict__.get("_module_readers")
        if got is None:
            module_of: list = [None] * len(self.items)
            for it, i in self.items.items():
                if it[0] in MODULE_ITEMS:
                    module_of[i] = it[1]
            counts: dict = {}
            for r in self.reads.values():
                _count_modules(counts, module_of, r, 1)
            got = self.__dict__["_module_readers"] = (counts, module_of)
        return got

    def carried_module_readers(self, dead: set, new_reads) -> Optional[tuple]:
        """module_readers() as the next state's (Incremental._state), if worked out: the units ``dead`` counted
        off, the next scan's ``new_reads`` counted, the items this scan added to ``items`` (the next state's
        table, grown in place) given their modules.  Before the dead units' reads are taken out."""
        readers = self.__dict__.get("_module_readers")
        if readers is not None:
            counts, module_of = readers
            # the items added last, from the end (islice from the start walks every item before them)
            added = list(islice(reversed(self.items), len(self.items) - len(module_of)))
            module_of.extend(None if it[0] not in MODULE_ITEMS else it[1] for it in reversed(added))
            for u in dead:
                _count_modules(counts, module_of, self.reads[u], -1)
            for r in new_reads:
                _count_modules(counts, module_of, r, 1)
        return readers

    def keep_merge(self, memo) -> None:
        """The merge of the scan that made this state (postwalk.MergeMemo), for the next scan's merge to fold
        against.  Kept on the object, not pickled: only a warm process keeps merges."""
        if memo is not None:
            self.__dict__["_merge"] = memo

    def take_merge(self):
        """The merge kept with this state (keep_merge), or None; taken: the next merge changes it in place."""
        return self.__dict__.pop("_merge", None)

    def __getstate__(self):
        d = dict(self.__dict__)
        for attr in ("_users", "_spent", "_module_readers", "_readers", "_merge"):
            d.pop(attr, None)
        return d

    @property
    def spent(self) -> bool:
        """Its tables became the next scan's state (Incremental._state): no longer this state's."""
        return self.__dict__.get("_spent", False)


class PendingState:
    """A full scan's IncState, built when it is first needed (``built``): by the child that writes a command's
    cache entries behind it, or by a warm process after its answer (lint/keptstates.py), not while the user
    waits -- on the bench site, building it was 25 s of the cold scan's 261 s, and 0.6 GB over the walks'
    peak.  ``build`` makes it from the scan's tracker as the walks left it (Tracker.detach: the post-walk
    steps add nothing to it); a merge kept before (``keep_merge``, ``merged_per_key``) goes on the state built."""

    spent = False  # (as IncState.spent: its tables are nobody else's)

    def __init__(self, build):
        self._build = build
        self._state: Optional[IncState] = None
        self.merged_per_key = False
        self._merge = None

    def keep_merge(self, memo) -> None:
        self._merge = memo

    def built(self) -> IncState:
        if self._state is None:
            st = self._build()
            self._build = None
            st.merged_per_key = self.merged_per_key
            st.keep_merge(self._merge)
            self._merge = None
            self._state = st
        return self._state


def built(state):
    """``state`` as an IncState: a PendingState built."""
    return state.built() if isinstance(state, PendingState) else state


@dataclass
class Plan:
    """What an edit changed: the stale units, and how many files were re-indexed to know it."""
    stale: set
    changed_items: set
    reindexed: int = 0
    changed_files: list = field(default_factory=list)
    texts: dict = field(default_factory=dict)  # path -> (module, new bytes) of each edited file
    # the context caps whose first contexts moved in an earlier try of this scan (ContextsMoved): (table,
    # digest of the function) -> (the digests of its first contexts in that try's order, where the top unit
    # that reached the cap ran in the previous scan's order or None): the next try answers from those
    reseeded: dict = field(default_factory=dict)
    # the previous scan's units that met a context whose precision those first contexts change: they run
    # again (not replayed: a replay does not ask its contexts again), with their users
    recount: frozenset = frozenset()

    def reseeding(self, state: IncState, moved: dict) -> "Plan":
        """This plan with the first contexts of more context caps taken from the try that found them moved
        (ContextsMoved.first): the units that met a context those make precise where the previous scan
        widened it, or the other way round, are stale; the others answered as a full scan in this order
        would.  Before (session 31), every unit that met such a function ran again, counting from nothing:
        the bench's flashinfer_megamoe leaf edit moved 6 caps met by hundreds of top units, and was a full
        scan."""
        from dataclasses import replace

        recount = set(self.recount)
        for k, (precise, _) in moved.items():
            entries = state.contexts.get(k, ())
            changed = first_contexts(entries, state.caps[k[0]])[0] ^ precise  # (a moved cap is one it had)
            recount.update(u for _, evs in entries for d, u in evs if d in changed)
        return replace(self, stale=stale_units(state, self.changed_items, recount),
                       reseeded={**self.reseeded, **moved}, recount=frozenset(recount))


@dataclass
class Seed:
    """A context cap's first contexts in the previous scan (TrackedContextCaps), for a function whose order
    the edit left decided."""
    key: int  # the digest of the function
    precise: set  # the digests of its precise contexts (at most the cap)
    cap_pos: Optional[float]  # where the top unit that reached the cap ran (IncState.tops); None: below it


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
        if kind == "f":
            whole = bool(a.keys() ^ b.keys())
            for k in keys:
                parts = function_changes(a.get(k), b.get(k), mod, k)
                out.update(parts)
                whole = whole or (kind, mod, k) in parts
            out.update(("fx", mod, k) for k in a.keys() ^ b.keys())  # added or removed: what a report's text reads
            if whole:  # an iteration of the table reads the functions' parts through their own items
                out.add(("f*", mod))
            continue
        out.update((kind, mod, k) for k in keys)
        if keys:
            out.add((kind + "*", mod))
    rest = ("name", "is_package", "star_imports", "dunder_all", "stores", "required_imports", "env_keys_set",
            "env_keys_removed", "suppressions", "file_suppressions", "error")
    if any(getattr(old, r) != getattr(new, r) for r in rest):
        out.add(("m", mod))
    return out


_SIGNATURE = tuple(n for n in FunctionSummary.__slots__
                   if n != "locals" and all(n not in names for _, names in FUNCTION_PARTS))


def function_changes(old, new, mod: str, qual: str) -> set:
    """The items of one function that differ (tracking.FUNCTION_PARTS): its signature ("f"), its body's
    calls/attributes/effects ("fc"), what a call of it gives ("fv"), each local name ("fl", and "fl*")."""
    fid = f"{mod}:{qual}"
    if old is None or new is None:
        return {("f", mod, qual), ("fl*", fid)} | {(kind, mod, qual) for kind, _ in FUNCTION_PARTS} | {
            ("fl", fid, n) for n in dict(getattr(old or new, "locals"))} | {
            ("fcn", mod, qual, n) for n in _calls_by_name((old or new).calls)}
    out = set()
    if old.calls != new.calls:  # the names whose calls differ (FunctionSummary.calls_named)
        a, b = _calls_by_name(old.calls), _calls_by_name(new.calls)
        out.update(("fcn", mod, qual, n) for n in a.keys() | b.keys() if a.get(n) != b.get(n))
    if any(getattr(old, n) != getattr(new, n) for n in _SIGNATURE):
        out.add(("f", mod, qual))
    for kind, names in FUNCTION_PARTS:
        if any(getattr(old, n) != getattr(new, n) for n in names):
            out.add((kind, mod, qual))
    a, b = dict(old.locals), dict(new.locals)
    names = {n for n in a.keys() | b.keys() if a.get(n, _MISS) != b.get(n, _MISS)}
    if names:
        out.update(("fl", fid, n) for n in names)
        out.add(("fl*", fid))
    return out


def _calls_by_name(calls: tuple) -> dict:
    out: dict = {}
    for c in calls:
        n = callee_name(c.func)
        if n is not None:
            out.setdefault(n, []).append(c)
    return out


_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_WORD_RUN = re.compile(rb"[A-Za-z0-9_]+")


class TextMentions:
    """The answers of one file's text to mention queries (program/locator.py's _MentionIndex), each index
    built on its first use: a changed file is asked thousands of them (one per check item), and a regex per
    needle over the text was 7 % of a one-file edit's scan."""

    def __init__(self, data: bytes):
        self.data = data
        self._bases: Optional[set] = None
        self._called: Optional[set] = None
        self._words: Optional[set] = None

    def mentions(self, needle: bytes, in_bases: bool, called: bool = False) -> bool:
        from .program.locator import _base_words, _called_words

        if in_bases:
            if self._bases is None:
                self._bases = _base_words(self.data)
            return needle in self._bases
        if called:
            if self._called is None:
                self._called = _called_words(self.data)
            return needle in self._called
        if _WORD_RUN.fullmatch(needle) is None:  # not one run of word characters: the locator's own search
            return _mentions(self.data, needle, False)
        # a run of word characters bounded by non-word characters on both sides is one of the text's maximal
        # runs, and each such run is one
        if self._words is None:
            self._words = set(_WORD_RUN.findall(self.data))
        return needle in self._words


def _mentions(data: bytes, needle: bytes, in_bases: bool, called: bool = False) -> bool:
    """Whether a file's text answers a mention query (program/locator.py's _MentionIndex)."""
    from .program.locator import _base_words, _called_words, _mentions_word

    if in_bases:
        return needle in _base_words(data)
    if called:
        return needle in _called_words(data)
    return _mentions_word(data, needle)


def stale_checks(checks: dict, changed: dict) -> set:
    """The check items whose answer differs on the changed files' new text.  ``changed``: path -> (module,
    new bytes)."""
    from .regions import _ALIAS_RE, IMPORT_RE

    out = set()
    texts = {path: TextMentions(data) for path, (_, data) in changed.items()}
    by_module = {m: data for m, data in changed.values()}
    for item, value in checks.items():
        if item[0] == "q":
            for path, text in texts.items():
                if text.mentions(*item[1:]) != (path in value):
                    out.add(item)
                    break
        elif item[0] == "t" and item[1] in by_module:
            data = by_module[item[1]]
            names = {w for m in IMPORT_RE.finditer(data) for w in _IDENT.findall(m.group())}
            names.update(_ALIAS_RE.findall(data))
            if frozenset(names) != value:
                out.add(item)
    return out


def stale_units(state: IncState, items: set, recount=frozenset()) -> set:
    """The units that read a changed item, and every unit that used one of them.

    ``recount``: units that met a context whose precision a moved context cap changes (Plan.reseeding): they
    are stale too."""
    if not items and not recount:
        return set()  # (the users are some 1.4 million units' worth of work: 0.9 s of a comment edit)
    users = state.users()
    ids = {state.items[it] for it in items if it in state.items}
    readers = state.readers(build=False)
    if readers is not None:
        stale = {u for i in ids for u in readers.get(i, ())}
    else:
        stale = {u for u, reads in state.reads.items() if not ids.isdisjoint(reads)}
    stale |= recount
    todo = list(stale)
    while todo:
        u = todo.pop()
        for w in users.get(u, ()):
            if w not in stale:
                stale.add(w)
                todo.append(w)
    return stale


def first_contexts(entries, cap: int) -> tuple:
    """(the digests of a context cap's precise contexts, the top unit where it reached the cap or None)."""
    precise: dict = {}
    for top, evs in entries:
        for d, _ in evs:
            if d not in precise:
                precise[d] = None
                if len(precise) == cap:
                    return set(precise), top
    return set(precise), None


def in_previous_order(key, by_top: dict, tops: list, before: dict) -> None:
    """Put the contexts of a function that each top unit run again met (``by_top``: top unit -> [(digest,
    unit)], ``tops`` in this scan's order) in the order the previous scan met them in that unit (``before``),
    where the unit met the same contexts new to the function there (not met by an earlier top unit).

    Which contexts come first is decided by the order they are met in; a top unit run again works out in a
    fresh program what the previous scan had worked out in earlier units (memo entries), and so meets the
    same contexts in another order.  A full scan of the edited tree, with those earlier units' entries, meets
    them in the previous scan's order where the edit changed nothing they are worked out from (a context new
    or no longer met says it did: this scan's order then, and the caps' checks as before).  Measured on the bench site's leaf edits (session 33): of the six
    functions whose first contexts the flashinfer_megamoe edit moved, five were met by the unit it ran
    again -- the region that had reached their cap -- in another order only; the muse_spark edit's 14
    moved likewise, and it scanned incrementally with a full scan's findings."""
    seen: set = set()
    for top in tops:
        evs = by_top[top]
        previous = before.get((key, top))
        if previous is not None:
            met = [d for d, _ in evs]
            if met == [d for d, _ in previous] and len(set(met)) == len(met):
                seen.update(met)  # (met as before, each once: already in that order -- a replayed walk's are)
                continue
            first_at: dict = {}
            for i, (d, _) in enumerate(previous):
                first_at.setdefault(d, i)
            if {d for d, _ in evs} - seen == first_at.keys() - seen:
                last = len(first_at)  # (one not met here before was met by an earlier unit: it counts for nothing)
                evs.sort(key=lambda e: first_at.get(e[0], last))
        seen.update(d for d, _ in evs)


def tops_in_order(entries: tuple, order: dict) -> bool:
    """Whether every top unit of a context cap's ``entries`` (IncState.contexts) is one ``order`` places (a
    top unit this scan reused whole), in the order they are in."""
    last = -1
    for top, _ in entries:
        pos = order.get(top)
        if pos is None or pos <= last:
            return False
        last = pos
    return True


def seeds(state: IncState, reseeded: dict) -> dict:
    """table -> {digest of a function: Seed} for every context cap of the previous scan (TrackedContextCaps):
    its first contexts there, or those an earlier try of this scan found (Plan.reseeded)."""
    out: dict = {}
    for (table, key), entries in state.contexts.items():
        got = reseeded.get((table, key))
        if got is not None:
            out.setdefault(table, {})[key] = Seed(key, set(got[0]), got[1])
            continue
        precise, top = first_contexts(entries, state.caps[table])
        out.setdefault(table, {})[key] = Seed(key, precise, None if top is None else state.tops.get(top, -1.0))
    return out


def _count_modules(counts: dict, module_of: list, read: tuple, step: int) -> None:
    """Add ``step`` to the count of each module one of the item ids ``read`` belongs to (once per module)."""
    for m in {module_of[i] for i in read}:
        if m is not None:
            counts[m] = counts.get(m, 0) + step


MODULE_ITEMS = frozenset({"m", "f", "fx", "fc", "fv", "c", "b", "f*", "c*", "b*"})
