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

Where the caller keeps one finding per hazard, the replay reports again only the hazard sites the edit may
have touched and takes the others' findings from the region's previous ones (_KeptReports): most of a
replay's reports (337,414 of the bench leaf edit's 339,379) are then not made at all.
"""
from __future__ import annotations

from typing import Optional

_MISS = object()


class WalkLog:
    """What one walk did, to replay it (module docstring).  ``events``: a visited Node; a state change
    ``(step index or -1, node, parent link, conditions, facts on self)``; ``"D"`` before a deferred call is
    taken; ``"P"`` at the end of phases 1 and 2.  ``fresh`` (not kept): for a log a replay made, the indices of
    the events it made itself, the others being the replayed log's own objects (lint/incremental.py shares one
    object per value only among the new ones); None: every event is new."""

    __slots__ = ("default_call", "entries", "events", "hooks", "fresh")

    def __init__(self, default_call: bool = False):
        self.default_call = default_call
        self.entries: list = []
        self.events: list = []
        self.hooks: list = []
        self.fresh: Optional[list] = None

    def __getstate__(self):
        return (self.default_call, self.entries, self.events, self.hooks)

    def __setstate__(self, state):
        self.default_call, self.entries, self.events, self.hooks = state
        self.fresh = None


class ReplayMixin:
    """``Reach.replay``; ``child_steps_moved(node, variant, steps)`` (set by lint/incremental.py) says how the
    node's steps changed since its log was made: None (they are the logged ones), {logged index: index now} of
    its calls (worked out again, the same calls but for where they are: the replay takes their new actions
    and works out the facts on ``self`` they give again), or False (its calls changed: no replay)."""

    def replay(self, region, log: WalkLog, default_call: bool = False, merged: bool = False) -> Optional[tuple]:
        """(findings, the new log) of ``region`` replayed from ``log``, or None where it cannot be.  ``merged``:
        the caller keeps one finding per hazard (Reach.walk): given the previous walk's (``replay_findings``),
        the hazards the edit cannot have touched are taken from them (_KeptReports)."""
        from .dynamo import model
        from .findings import RegionRef
        from .reach import _CHILD, _HAZARD, _dedup, _fold_alternatives

        previous, self.replay_findings = self.replay_findings if merged else None, None
        moved = self.child_steps_moved
        if moved is None:
            return None
        predicates = dict(model.REGION_PREDICATES)
        predicates.update(region.predicates)
        variant = self._variant(predicates, region)
        entries = self._entry_nodes(region, default_call)
        if entries != log.entries:
            return None
        region_ref = RegionRef(region.path, region.line, region.qualname, region.fullgraph, region.kind)
        parent: dict = {}
        prefixes: dict = {}
        conds_of: dict = {}
        self_facts: dict = {}
        findings: list = []
        redo: dict = {}
        ctx = (parent, prefixes, region, region_ref)
        walked_before = self.stats.functions_walked

        def put(change: tuple) -> None:
            _, n, link, conds, facts = change
            parent[n] = link
            conds_of[n] = conds
            self_facts[n] = facts

        def report(node, step, what, act, conds: tuple) -> None:
            """``take`` of a hazard or report step (Reach.walk)."""
            known = self_facts.get(node)
            here = len(conds_of[node])
            if known and len(conds) > here:
                conds = self._against_self_facts(node, conds, here, known)
                if conds is None:
                    return
            if kept is not None:
                if step == _HAZARD and not self._hazard_reported(act, node):
                    return  # no finding, and no path built (as the report itself)
                if not kept.tainted_path(node) and node not in worked_out:
                    kept.later.append((node, step, what, act, conds))
                    return
            conds = _dedup(conds)
            reporter = self._reporter(step, what, act, node, ctx)
            found = reporter(conds)
            if conds:
                for f in found:
                    redo[id(f)] = reporter
            if kept is not None:
                kept.later.append(found)
            else:
                findings.extend(found)

        def redone(node, what, act, conds: tuple, change: tuple) -> Optional[tuple]:
            """The logged change that ``take`` of a call of a node whose steps were worked out again made, with
            the call's new action (where it is) and the facts on ``self`` worked out again; None where they
            differ from the logged ones (the traversal below may differ: walk again)."""
            known = self_facts.get(node)
            here = len(conds_of[node])
            if known and len(conds) > here:
                conds = self._against_self_facts(node, conds, here, known)
                if conds is None:
                    return None  # the take would have stopped here now
            at, child, _, path_conds, facts = change
            first = child not in parent
            if self._facts_for_callee(node, child, act, known, conds[here:] if first else ()) != facts:
                return None
            return (at, child, (node, act), path_conds, facts)

        deferred: list = []
        taken = 0  # deferred calls taken so far
        redo_next = None  # the deferred call just taken, when its node's steps were worked out again

        def take_deferred(up_to_call: bool) -> bool:
            """Report the deferred hazard steps up to the next deferred call (and take that call), or all the
            rest; False where what is left does not fit the log."""
            nonlocal taken, redo_next
            while taken < len(deferred):
                entry = deferred[taken]
                node, step, what, act, conds = entry
                taken += 1
                if step == _CHILD:
                    # its effects are the logged changes that follow
                    redo_next = entry if node in worked_out else None
                    return up_to_call
                report(node, step, what, act, conds_of[node] + conds)
            return not up_to_call

        worked_out: set = set()  # the visited nodes whose steps were worked out again (not the logged ones)
        kept = None
        if previous is not None:
            kept = _KeptReports(self, previous, parent, worked_out, variant)
            # the reports build the paths above their nodes from the parents as they were at each node's first
            # report (_KeptReports.links), as walking again does at that moment
            ctx = (kept.links, prefixes, region, region_ref)
            kept.ctx = ctx
        logged_index: dict = {}  # node -> None (its steps are the logged ones) or {index now: index logged}

        events = log.events
        new_events: list = []
        fresh: list = []  # the indices in new_events of the changes made again (the others are the log's own)
        certain_only = True
        phase = 1
        j, n = 0, len(events)
        replayed = False
        try:
            while j < n:
                e = events[j]
                j += 1
                cls = e.__class__
                if cls is tuple:
                    if redo_next is not None:  # the change made by a deferred call of a node worked out again
                        node, _, what, act, conds = redo_next
                        e = redone(node, what, act, conds_of[node] + conds, e)
                        if e is None:
                            return None
                        redo_next = None
                        fresh.append(len(new_events))
                    put(e)
                    new_events.append(e)
                    continue
                redo_next = None
                if cls is str:
                    new_events.append(e)
                    if e == "D":
                        if not take_deferred(True):
                            return None
                        continue
                    if phase == 2:
                        if not take_deferred(False):
                            return None
                        if kept is None:
                            hooks = [h for node in list(parent) for h in self._hooks_registered_in(node)]
                            if hooks != log.hooks:
                                return None
                        # (else which functions register hooks, and which, is what it was: _KeptReports)
                    phase += 1
                    certain_only = False
                    continue
                # a visit of node e; the state changes it made follow it, in the order of its calls
                self.stats.functions_walked += 1
                steps = self._steps(e, predicates, variant)
                back = logged_index.get(e, _MISS)
                if back is _MISS:
                    where = moved(e, variant, steps)
                    if where is False:
                        return None
                    # None: the logged steps; else each call's index now -> its index in the log
                    back = logged_index[e] = None if where is None else {v: k for k, v in where.items()}
                if back is not None:
                    worked_out.add(e)
                new_events.append(e)
                here = conds_of[e]
                for i, (step, what, act, conds) in enumerate(steps):
                    if conds and certain_only:
                        deferred.append((e, step, what, act, conds))
                    elif step == _CHILD:
                        at = i if back is None else back[i]
                        while j < n:
                            change = events[j]
                            if change.__class__ is not tuple or change[0] != at:
                                break
                            j += 1
                            if back is not None:
                                change = redone(e, what, act, here + conds if conds else here, (i,) + change[1:])
                                if change is None:
                                    return None
                                fresh.append(len(new_events))
                            put(change)
                            new_events.append(change)
                    else:
                        report(e, step, what, act, here + conds if conds else here)
                if j < n and events[j].__class__ is tuple:
                    return None  # a change the visit's calls did not make: the log does not fit
            replayed = phase == 3
        finally:
            if not replayed:
                self.stats.functions_walked = walked_before  # not replayed: the walk counts its own visits
        if not replayed:
            return None
        new_log = WalkLog(default_call)
        new_log.entries, new_log.events, new_log.hooks, new_log.fresh = entries, new_events, log.hooks, fresh
        if kept is not None:
            self.replays_keeping += 1
            return kept.findings(redo), new_log
        return findings + _fold_alternatives(findings, redo), new_log


class _KeptReports:
    """The reports of a replay whose caller keeps one finding per hazard (engine.walk_one merges each region's
    findings so): only the hazards the edit may have touched are reported again; the others are the previous
    walk's findings (``previous``: that region's merged findings).

    A report is *touched* when its node was worked out again (its steps changed) or when the path above it, as
    ``_prefix`` builds it at that moment, goes through a call of such a node (that call's frame may have
    moved).  Every other report is what the previous walk reported there: the same node, steps, conditions and
    facts on ``self`` (the log's), and a path built from the same calls.  A hazard site -- a (file, line):
    one finding's ``path`` and ``line``, the node's own file -- is touched when a touched report names it now,
    or when a node worked out again had a hazard or report step on it before the edit.  The findings of an
    untouched site are the previous walk's, merged: every report of it is one the previous walk made.  The
    reports of a touched site are all made again (the ones not touched at their moment, after the walk: the
    path above a node is built once, at its first report, so making it later gives the same finding), in walk
    order, and folded (``_fold_alternatives`` groups by site) -- what walking again gives for it.

    Only for a replay where every stale unit the old walk used is a node's steps or a fact on ``self`` the
    replay checks itself (Incremental._reports_unchanged): what the reports say (their units, the frames'
    reads) is then unchanged, and so are the module hooks the walk's
    functions register (not asked again: the same functions are reached; their units stay in use).  What a
    kept report says is not asked again either, and its unit is not kept in use: it reads only that its
    node's function and its loader exist, which their steps -- used by the replay -- read too."""

    __slots__ = ("reach", "previous", "parent", "ctx", "worked_out", "variant", "later", "links", "_tainted",
                 "_paths")

    def __init__(self, reach, previous: list, parent: dict, worked_out: set, variant):
        self.reach = reach
        self.previous = previous
        self.parent = parent
        self.ctx = None  # the reports' (ReportMixin._report), set by the replay
        self.worked_out = worked_out
        self.variant = variant
        # in walk order: a touched report's findings (a list), or an untouched one to make after the walk if
        # its site is touched: (node, step, what, action, conditions)
        self.later: list = []
        # node -> its parent link when a report first needed the path above it (walking again builds that path
        # then, ReportMixin._prefix, and keeps it): the paths of the reports made later are built from these
        self.links: dict = {}
        self._tainted: dict = {}  # node -> whether that path goes through a call of a node worked out again
        self._paths: dict = {}  # function id -> its file (a finding's path)

    def tainted_path(self, node) -> bool:
        """Whether the path above ``node`` goes through a call of a node worked out again.  Called at every
        report that makes a finding, before it, as walking again builds that path at them (its first): the
        links met on the way up are kept (``links``) for the reports made later."""
        tainted, links, parent = self._tainted, self.links, self.parent
        chain = []
        cur = node
        while cur not in tainted:
            link = parent.get(cur)
            links[cur] = link
            if link is None:
                tainted[cur] = False
                break
            chain.append(cur)
            cur = link[0]
        for n in reversed(chain):
            prev = links[n][0]
            tainted[n] = prev in self.worked_out or tainted[prev]
        return tainted[node]

    def _path(self, fid: str) -> str:
        path = self._paths.get(fid)
        if path is None:
            from .program import split_id

            mod = self.reach.p.module(split_id(fid)[0])
            path = self._paths[fid] = mod.path if mod else ""
        return path

    def findings(self, redo: dict) -> list:
        """The region's findings: the previous ones of the untouched sites, and the touched sites' reports."""
        from .reach import _CHILD, _dedup, _fold_alternatives

        reach = self.reach
        touched = set()
        for item in self.later:
            if item.__class__ is list:
                touched.update((f.path, f.line) for f in item)
        for node in self.worked_out:
            path = self._path(node.fid)
            touched.update((path, act.line) for step, _, act, _ in reach.replay_old_steps(node, self.variant)
                           if step != _CHILD)
        made: list = []
        for item in self.later:
            if item.__class__ is list:
                made.extend(item)
                continue
            node, step, what, act, conds = item
            if (self._path(node.fid), act.line) not in touched:
                reach.replay_reports_kept += 1
                continue
            conds = _dedup(conds)
            reporter = reach._reporter(step, what, act, node, self.ctx)
            found = reporter(conds)
            if conds:
                for f in found:
                    redo[id(f)] = reporter
            made.extend(found)
        return [f for f in self.previous if (f.path, f.line) not in touched] + made + _fold_alternatives(made, redo)
