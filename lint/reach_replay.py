"""Replaying a region's walk after an edit that changed no call: only the hazards are reported again.

What ``Reach.walk`` does splits in two: the *traversal* -- which node is reached from which, under which
conditions, when (``parent``, ``conds_of``, the facts on ``self``, the queue, the deferred calls) -- and the
*reports* of each visited node's hazard steps under the conditions of that moment.  The traversal is decided
by the calls (the ``_CHILD`` steps) alone; it is most of the walk's time (one ``take`` per call per visit:
the conditions of every path, the folds of many-callee sites).

So each walk of an incremental scan keeps a ``WalkLog``: its entry nodes, its visits in order, and every change
of a node's traversal state with the index of the step that made it.  After an edit, a region whose walk read
nothing that changed but the steps of some nodes (and what the replay works out again itself), where those
nodes' calls are the same as when the log was made but for where they are on their lines (an edit that adds,
removes or changes a hazard and no call: the bench's edits), is replayed from its log: the same visits in the
same order, the state changes applied at the step that made them, each change made by an edited node's call
taken with the call's new action and its facts on ``self`` worked out again, and each visited node's hazard
steps -- the new ones for the edited nodes -- reported as ``take`` reports them.  The findings, their order
and their paths are what walking again gives (the paths above a node are built at its first report, so a
change is applied where the walk made it, not once per visit).

Anything the replay cannot follow -- other entries, a node whose calls changed, other facts on ``self``, other
module hooks, a log that does not fit -- returns None, and the region is walked again (lint/incremental.py
decides which regions may be replayed, from what tracking.py recorded they read).

Where the caller reads the findings by hazard site (one per hazard, or every path of each in walk order: not
library mode's public APIs), the replay reports again only the hazard sites the edit may have touched and takes the others' findings from the region's previous ones (_KeepingReplay): most of a
replay's reports (337,414 of the bench leaf edit's 339,379) are then not made at all, and most visits only
apply their logged changes (916,604 of its 916,973: the visits of nodes neither worked out again nor below
one's call).
"""
from __future__ import annotations

from typing import Optional

from .postwalk import merge_key
from .reach_conditions import dedup, fold_alternatives

_MISS = object()


class WalkLog:
    """What one walk did, to replay it (module docstring).  ``events``: a visited Node; a state change
    ``(step index or -1, node, parent link, conditions, facts on self)``; ``"D"`` before a deferred call is
    taken; ``"P"`` at the end of phases 1 and 2.  ``early``: of the nodes whose parent link changed (reached
    under conditions, then certainly), those whose path a report had built before, each with a node whose
    report needed that path then (_KeepingReplay).  ``dvisits``: for each ``"D"``, in order, the index of the
    visit (phase 1) whose conditional call it takes.  ``fresh`` (not kept): for a log a replay made, the
    indices of the events it made itself, the others being the replayed log's own objects
    (lint/incremental.py shares one object per value only among the new ones); None: every event is new.
    ``index`` (not kept): where each node's visits and changes are (reach_replay_indexed.LogIndex), once
    asked; a replay's new log has its events at the same places, so it takes the same index."""

    __slots__ = ("default_call", "entries", "events", "hooks", "early", "dvisits", "fresh", "index")

    def __init__(self, default_call: bool = False):
        self.default_call = default_call
        self.entries: list = []
        self.events: list = []
        self.hooks: list = []
        self.early: dict = {}
        self.dvisits: list = []
        self.fresh: Optional[list] = None
        self.index = None

    def __getstate__(self):
        return (self.default_call, self.entries, self.events, self.hooks, self.early, self.dvisits)

    def __setstate__(self, state):
        self.default_call, self.entries, self.events, self.hooks, self.early, self.dvisits = state
        self.fresh = self.index = None

    def replayed_as(self, events: list, early: dict, fresh: list) -> "WalkLog":
        """The log of a replay of this one: ``events`` at the places of these (the changes it made again
        among them, ``fresh``), and ``early``."""
        new = WalkLog(self.default_call)
        new.entries, new.events, new.hooks, new.early, new.dvisits, new.fresh, new.index = (
            self.entries, events, self.hooks, early, self.dvisits, fresh, self.index)
        return new


class ReplayMixin:
    """``Reach.replay``; ``child_steps_moved(node, variant, steps)`` (set by lint/incremental.py) says how the
    node's steps changed since its log was made: None (they are the logged ones), {logged index: index now} of
    its calls (worked out again, the same calls but for where they are: the replay takes their new actions
    and works out the facts on ``self`` they give again), or False (its calls changed: no replay)."""

    def replay(self, region, log: WalkLog, default_call: bool = False, by_site: bool = False) -> Optional[tuple]:
        """(findings, the new log) of ``region`` replayed from ``log``, or None where it cannot be.  ``by_site``:
        the caller reads the findings by hazard site (Reach.walk): given the previous walk's
        (``replay_findings``), the sites the edit cannot have touched keep theirs (_KeepingReplay)."""
        from .dynamo import model
        from .findings import RegionRef

        previous, self.replay_findings = self.replay_findings if by_site else None, None
        if self.child_steps_moved is None:
            return None
        predicates = dict(model.REGION_PREDICATES)
        predicates.update(region.predicates)
        variant = self._variant(predicates, region)
        entries = self._entry_nodes(region, default_call)
        if entries != log.entries:
            return None
        region_ref = RegionRef(region.path, region.line, region.qualname, region.fullgraph, region.kind)
        walked_before = self.stats.functions_walked
        if previous is not None:
            got = SEQUENTIAL
            if INDEXED and self.replay_stale_nodes is not None:
                from .reach_replay_indexed import IndexedReplay

                got = IndexedReplay(self, region, region_ref, log, predicates, variant, previous).run()
                if got is not SEQUENTIAL and got is not None:
                    self.replays_indexed += 1
            if got is SEQUENTIAL:
                got = _KeepingReplay(self, region, region_ref, log, predicates, variant, previous).run()
            if got is not _ANOTHER_PATH:
                if got is None:
                    self.stats.functions_walked = walked_before
                    return None
                self.replays_keeping += 1
                return got
            self.stats.functions_walked = walked_before  # replayed again, reporting every hazard
            self.replays_relinked += 1
        got = _Replay(self, region, region_ref, log, predicates, variant).run()
        if got is None:
            self.stats.functions_walked = walked_before  # not replayed: the walk counts its own visits
        return got


class Touched:
    """What an edit may have changed of a replayed region's findings: whole hazard sites, (file, line) --
    those a node worked out again had a hazard or report step on before the edit -- and merge keys, (rule,
    file, line, fix point): postwalk.merge_key, of the reports made at hot visits.

    Where the caller reads every path of each (rule, file, line) in walk order (the pre-commit hook), a hot
    report touches its whole site, and every report at a touched site is made again.  Where it merges the
    region's findings per key (engine.walk_one: one per hazard and fix point, ``by_key``), each key's findings
    are folded (fold_alternatives) and merged apart from any other key's: a kept visit's report near a touched
    key (at its site) whose own key is not touched would make again what the previous walk merged for that
    key, so the previous finding stands in for it, where the key is first met -- the caller's list is then
    what making every report at those sites again gives, with the keys in the order first met (the order of
    findings that sort alike, two fix points of one hazard).  On the bench site's kimi_k3_mla leaf edit, a hot
    loader's call moved on its line touched the hazards of jit/core.py below it, and its 123 replays made
    again the reports of some 70,000 kept visits below the other loaders, one fix point each."""

    __slots__ = ("by_key", "sites", "keys", "_near", "_previous", "_placed", "_fix_points")

    def __init__(self, by_key: bool, previous: list):
        self.by_key = by_key
        self.sites: set = set()
        self.keys: set = set()
        self._near: Optional[frozenset] = None  # the sites of both (near_sites)
        self._previous = previous  # the previous walk's findings (merged: one per key)
        self._placed: Optional[dict] = None  # key -> the previous finding near a touched site, None once placed
        self._fix_points: dict = {}  # id(node) -> ReportMixin.path_fix_point (the replay's paths: one per node)

    def found(self, found: list) -> None:
        """``found``, reports made at hot visits."""
        if self.by_key:
            self.keys.update(map(merge_key, found))
        else:
            self.sites.update((f.path, f.line) for f in found)
        self._near = None

    def old_steps(self, path: str, steps) -> None:
        """A node worked out again: the sites of its hazard and report steps before the edit (``steps``, in
        its file ``path``) are touched whole (what they reported may be gone)."""
        from .reach import _CHILD

        self.sites.update((path, act.line) for step, _, act, _ in steps if step != _CHILD)
        self._near = None

    def near(self, path: str, line: int) -> bool:
        """Whether (``path``, ``line``) is a touched site, or a touched key's: a report there is made again,
        or its key's previous finding stands in for it (``stand_in``)."""
        return (path, line) in self.near_sites()

    def near_sites(self) -> frozenset:
        """The touched sites and the touched keys' sites."""
        if self._near is None:
            self._near = frozenset(self.sites | {(path, line) for _, path, line, _ in self.keys})
        return self._near

    def files(self) -> set:
        return {path for path, _ in self.near_sites()}

    def stand_in(self, reach, step, what, act, node, ctx, parts: Optional[tuple] = None) -> Optional[tuple]:
        """For a kept visit's hazard or report step near a touched site: the key of the previous finding that
        stands in for its reports (its site and its key untouched, the key one of the previous findings'),
        else None (they are made again).  The same at every visit of the node: a key does not depend on the
        conditions (a replay's paths are one per node).  ``parts``: the step's Reach._reporter_key, where the
        caller has it."""
        if not self.by_key:
            return None
        if parts is None:
            parts = reach._reporter_key(step, what, act, node, ctx[2])
            if parts is None:
                return None
        return self.stand_ins(reach, ((act.line, parts),), node, ctx)[0]

    def stand_ins(self, reach, steps, node, ctx) -> list:
        """``stand_in`` of each of a node's ``steps``, (line, Reach._reporter_key) each (a replay asks it of
        every node of a touched file it visits: on the bench site's kimi_k3_mla leaf edit, 125,000 steps)."""
        if not self.by_key:
            return [None] * len(steps)
        sites, keys, placed = self.sites, self.keys, self._placed
        out = []
        for line, (rule, path, fix_point) in steps:
            if (path, line) in sites:
                out.append(None)
                continue
            if not fix_point:
                fix_point = self._fix_points.get(id(node))
                if fix_point is None:
                    fix_point = self._fix_points[id(node)] = reach.path_fix_point(node, ctx)
            key = (rule, path, line, fix_point)
            if key in keys:
                out.append(None)
                continue
            if placed is None:  # (once a key is asked)
                near = self.near_sites()
                lines = {ln for _, ln in near}  # (most findings' lines are none: no pair made)
                placed = self._placed = {merge_key(f): f for f in self._previous
                                         if f.line in lines and (f.path, f.line) in near}
            out.append(key if key in placed else None)
        return out

    def place(self, key: tuple) -> list:
        """What stands in for a report of ``key`` (``stand_in``) met in walk order: its previous finding the
        first time, nothing after."""
        f = self._placed[key]
        if f is None:
            return []
        self._placed[key] = None
        return [f]

    def __bool__(self) -> bool:
        return bool(self.sites or self.keys)


class KeptFirst(list):
    """A replay's findings that keep the previous walk's where the edit did not touch them: those come first
    (``kept`` of them), one per hazard key already (the caller's, engine.walk_one, merged them so), and none
    of their sites is one near a touched site or key (Touched.near) -- the rest's are, in walk order (the
    previous findings that stand in for reports not touched among them: Touched.stand_in); the caller merges
    only the rest."""
    __slots__ = ("kept",)

    def __init__(self, previous: list, touched: Touched, made: list):
        if touched:
            lines = {line for _, line in touched.near_sites()}  # (most findings' lines are none: no pair made)
            super().__init__(f for f in previous if f.line not in lines or not touched.near(f.path, f.line))
        else:
            super().__init__(previous)
        self.kept = len(self)
        self.extend(made)


# a replay keeping findings goes from the log's index (lint/reach_replay_indexed.py), and takes every event in
# order only where it hands over (SEQUENTIAL); tests set it False to check the two against each other
INDEXED = True
SEQUENTIAL = object()
_ANOTHER_PATH = object()  # _KeepingReplay.run: a path the edit may have changed met a parent link that changed


def frame_moved(logged: tuple, change: tuple) -> bool:
    """Whether a change made again by a call of a node worked out again moved the frame of that call on the
    paths below it (ReportMixin._frame: its line and where it ends): else the paths below it, and what the
    nodes reached so report, are what they were (the call itself is the same: incremental._calls_moved)."""
    old, new = logged[2][1], change[2][1]
    return old.line != new.line or old.end != new.end


def module_file(reach, mod: str) -> str:
    """A module's file, as a finding's path names it, from where the module was found (kept for the scan):
    loading the summaries of every module a region's kept visits are in would cost more than the replay."""
    path = reach._replay_files.get(mod)
    if path is None:
        found = reach.p.locator.find(mod)
        path = reach._replay_files[mod] = str(found[0]) if found is not None and found[0] is not None else ""
    return path


class _Replay:
    """One replay of a walk log that reports every hazard again (ReplayMixin.replay, the module docstring).

    The state is the walk's (``parent``, ``conds_of``, ``self_facts``), applied from the logged changes; a
    visit takes each of its node's steps as ``Reach.walk`` does.  ``run`` gives (findings, the new log) or
    None where the log does not fit."""

    def __init__(self, reach, region, region_ref, log: WalkLog, predicates: dict, variant):
        self.reach = reach
        self.log = log
        self.predicates, self.variant = predicates, variant
        from .reach_report import BuiltPaths

        self.parent: dict = {}
        self.prefixes = BuiltPaths()
        self.early: dict = {}  # the new log's (WalkLog.early)
        self.conds_of: dict = {}
        self.self_facts: dict = {}
        self.ctx = (self.parent, self.prefixes, region, region_ref)
        self.redo: dict = {}  # id(finding) -> its report again under other conditions (fold_alternatives)
        self.findings: list = []
        # node -> (its steps now, None if they are the logged ones else {index now: index logged})
        self.steps_of: dict = {}
        self.worked_out: set = set()  # the visited nodes whose steps were worked out again
        self.deferred: list = []
        self.taken = 0  # deferred calls taken so far
        self.redo_next = None  # the deferred call just taken, when its node's steps were worked out again
        self.new_events = list(log.events)  # the new log's: the logged ones, but the changes made again
        self.fresh: list = []  # their indices

    # ------------------------------------------------------------------ the state
    def put(self, change: tuple) -> None:
        _, n, link, conds, facts = change
        if n in self.parent:
            self.relinked(n)
        self.parent[n] = link
        self.conds_of[n] = conds
        self.self_facts[n] = facts

    def relinked(self, n) -> None:
        """``n``'s parent link is about to change (reached under conditions, then certainly): the new log
        says whose report built the path above it before (WalkLog.early)."""
        if n in self.prefixes:
            self.early[n] = self.prefixes.by[n]

    def against_facts(self, node, conds: tuple, known, here: int) -> Optional[tuple]:
        """``conds`` (``here`` of them the path's above ``node``) as ``take`` filters them by what the guards
        on the path say of ``self`` (``known``): None where one decides the call's own guard false."""
        if known and len(conds) > here:
            return self.reach._against_self_facts(node, conds, here, known)
        return conds

    def remade(self, j: int, change: tuple) -> None:
        """The logged change ``j`` made again (``redone``): in the new log, and applied."""
        self.new_events[j] = change
        self.fresh.append(j)
        self.put(change)

    def redone(self, node, what, act, conds: tuple, change: tuple) -> Optional[tuple]:
        """The logged change that ``take`` of a call of a node whose steps were worked out again made, with
        the call's new action (where it is) and the facts on ``self`` worked out again; None where they
        differ from the logged ones (the traversal below may differ: walk again)."""
        return self.change_again(node, act, conds, self.self_facts.get(node), len(self.conds_of[node]), change,
                                 change[1] not in self.parent)

    def change_again(self, node, act, conds: tuple, known, here: int, change: tuple, first: bool) -> Optional[tuple]:
        """``redone`` for a node whose facts on ``self`` are ``known`` and whose path has ``here`` conditions;
        ``first``: the change is the child's first (it takes the call's own guards on ``self``)."""
        conds = self.against_facts(node, conds, known, here)
        if conds is None:
            return None  # the take would have stopped here now
        at, child, _, path_conds, facts = change
        if self.reach._facts_for_callee(node, child, act, known, conds[here:] if first else ()) != facts:
            return None
        return (at, child, (node, act), path_conds, facts)

    # ------------------------------------------------------------------ reports
    def report(self, node, step, what, act, conds: tuple) -> None:
        """``take`` of a hazard or report step (Reach.walk)."""
        conds = self.against_facts(node, conds, self.self_facts.get(node), len(self.conds_of[node]))
        if conds is not None:
            self.emit(node, step, what, act, dedup(conds))

    def emit(self, node, step, what, act, conds: tuple) -> list:
        reporter = self.reach._reporter(step, what, act, node, self.ctx)
        found = reporter(conds)
        if conds:
            for f in found:
                self.redo[id(f)] = reporter
        self.findings.extend(found)
        return found

    def deferred_report(self, node, step, what, act, conds: tuple) -> None:
        self.report(node, step, what, act, conds)

    def result(self) -> list:
        return self.findings + fold_alternatives(self.findings, self.redo)

    # ------------------------------------------------------------------ the walk
    def take_deferred(self, up_to_call: bool) -> bool:
        """Report the deferred hazard steps up to the next deferred call (and take that call), or all the
        rest; False where what is left does not fit the log."""
        from .reach import _CHILD

        deferred = self.deferred
        while self.taken < len(deferred):
            entry = deferred[self.taken]
            node, step, what, act, conds = entry
            self.taken += 1
            if step == _CHILD:
                # its effects are the logged changes that follow
                self.redo_next = entry if node in self.worked_out else None
                return up_to_call
            self.deferred_report(node, step, what, act, self.conds_of[node] + conds)
        return not up_to_call

    def steps(self, node) -> Optional[tuple]:
        """(steps, None or {index now: index logged}) of a visited node; None where its calls changed."""
        reach = self.reach
        steps = reach._steps(node, self.predicates, self.variant)
        where = reach.child_steps_moved(node, self.variant, steps)
        if where is False:
            return None
        back = None if where is None else {v: k for k, v in where.items()}
        if back is not None:
            self.worked_out.add(node)
        got = self.steps_of[node] = (steps, back)
        return got

    def visit(self, e, j: int, certain_only: bool) -> int:
        """Take the steps of a visit of ``e`` whose logged changes start at ``j``: the index after them, or -1
        where the log does not fit."""
        from .reach import _CHILD

        got = self.steps_of.get(e)
        if got is None:
            got = self.steps(e)
            if got is None:
                return -1
        steps, back = got
        events, n = self.log.events, len(self.log.events)
        here = self.conds_of[e]
        for i, (step, what, act, conds) in enumerate(steps):
            if conds and certain_only:
                self.deferred.append((e, step, what, act, conds))
            elif step == _CHILD:
                at = i if back is None else back[i]
                while j < n:
                    change = events[j]
                    if change.__class__ is not tuple or change[0] != at:
                        break
                    if back is not None:
                        change = self.redone(e, what, act, here + conds if conds else here, (i,) + change[1:])
                        if change is None:
                            return -1
                        self.remade(j, change)
                    else:
                        self.put(change)
                    j += 1
            else:
                self.report(e, step, what, act, here + conds if conds else here)
        if j < n and events[j].__class__ is tuple:
            return -1  # a change the visit's calls did not make: the log does not fit
        return j

    def hooks_fit(self) -> bool:
        reach = self.reach
        hooks = [h for node in list(self.parent) for h in reach._hooks_registered_in(node)]
        return hooks == self.log.hooks

    def run(self) -> Optional[tuple]:
        events = self.log.events
        n = len(events)
        phase, certain_only, j = 1, True, 0
        stats = self.reach.stats
        while j < n:
            e = events[j]
            j += 1
            cls = e.__class__
            if cls is tuple:
                if self.redo_next is not None:  # the change made by a deferred call of a node worked out again
                    node, _, what, act, conds = self.redo_next
                    self.redo_next = None
                    e = self.redone(node, what, act, self.conds_of[node] + conds, e)
                    if e is None:
                        return None
                    self.remade(j - 1, e)
                else:
                    self.put(e)
                continue
            self.redo_next = None
            if cls is str:
                if e == "D":
                    if not self.take_deferred(True):
                        return None
                    continue
                if phase == 2 and not (self.take_deferred(False) and self.hooks_fit()):
                    return None
                phase += 1
                certain_only = False
                continue
            # a visit of node e; the state changes it made follow it, in the order of its calls
            stats.functions_walked += 1
            j = self.visit(e, j, certain_only)
            if j < 0:
                return None
        if phase != 3:
            return None
        findings = self.result()
        if findings is _ANOTHER_PATH:
            return findings
        return findings, self.log.replayed_as(self.new_events, self.early, self.fresh)


class _KeepingReplay(_Replay):
    """A replay whose caller reads the findings by hazard site (engine.walk_one: merged, one per hazard, or
    every path of each for the pre-commit hook): only the hazards the edit may have touched are reported
    again; the others are the previous walk's findings (``previous``: that region's, as the caller kept them).
    Each site's findings are in walk order, as walking again gives them; the sites' order is not.

    A node is *hot* when it was worked out again (its steps changed), or when a call of a hot node reached it
    and that call's frame may have moved (every call of a node reached so; of a node worked out again, the
    calls whose line or end moved: frame_moved): its visits are taken as ``_Replay`` takes them, and its
    reports made there.  A visit of any other node only applies its logged changes and defers its conditional steps,
    and is kept in walk order (``later``) with the state it met.  A hazard site -- a (file, line): one
    finding's ``path`` and ``line``, the node's own file -- is touched when a hot report names it, or when a
    node worked out again had a hazard or report step on it before the edit.  The findings of an untouched
    site are the previous walk's; the reports of a touched site are all made again (the kept visits' after
    the walk, from the state they met), in walk order, and folded (``fold_alternatives`` groups by site) --
    what walking again gives for it.

    Walking again builds the path above a node at its first report (ReportMixin._prefix) and keeps it; this
    replay builds it at the first report it makes.  The two agree but for a node whose parent link changed
    during the walk (reached under conditions, then certainly): its path is built from the first link when
    a report needed it before the change.  The log says which nodes' paths a report needed so, and whose
    report (WalkLog.early); at the change (``relinked``) the replay builds such a path from the first link as
    that report did -- unless that report's node was worked out again (it may no longer need it), or a
    report made again needed a path the previous walk built only later, from the other link (the kept
    findings below it would differ): then the replay reports every hazard again (``_ANOTHER_PATH``).

    Only for a replay where every stale unit the old walk used is a node's steps or a fact on ``self`` the
    replay checks itself (Incremental._reports_unchanged): what the reports say (their units, the frames'
    reads) is then unchanged, and so are the module hooks the walk's functions register (not asked again: the
    same functions are reached; their units stay in use).  What a kept report says is not asked again either,
    and its unit is not kept in use: it reads only that its node's function and its loader exist, which their
    steps -- used by the replay -- read too."""

    def __init__(self, reach, region, region_ref, log, predicates, variant, previous: list):
        super().__init__(reach, region, region_ref, log, predicates, variant)
        self.previous = previous
        self.hot: set = set()
        self.path_moved = False  # a path above a report may not be the one walking again builds: _ANOTHER_PATH
        # in walk order: a hot report's findings (a list); a kept visit (node, its conditions, its facts on
        # self, whether in phase 1); a kept deferred report (node, step, what, action, conditions, facts on
        # self, how many of the conditions are the path's)
        self.later: list = []
        self.touched: Optional[Touched] = None  # (result)
        self.made_again = 0  # findings of kept reports made again (result)

    def put(self, change: tuple) -> None:
        super().put(change)
        link = change[2]
        if link is not None and link[0] in self.hot and link[0] not in self.worked_out:
            self.hot.add(change[1])

    def remade(self, j: int, change: tuple) -> None:
        super().remade(j, change)
        if frame_moved(self.log.events[j], change):
            self.hot.add(change[1])

    def relinked(self, n) -> None:
        """``n``'s parent link is about to change: its path stays built from the link it has where walking
        again builds it before (the class docstring)."""
        prefixes = self.prefixes
        logged = self.log.early.get(n)
        if n in prefixes:  # a report made again needed it: so does walking again
            if logged is None:
                self.path_moved = True  # where the previous walk built it later, from the other link
            self.early[n] = logged if logged is not None and logged not in self.worked_out else prefixes.by[n]
        elif logged is not None:
            if logged in self.worked_out:
                self.path_moved = True  # only a report that changed may have needed it
                return
            # a kept report needed it: it is built now, as that report built it
            prefixes.reporter = logged
            try:
                self.reach._prefix(n, self.parent, prefixes)
            finally:
                prefixes.reporter = None
            self.early[n] = logged

    def steps(self, node):
        got = super().steps(node)
        if got is not None and got[1] is not None:
            self.hot.add(node)
        return got

    def visit(self, e, j: int, certain_only: bool) -> int:
        if e in self.hot:
            return super().visit(e, j, certain_only)
        got = self.steps_of.get(e)
        if got is None:
            got = self.steps(e)
            if got is None:
                return -1
            if e in self.hot:
                return super().visit(e, j, certain_only)
        if certain_only:
            entries = self._kinds(e, got[0])
            if entries:
                self.deferred.extend(entries)
        self.later.append((e, self.conds_of[e], self.self_facts.get(e), certain_only))
        # its steps are the logged ones: so are the changes its calls made
        events, n, put = self.log.events, len(self.log.events), self.put
        while j < n and events[j].__class__ is tuple:
            put(events[j])
            j += 1
        return j

    def emit(self, node, step, what, act, conds: tuple) -> list:
        found = super().emit(node, step, what, act, conds)
        self.later.append(found)
        return found

    def report(self, node, step, what, act, conds: tuple) -> None:
        if node in self.hot:
            super().report(node, step, what, act, conds)

    def deferred_report(self, node, step, what, act, conds: tuple) -> None:
        if node in self.hot:
            super().report(node, step, what, act, conds)
        else:
            self.later.append((node, step, what, act, conds, self.self_facts.get(node), len(self.conds_of[node])))

    def hooks_fit(self) -> bool:
        return True  # which functions register hooks, and which, is what it was (the class docstring)

    def _file(self, fid: str) -> str:
        return module_file(self.reach, fid.partition(":")[0])

    def result(self):
        from .reach import _CHILD, _HAZARD

        if self.path_moved:
            return _ANOTHER_PATH
        reach = self.reach
        self.findings = []  # the reports made again, in walk order
        touched = self.touched = Touched(reach.replay_by_key, self.previous)
        for item in self.later:
            if item.__class__ is list:
                touched.found(item)
        for node in self.worked_out:
            touched.old_steps(self._file(node.fid), reach.replay_old_steps(node, self.variant))
        files = touched.files()
        kept = 0
        for item in self.later:
            if item.__class__ is list:
                self.findings.extend(item)
                continue
            if len(item) == 4:  # a kept visit: its reports at the touched sites, as the visit took them
                node, here, known, certain_only = item
                path = self._file(node.fid)
                if path not in files:
                    kept += 1
                    continue
                made_before = self.made_again
                for step, what, act, conds in self._kinds(node, self.steps_of[node][0], True)[certain_only]:
                    if touched.near(path, act.line):
                        self._made_again(node, step, what, act, here + conds if conds else here, known, len(here))
                kept += self.made_again == made_before
                continue
            node, step, what, act, conds, known, here = item
            if step == _HAZARD and not reach._hazard_reported(act, node):
                continue
            if touched.near(self._file(node.fid), act.line):
                self._made_again(node, step, what, act, conds, known, here)
        reach.replay_visits_kept += kept
        made = self.findings
        return KeptFirst(self.previous, touched, made + fold_alternatives(made, self.redo))

    def _kinds(self, node, steps: list, reports: bool = False) -> list:
        """``node``'s conditional steps as deferred entries; with ``reports``, (its hazard and report steps
        that make a finding (ReportMixin._hazard_reported) as a visit after phase 1 takes them, as one in
        phase 1 does: not the conditional ones).  Kept for the scan by the node and its steps' identity: many
        regions replay one node, and a node can have hundreds of steps."""
        from .reach import _CHILD, _HAZARD

        memo = self.reach._replay_kinds
        key = (id(steps), node)
        got = memo.get(key)
        if got is None or got[0] is not steps:
            got = memo[key] = [steps, [(node,) + s for s in steps if s[3]], None]
        if not reports:
            return got[1]
        if got[2] is None:
            hazard_reported = self.reach._hazard_reported
            every = [s for s in steps if s[0] != _CHILD and (s[0] != _HAZARD or hazard_reported(s[2], node))]
            got[2] = (every, [s for s in every if not s[3]])
        return got[2]

    def _made_again(self, node, step, what, act, conds: tuple, known, here: int) -> None:
        """A kept report near a touched site, made again from the state its visit met (``report``) unless the
        previous finding of its key stands in for it (Touched.stand_in); after the walk, so not one of
        ``later``'s (the base class's emit)."""
        conds = self.against_facts(node, conds, known, here)
        if conds is None:
            return
        key = self.touched.stand_in(self.reach, step, what, act, node, self.ctx)
        if key is not None:
            self.findings.extend(self.touched.place(key))
        else:
            self.made_again += len(_Replay.emit(self, node, step, what, act, dedup(conds)))
