"""Incremental analysis: after an edit, walk again only the regions whose inputs changed.

What each unit of a scan read is recorded by lint/tracking.py (its docstring says how).

After an edit whose file set is unchanged, each changed file's old and new summaries are compared item by
item; the units that read a changed item are stale, and so is every unit that used a stale one (the
dependency edges, followed forward).  The scan then runs in a fresh program with the same order of units:
a top unit that is not stale returns its recorded result (the regions a file holds, a region's findings);
a stale one runs again, tracked.  A region walked again takes what visiting each node does (its steps,
``IncState.steps``) from the previous scan where that node's unit is not stale: it works out again only the
nodes the edit touched, and walks the rest from the kept steps.  Where the edit changed no call of those
nodes, the region is not walked at all but replayed from its walk log (lint/reach_replay.py): only its
hazards are reported again.  Anything not tracked (a new or deleted file, another search path, other options,
the user's facts) makes a full scan, as before.

Which contexts of a function are worked out precisely (its first ones in scan order: lint/contexts.py) is no
unit's read: the scan keeps, per function, which top unit met which contexts (``IncState.contexts``), answers
from the previous scan's first contexts (lint/tracking.py's TrackedContextCaps), and checks after the walks
that they are still first in this scan's order (``Incremental.settle``); where they moved, it is planned again
from the first contexts that try found, with every unit that met a context whose precision they change stale
(``Plan.reseeding``).
"""
from __future__ import annotations

from typing import Optional

from .contexts import digest
from .incstate import (MODULE_ITEMS, IncState, Plan, TextMentions, first_contexts, in_previous_order, seeds,
                       tops_in_order)
from .modulestub import ModuleStub, PutAside, module_info
from .postwalk import keeps_merges
from .tracking import (_MISS, ROOT, ContextsMoved, TrackedMap, TrackedMemo,  # noqa: F401
                       Tracker, mention_files, track_finder, track_program, track_reach)
from .walkresults import LogPacker, ResultPacker


class Incremental:
    """One scan's tracking, and the reuse of a previous scan's units (``old`` and ``plan``) when given."""

    def __init__(self, old: Optional[IncState] = None, plan: Optional[Plan] = None):
        self.old = old if plan is not None else None
        self.plan = plan
        self.t = Tracker(first_id=old.next_id if self.old is not None else 1,
                         item_ids=self.old.items if self.old is not None else None)
        self.finds: dict = {}
        self.walks: list = []  # (key, region, unit, result, logs) in scan order
        # a full scan's results held as ints until its state is built, after the answer (lint/walkresults.py)
        self._packer = ResultPacker() if self.old is None and not keeps_merges() else None
        self._log_packer = LogPacker() if self._packer is not None else None  # (its walk logs likewise)
        self.kept: set = set()  # old units whose results this scan reused
        self._old_walks: dict = {}
        if self.old is not None:
            for key, region, uid, result, logs in self.old.walks:
                self._old_walks.setdefault(key, []).append((region, uid, result, logs))
        self.walked = 0  # regions walked again
        self.reused = 0
        self.replayed = 0  # of the regions walked again, those replayed from their log (lint/reach_replay.py)
        # unit -> the ids of the items its replayed walk's log stands for (what the logged traversal read)
        self._replay_reads: dict = {}
        self._replay_safe: Optional[set] = None  # the stale units a walk may have used and be replayed
        self._stale_unsafe: set = set()  # the stale units that are not (_replayable)
        self._stale_reporting: set = set()  # the stale units that are neither steps nor checked (_reports_unchanged)
        self._redone: Optional[set] = None  # the units a replay uses again itself (steps, reports, entries)
        # the previous scan's units of nodes' steps, and those a replay checks itself: _reports_unchanged
        self._steps_units: Optional[set] = None
        self._not_kept_memo: dict = {}  # _not_kept
        self._steps_units_old: Optional[set] = None  # _old_steps_units
        self._changed_ids: Optional[set] = None
        self._moved: dict = {}
        self._stale_steps: Optional[dict] = None  # variant -> its nodes whose steps are stale: _stale_nodes
        self._reach = None
        self._program = None
        self.tops: dict = {}  # top unit (reused: the previous scan's) -> its place in this scan
        self._rerun: dict = {}  # the previous scan's top unit -> this scan's that ran it again
        self._replayed: dict = {}  # the previous scan's walk -> this scan's that replayed its log
        self._last_old_pos = -1.0
        self._contexts: Optional[dict] = None  # IncState.contexts, once settled
        self._dead: Optional[set] = None  # _dead_old
        self._old_pos: dict = {}  # top unit of this scan -> its place in the previous scan's order (_at_top)
        self._log_values: tuple = ({}, {}, {}, {})  # _share_log_values's nodes, links, conditions, facts

    def install(self, program, reach, finder) -> None:
        caps = seeds(self.old, self.plan.reseeded) if self.old is not None else {}
        track_program(self.t, program, caps)
        self._program = program
        if self.old is not None and self.old.mentions is not None:
            files, parts = self.old.mentions
            program._mention_index.kept = (files, parts, {p: data for p, (_, data) in self.plan.texts.items()})
        track_reach(self.t, reach, self._reuse_steps if self.old is not None else None, caps)
        track_finder(self.t, finder)
        self._reach = reach
        reach.walk_logs = []
        if self.old is not None:
            reach.child_steps_moved = self._child_steps_moved
            reach.replay_old_steps = lambda node, variant: self.old.steps[(node, variant)][1]
            reach.replay_stale_nodes = self._stale_nodes
            for _, variant in self.old.steps:  # (the previous scan's objects: its keys then compare by identity)
                reach._variants.setdefault(variant, variant)

    def _reuse_steps(self, key):
        old = self.old.steps.get(key)
        if old is None or old[0] in self.plan.stale:
            return None
        self.kept.add(old[0])
        return old

    @property
    def steps_reused(self) -> int:
        """Nodes whose steps the regions walked again took from the previous scan: the steps units it kept
        (looked up, or kept by a replay from the log's index without looking them up; a replay that takes
        every event looks them up)."""
        return len(self.kept.intersection(self._old_steps_units())) if self.old is not None else 0

    @property
    def steps_walked(self) -> int:
        """Nodes whose steps this scan worked out (the others were taken from the previous scan)."""
        if self._reach is None:
            return 0
        first = self.old.next_id if self.old is not None else 1
        return sum(1 for _, uid in dict.values(self._reach._steps_memo) if uid >= first)

    def _at_top(self, old_uid: Optional[int]) -> None:
        """The context caps' place in the previous scan's order: where it ran ``old_uid``, or for a top unit
        new to this scan, just after the last one it ran."""
        pos = self.old.tops.get(old_uid) if self.old is not None and old_uid is not None else None
        if pos is None:
            pos = self._last_old_pos + 0.5
        else:
            self._last_old_pos = pos
        self.t.top_old_pos = pos

    def _reused_top(self, uid: int) -> None:
        self._at_top(uid)
        self.tops[uid] = len(self.tops)
        self._old_pos[uid] = self.t.top_old_pos
        self.t.top_old_pos += 0.5  # (what runs outside any top unit runs after it)

    def _run_top(self, old_uid: Optional[int], fn) -> tuple:
        """``fn()`` as a top unit (Tracker.run): (unit, result)."""
        self._at_top(old_uid)
        t = self.t
        uid = t.top = t.next_id  # (the unit that run opens)
        self.tops[uid] = len(self.tops)
        self._old_pos[uid] = t.top_old_pos
        if old_uid is not None:
            self._rerun[old_uid] = uid
        try:
            return t.run(fn)
        finally:
            t.top = ROOT
            t.top_old_pos += 0.5

    def find(self, key: str, do_find, unresolved: list) -> list:
        old = self.old.finds.get(key) if self.old is not None else None
        if old is not None and old[0] not in self.plan.stale:
            uid, regions, unres = old
            self.kept.add(uid)
            self._reused_top(uid)
            unresolved.extend(unres)
            self.finds[key] = old
            return list(regions)
        n = len(unresolved)
        uid, regions = self._run_top(old[0] if old is not None else None, do_find)
        self.finds[key] = (uid, list(regions), list(unresolved[n:]))
        return regions

    def walk(self, key: str, region, do_walk):
        reach = self._reach
        old_uid = matched = None
        for i, (r, uid, result, logs) in enumerate(self._old_walks.get(key, ())):
            if r != region:  # (a dataclass's comparison, field by field: once)
                continue
            if uid not in self.plan.stale:
                del self._old_walks[key][i]
                self.kept.add(uid)
                self._reused_top(uid)
                self.walks.append((key, region, uid, result, logs))
                self.reused += 1
                return result
            if matched is None:
                matched = uid
            if old_uid is None and logs and self._replayable(uid):
                old_uid = uid
                reach.replay_logs = list(logs)
                if self._reports_unchanged(uid):
                    reach.replay_findings = result[0]  # (engine.walk_one's result: the merged findings first)
        reach.walk_logs, reach.replayed = [], 0
        keeping_before, indexed_before = reach.replays_keeping, reach.replays_indexed
        try:
            uid, result = self._run_top(matched, do_walk)
        finally:
            reach.replay_logs = reach.replay_findings = None
        if reach.replayed:
            self._replayed[old_uid] = uid
            self.replayed += 1
            # what the logged traversal read and used (none of it changed: _replayable), for the next edit's
            # plan; not the steps, reports and entries, which the replay used again itself (kept, they would
            # pile up, one more set each replay) -- but the hooks a replay keeping findings took as they were,
            # and the steps a replay from the log's index did not look up (reach_replay_indexed: the kept ones)
            self._replay_reads[uid] = self.old.reads.get(old_uid, ())
            indexed = reach.replays_indexed != indexed_before
            kept = set(self.old.uses.get(old_uid, ())).difference(
                self._not_kept(reach.replays_keeping != keeping_before, indexed))
            self.kept.update(kept)
            kept.update(self.t.uses[uid])  # (its own uses: this scan's units, in no previous table)
            self.t.uses[uid] = tuple(kept)
        self._share_log_values(reach.walk_logs)
        if self._log_packer is not None:
            self._log_packer.pack(reach.walk_logs)
        held = self._packer.pack(result) if self._packer is not None else result
        self.walks.append((key, region, uid, held, reach.walk_logs))
        self.walked += 1
        return result

    def _share_log_values(self, logs: list) -> None:
        """A walk's new log events with one object per node, parent link, path's conditions and facts on
        ``self`` (shared with the other logs of this scan), as soon as the walk ends: the walk makes one of
        each per change, which the untracked scan drops with the walk (on the benchmark site 1,033,934
        changes held 28,772 distinct links and 248,978 distinct conditions; the logs 250 MB at the walks' end,
        136 MB so).  _compact_logs does the rest for the state (the changes themselves, the links' actions as
        the steps table keeps them)."""
        _one_per_value(logs, *self._log_values)

    def _old_steps_units(self) -> set:
        """The previous scan's units of nodes' steps."""
        if self._steps_units_old is None:
            self._steps_units_old = {e[0] for e in self.old.steps.values()}
        return self._steps_units_old

    def _not_kept(self, keeping: bool, indexed: bool) -> set:
        """The previous scan's units a replayed walk does not keep using: the stale ones, and those it used
        again itself (Incremental.walk) -- but the hooks, where it kept findings, and the steps, where it went
        from the log's index.  (One set per kind of replay and scan: a replay's uses are some 10,000 units.)"""
        got = self._not_kept_memo.get((keeping, indexed))
        if got is None:
            redone = self._redone
            if keeping:
                redone = redone - self.old.hook_units
            if indexed:
                redone = redone - self._old_steps_units()
            got = self._not_kept_memo[(keeping, indexed)] = self.plan.stale | redone
        return got

    def _replayable(self, uid: int) -> bool:
        """Whether a stale region walk may be replayed from its log: it read no changed item itself, and the
        only stale units it used are nodes' steps (whose calls the replay compares: _child_steps_moved), what
        the reports say and the entries (done again) and what the replay checks itself (IncState.replay_checked).
        What else its traversal used (the entries, a memo's value) is unchanged then."""
        if self._changed_ids is None:
            self._changed_ids = {self.old.items[it] for it in self.plan.changed_items if it in self.old.items}
            self._redone = self._old_steps_units() | self.old.redone_units
            self._replay_safe = self._redone | self.old.replay_checked
            # (the stale units that are none of those, looked for in each walk's uses in C: a replay's uses
            # are some 10,000 units, the bench's kkt edit replays 123 walks)
            self._stale_unsafe = self.plan.stale - self._replay_safe
        if uid in self.plan.recount or not self._changed_ids.isdisjoint(self.old.reads.get(uid, ())):
            return False
        return self._stale_unsafe.isdisjoint(self.old.uses.get(uid, ()))

    def _reports_unchanged(self, uid: int) -> bool:
        """Whether the only stale units a replayable walk used are nodes' steps and what the replay checks
        itself (the facts on ``self`` that an edited node's calls give): not what a report says, nor the hooks;
        a replay may then keep the findings of the hazards the edit did not touch (reach_replay._KeepingReplay)."""
        if self._steps_units is None:
            self._steps_units = self._old_steps_units() | self.old.replay_checked
            self._stale_reporting = self.plan.stale - self._steps_units
        return self._stale_reporting.isdisjoint(self.old.uses.get(uid, ()))

    def _stale_nodes(self, variant) -> list:
        """The nodes of ``variant`` whose steps the previous scan kept and the edit made stale (worked out
        again where a replay meets them: reach_replay_indexed.IndexedReplay)."""
        if self._stale_steps is None:
            self._stale_steps = {}
            stale = self.plan.stale
            for (node, v), e in self.old.steps.items():
                if e[0] in stale:
                    self._stale_steps.setdefault(v, []).append(node)
        return self._stale_steps.get(variant, ())

    def _child_steps_moved(self, node, variant, steps):
        """How ``node``'s steps moved since the previous scan (ReplayMixin): None if they are the kept ones,
        {old index: new index} of its calls if they were worked out again and its calls are the same (but
        for where they are: _calls_moved), False if its calls changed."""
        key = (node, variant)
        old = self.old.steps.get(key)
        if old is None:
            return False
        if steps is old[1]:
            return None
        got = self._moved.get(key, _MISS)
        if got is _MISS:
            got = self._moved[key] = _calls_moved(old[1], steps)
        return got

    def state(self, candidates: tuple, modules: Optional[dict] = None) -> IncState:
        """``modules``: the program's loaded modules (their ModuleStub data is kept)."""
        st = self._state(candidates)
        if self.old is not None:
            st.modinfo.update((m, i) for m, i in self.old.modinfo.items())
        for name, m in (modules or {}).items():
            if m is None:
                continue
            if m.__class__ is PutAside:  # (read by this scan, then put aside: what its stub holds)
                st.modinfo[name] = m.info
            elif not isinstance(m, ModuleStub):
                st.modinfo[name] = module_info(m)
        return st

    def _state(self, candidates: tuple) -> IncState:
        if self.old is not None:  # its tables become this state's (below): not to be planned from again
            self.old.__dict__["_spent"] = True
        table = self.t.item_ids  # (the previous state's, grown in place: Tracker)
        if self._packer is not None:
            self._packer.unpack_all(self.walks)
            self._log_packer.unpack_all(self.walks)
        reads, uses = {}, {}
        # one tuple per value (1.27 M read tuples held 491 K values, 1.07 M use tuples 236 K); the tracker held
        # them flat (lint/units.py), the state's plan iterates dicts of tuples faster
        one: dict = {}
        for (u, r), (u_, used) in zip(self.t.reads.items(), self.t.uses.items(), strict=True):
            assert u == u_, "a unit's reads without its uses"  # (every closed unit has both: Tracker._freeze)
            if not (r or used):
                continue  # a unit that read nothing and used nothing is never stale
            if u in self._replay_reads:  # ids of the same table (it starts as the previous scan's)
                r = tuple(set(r).union(self._replay_reads[u]))
            reads[u] = one.setdefault(r, r)
            uses[u] = one.setdefault(used, used)
        checks = {k: (frozenset(v) if isinstance(v, set) else v) for k, v in self.t.checks.items()}
        loaded = list(self.t.loaded)
        dead: set = set()
        readers = None
        if self.old is not None:  # the old units still in use, and everything they used
            # the previous state's tables become this one's, its dead units taken out (copying the 1.3 M units
            # still in use on the benchmark site took 0.3 s of an edit's answer)
            dead = self._dead_old()
            old = self.old
            readers = old.carried_module_readers(dead, reads.values())
            for u in dead:
                del old.reads[u], old.uses[u]
            old.reads.update(reads)
            old.uses.update(uses)
            reads, uses = old.reads, old.uses
            for k, v in self.old.checks.items():
                if k[0] == "q":  # the files any unit saw answer, old or new: each path's answer is its text's
                    checks[k] = v | checks.get(k, frozenset())
                elif k not in checks:
                    checks[k] = v
            texts = {p: TextMentions(data) for p, (_, data) in self.plan.texts.items()}
            for k, v in checks.items():  # the edited files' answers are their new text's
                if k[0] == "q":
                    gone = {p for p, text in texts.items() if p in v and not text.mentions(*k[1:])}
                    if gone:
                        checks[k] = v - gone
            before = set(self.old.loaded)
            loaded = list(self.old.loaded) + [m for m in loaded if m not in before]
        root = {it[1] for it in self.t.open_reads[ROOT] if it[0] in MODULE_ITEMS}
        st = IncState(reads, uses, checks, self.finds, self.walks, loaded, candidates, self.t.next_id)
        st.root_modules = frozenset(root)
        if readers is not None:
            st.__dict__["_module_readers"] = readers
        st.roots = frozenset(self.t.open_uses[ROOT]).union(self.tops)  # (a reused top unit is the previous scan's)
        index = self._program._mention_index.get(None) if self._program is not None else None
        if index is None and self.old is not None and self.old.mentions is not None:
            # not asked this scan: the previous index with this scan's edits, for the next one
            from .program.locator import _MentionIndex

            files, parts = self.old.mentions
            index = _MentionIndex(list(files))
            index.restore(parts, {p: data for p, (_, data) in self.plan.texts.items()})
        if index is not None:
            st.mentions = (mention_files(index), index.parts())
        if self.old is not None:
            st.package_mentions.update(self.old.package_mentions)
        if self._program is not None:
            from .program.locator import package_index_use

            st.package_mentions.update((top, package_index_use(index)) for top, index
                                       in self._program._mention_index.items() if top is not None)
        st.package_dirs = tuple(dict.fromkeys(
            (self.old.package_dirs if self.old is not None else ())
            + (tuple(self._program.locator.listed_dirs) if self._program is not None else ())))
        st.items = table
        st.contexts = self._contexts if self._contexts is not None else self._contexts_table(dead)
        st.caps = self._caps()
        st.tops = dict(self.tops)
        light: dict = {}  # id(act) -> the act as kept (_portable): one object in the steps table and the logs
        st.steps = self._steps_table(reads, light, dead)
        self._compact_logs(light)
        for kind in ("replay_checked", "redone_units", "hook_units"):
            units = getattr(self.t, kind) | (getattr(self.old, kind) if self.old is not None else frozenset())
            setattr(st, kind, frozenset(u for u in units if u in reads))
        return st

    def _dead_old(self) -> set:
        """The previous scan's units no longer in use: those no unit this scan kept (reused, or used again by a
        unit it ran) reaches through what they used.  Looked for down from the previous scan's roots
        (IncState.roots) that this scan did not keep: each, and each unit below a dead one, is dead unless a
        chain of its users leads up to a kept unit.  A leaf edit on the benchmark site leaves some 900 of
        1.3 M units dead; marking the live ones instead (down from the kept units) took 0.5 s of its answer."""
        if self._dead is not None:
            return self._dead
        old_reads, old_uses, users, kept = self.old.reads, self.old.uses, self.old.users(), self.kept
        alive: set = set()  # units found to lie below a kept one
        dead: set = set()
        todo = [None]  # (None: the roots)
        while todo:
            u = todo.pop()
            for c in self.old.roots if u is None else old_uses.get(u, ()):
                if c in kept or c in alive or c in dead or c not in old_reads:
                    continue  # (a unit that read and used nothing is in no state: never stale, nor dead)
                # up from ``c`` through its users: a kept (or live) one makes it live; none, and every unit
                # met on the way is dead (whatever lies above them was met too)
                seen, up, live = {c}, [c], False
                while up and not live:
                    for w in users.get(up.pop(), ()):
                        if w in kept or w in alive:
                            live = True
                            break
                        if w not in seen and w not in dead:
                            seen.add(w)
                            up.append(w)
                if live:
                    alive.add(c)
                else:
                    dead |= seen
                    todo.extend(seen)
        self._dead = dead
        return dead

    def settle(self) -> None:
        """After the walks of an incremental scan: this scan's contexts table (IncState.contexts), checked
        against what the context caps answered (TrackedContextCaps).  A cap whose first contexts in this scan's
        order are not those of its contexts it answered as precise moved (a top unit run again met others than
        before, or no longer met one, and a context answered as widened would be precise in a full scan, or
        the other way round): ContextsMoved, with each such cap's first contexts in this scan's order, from
        which the scan is planned again (Plan.reseeding).  A context no longer met at all moves nothing by
        itself: below its cap a function's every context is precise in either scan (95 of the 101 caps the
        bench's flashinfer_megamoe leaf edit moved were such)."""
        if self.old is None:
            return
        self._contexts = table = self._contexts_table(self._dead_old())
        moved: dict = {}
        for caps in self._context_tables():
            for key, seed in caps.seeds.items():
                entries = table.get((caps.name, key), ())
                first, top = first_contexts(entries, caps.cap)
                # (first is of the contexts met: equal to seed.precise, it is equal to the met ones of it)
                met_precise = first if first == seed.precise else seed.precise.intersection(
                    d for _, evs in entries for d, _ in evs)
                if (caps.name, key) in self.t.moved or first != met_precise:
                    moved[(caps.name, key)] = (first, None if top is None else self._old_pos.get(top, -1.0))
        if moved:
            raise ContextsMoved(moved)

    def _caps(self) -> dict:
        tables = self._context_tables()
        return {t.name: t.cap for t in tables} if tables else (dict(self.old.caps) if self.old is not None else {})

    def _context_tables(self) -> list:
        return [t for t in (getattr(self._program, "_call_contexts", None), getattr(self._reach, "_const_contexts", None))
                if getattr(t, "log", None) is not None]

    def _contexts_table(self, dead: set) -> dict:
        """IncState.contexts of this scan: what the top units it ran met (their contexts digested), and for the
        others what the previous scan's met.  A top unit run again also keeps the previous scan's contexts of
        its units that were not run again (the nodes' steps taken from it, what they used): a full scan would
        have met them there.  A replayed walk keeps those its own unit met (a replay does not ask again).

        A top unit run again that met the contexts it met before, those new to the function there the same,
        keeps the previous scan's order of them (incstate.in_previous_order)."""
        memo: dict = {}
        per: dict = {}  # key -> top unit -> [(digest, unit)]
        before: dict = {}  # (key, top unit run again) -> the previous scan's contexts of the unit it ran again
        for table in self._context_tables():
            for key, entries in table.log.items():
                got = per.setdefault((table.name, digest(key, memo)), {})
                for top, evs in entries:
                    got.setdefault(top, []).extend((digest(c, memo), u) for c, u in evs)
        order = self.tops
        if self.old is not None:
            stale = self.plan.stale
            for k, entries in self.old.contexts.items():
                if k not in per and tops_in_order(entries, order):
                    per[k] = entries  # met only by top units this scan reused whole: as it was
                    continue
                got = per.setdefault(k, {})
                for top, evs in entries:
                    if top in self.tops:  # reused whole
                        got[top] = list(evs)
                        continue
                    new = self._rerun.get(top)
                    if new is None:
                        continue  # outside any top unit (run again), or a top unit this scan did not meet
                    walk = self._replayed.get(top)
                    kept = [(d, new if u == top else u) for d, u in evs
                            if (u == top and walk is not None) or
                            (u != top and u not in stale and u not in dead)]
                    if kept:
                        got[new] = kept + got.get(new, [])
                    if new in got:
                        before[(k, new)] = evs
        out = {}
        for k, by_top in per.items():
            if by_top.__class__ is tuple:
                out[k] = by_top
                continue
            if not by_top:
                continue  # met only by units run again, which no longer met it
            # outside any top unit first (what runs there is run again each scan; stale_units counts it so)
            tops = sorted(by_top, key=lambda top: order.get(top, -1))
            if before:
                in_previous_order(k, by_top, tops, before)
            out[k] = tuple((top, tuple(by_top[top])) for top in tops)
        return out

    def _steps_table(self, reads: dict, light: dict, dead: set) -> dict:
        """IncState.steps: the previous scan's entries still in use and not stale, and this scan's own (their
        actions without what only working out the steps read: see _portable)."""
        out: dict = {}
        if self.old is not None:
            stale = self.plan.stale
            out.update((k, e) for k, e in self.old.steps.items()
                       if e[0] not in stale and e[0] not in dead)
        if self._reach is None:
            return out
        first = self.old.next_id if self.old is not None else 1
        for key, (steps, uid) in dict.items(self._reach._steps_memo):
            if uid >= first:  # worked out by this scan (a reused entry is already in ``out``)
                out[key] = (uid, [(kind, what, _portable(act, light), conds) for kind, what, act, conds in steps])
        return out

    def _compact_logs(self, light: dict) -> None:
        """This scan's walk logs with one object per value: the actions of the parent links as the steps table
        keeps them (_portable: the walk's own carry their arguments and guards), and each node, path's
        conditions, facts on ``self``, link and whole change shared by every log that holds it.  A walk makes
        a new tuple or set for each (on the benchmark site 1,039,410 changes held 604,778 condition tuples of
        250,332 values and 1,038,775 fact sets of 201): the state is pickled, read and written whole at every
        run, and its time and memory go by the number of objects.  A replayed log's events are the previous
        state's objects, one per value already, but for the changes the replay made again (WalkLog.fresh)."""
        first = self.old.next_id if self.old is not None else 1
        nodes, links, conds, facts, changes = {}, {}, {}, {}, {}
        for _, _, uid, _, logs in self.walks:
            if uid >= first:  # (a reused walk's logs are the previous state's, compacted then)
                _one_per_value(logs, nodes, links, conds, facts, lambda act: _portable(act, light), changes)

    def modules_read(self, state: IncState) -> list:
        """The modules the units of ``state`` loaded, in load order."""
        mods = set(state.root_modules)
        readers = state.__dict__.get("_module_readers")
        if readers is not None:
            mods.update(m for m, n in readers[0].items() if n)
        else:
            read = set().union(*state.reads.values())
            mods.update(it[1] for it, i in state.items.items() if i in read and it[0] in MODULE_ITEMS)
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


def _one_per_value(logs: list, nodes: dict, links: dict, conds: dict, facts: dict, action=None,
                   changes: Optional[dict] = None) -> None:
    """Replace the new events of ``logs`` (all of a log's, or for a replayed log the changes it made again:
    WalkLog.fresh; the others are the previous state's objects, one per value already) by the one object of
    their value in the tables given: each node, path's conditions, facts on ``self`` and parent link (its
    action as ``action`` gives it), and with ``changes`` the whole change."""
    for log in logs:
        events = log.events
        for i in (range(len(events)) if log.fresh is None else log.fresh):
            e = events[i]
            cls = e.__class__
            if cls is tuple:
                at, child, link, cs, fs = e
                child, cs, fs = nodes.setdefault(child, child), conds.setdefault(cs, cs), facts.setdefault(fs, fs)
                if link is not None:
                    node, act = nodes.setdefault(link[0], link[0]), link[1] if action is None else action(link[1])
                    link = links.setdefault((id(node), id(act)), (node, act))
                e = (at, child, link, cs, fs)
                if changes is not None:  # (each part is the one object of its value)
                    e = changes.setdefault((at, id(child), id(link), id(cs), id(fs)), e)
                events[i] = e
            elif cls is not str:
                events[i] = nodes.setdefault(e, e)


def _calls_moved(old: list, new: list):
    """{old index: new index} of the calls of two step lists of a node, or False if the calls differ by more
    than where they are (line, column, end): the child, the action as kept (_portable) and the conditions
    with their expressions are what the traversal reads of a call; where it is, only the paths' frames read
    (the replay takes the new actions for them) and whether it is a call on ``self`` (worked out again)."""
    from dataclasses import replace

    from .reach import _CHILD

    a = [i for i, s in enumerate(old) if s[0] == _CHILD]
    b = [i for i, s in enumerate(new) if s[0] == _CHILD]
    if len(a) != len(b):
        return False
    light: dict = {}
    for i, k in zip(a, b):
        _, child, act, conds = old[i]
        _, child2, act2, conds2 = new[k]
        if child != child2 or conds != conds2 or not all(map(_same_condition, conds, conds2)):
            return False
        act2 = _portable(act2, light)
        if act != act2 and act != replace(act2, line=act.line, col=act.col, end=act.end):
            return False
    return dict(zip(a, b))


def _same_condition(c, d) -> bool:
    """Whether two conditions of a call (equal as Conditions: path, line, text) are the same to the walk: the
    same expression and polarity, or for one of a call's several callees (ALTERNATIVE), the same but for the
    column of the call, which only keys the fold of the callees within one walk (reach_conditions.all_alternatives)."""
    if c.polarity != d.polarity:
        return False
    a, b = c.expr, d.expr
    if a == b:
        return True
    from .findings import ALTERNATIVE

    return a[:1] == b[:1] == (ALTERNATIVE,) and len(a) == len(b) == 4 and (a[1], a[3]) == (b[1], b[3]) and \
        (a[2][0], a[2][2:]) == (b[2][0], b[2][2:])


def _portable(act, light: dict):
    """``act`` as the walk reads it once the steps are worked out: without the call's arguments and guards,
    and its target without wrappers and closure (only its id and flags are read: reach_report._prefix).  A
    smaller state, and no value of the resolver's beyond Node's constants."""
    got = light.get(id(act))
    if got is None:
        from dataclasses import replace

        from .values import Func

        target = act.target
        if not (act.args or act.kwargs or act.guards) and (
                not isinstance(target, Func) or not (target.wrappers or target.closure)):
            got = light[id(act)] = act  # kept so already (a previous state's): one object stays one
            return got
        if isinstance(target, Func):
            target = Func(target.id, target.self_cls, target.flags)
        got = light[id(act)] = replace(act, args=(), kwargs=(), guards=(), target=target)  # acts live on: ids hold
    return got
