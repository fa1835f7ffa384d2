"""A replay keeping findings that goes only where the edit is: the log's index instead of its whole walk.

``_KeepingReplay`` (lint/reach_replay.py) takes every event of a log in order to know, at each hot visit, the
state that visit met.  But each node's state changes at most twice in a walk (reached, then reached again
certainly), and a visit meets the state of its node's last change before it: with an index of where each
node's visits and changes are (``LogIndex``, built once per log and carried to the logs its replays make),
the replay goes straight to the visits that matter -- the hot ones (of a node worked out again, or reached
through a hot node's call) and the kept ones at a touched hazard site -- and leaves the rest of the log as it
is.  On the bench's leaf edit a replayed region has ~7,500 visits and 3 hot ones.

The nodes worked out again are found from the other side: of the nodes whose steps the edit made stale
(``Reach.replay_stale_nodes``), those the log visits.  The others' steps are not looked up at all: they are
the logged ones, and the walk keeps using their units (lint/incremental.py keeps them in its uses).

What it gives is ``_KeepingReplay``'s, finding for finding, in the same order, and the same new log (a test
runs the two on every same-line edit of the fixtures).  The reports are made in walk order: a visit's at
(visit, step); a deferred step's (phase 1's conditional steps, taken in phase 2) just before the ``"D"`` of
the next deferred call after it (``WalkLog.dvisits`` says whose call each ``"D"`` takes), or at the end of
phase 2.  Where the order of the walk could matter otherwise, it hands over to ``_KeepingReplay``
(``SEQUENTIAL``): a node whose own state changes during its own visit (a call of itself reached again
certainly), a logged path builder worked out again, a report that needs the path above a node before that
node's link changes when no report needed it so before.
"""
from __future__ import annotations

from bisect import bisect_left
from heapq import heapify, heappop, heappush

from .reach import _CHILD, _HAZARD
from .reach_conditions import dedup, fold_alternatives
from .reach_replay import SEQUENTIAL, KeptFirst, Touched, _Replay, frame_moved, module_file

_END = float("inf")  # the time of the reports made again at kept visits: after the walk, as _KeepingReplay's


class LogIndex:
    """Where things are in a walk log's events: each node's visits and changes (at most two: reached, reached
    again certainly), the ``"D"`` and ``"P"`` marks, the visited nodes by module (once asked).  (Built for
    each replayed log of a scan in its own process -- 2.3 million events on the bench's leaf edit -- so it
    holds only what a replay needs: the changes a node's calls made are found from its visits.)"""

    __slots__ = ("visits", "changes", "dmarks", "phase_ends", "n_visits", "_by_module")

    def __init__(self, events: list):
        visits: dict = {}
        changes: dict = {}
        marks: list = []
        visits_get, changes_get = visits.get, changes.get
        for p, e in enumerate(events):
            cls = e.__class__
            if cls is tuple:
                got = changes_get(e[1])
                if got is None:
                    changes[e[1]] = [p]
                else:
                    got.append(p)
            elif cls is str:
                marks.append(p)
            else:
                got = visits_get(e)
                if got is None:
                    visits[e] = [p]
                else:
                    got.append(p)
        self.visits, self.changes = visits, changes
        self.dmarks = [p for p in marks if events[p] == "D"]
        self.phase_ends = [p for p in marks if events[p] != "D"]
        self.n_visits = len(events) - len(marks) - sum(map(len, changes.values()))
        self._by_module = None

    def by_module(self) -> dict:
        """The visited nodes by module (once asked)."""
        if self._by_module is None:
            self._by_module = {}
            for node in self.visits:
                self._by_module.setdefault(node.fid.partition(":")[0], []).append(node)
        return self._by_module


def index_walk_logs(walks: list) -> None:
    """Build the index of each walk log that has none (``IncState.walks``), with its visited nodes by module: a
    warm process does it after answering (keptstates.write_kept_states), so that the next edit's replays do
    not.  Measured on the bench site's daemon, the first leaf edit after priming spent 1.25 s of its 4.0 s
    building the indexes of the 123 logs it replayed (under py-spy, a CI run beside it); the 432 logs of the
    state take some 1.2 s, while nobody waits."""
    for _, _, _, _, logs in walks:
        for log in logs:
            if log.index is None:
                log.index = LogIndex(log.events)
                log.index.by_module()


class _Links:
    """The parent links as ``ReportMixin._prefix`` reads them (``get``, ``[]``) when it builds the path above
    a node: a node reached twice has its path from the first link where the log says a report built it
    before the second (``WalkLog.early``), else from the second -- and a report made before the second link
    that needs such a path the previous walk built later is a path that may have moved (the module
    docstring)."""

    __slots__ = ("replay", "now")

    def __init__(self, replay):
        self.replay = replay
        self.now = -1.0  # the time of the report that builds the path

    def get(self, n):
        r = self.replay
        ps = r.idx.changes[n]
        c = ps[0]
        if len(ps) > 1:
            if n not in r.log.early:
                if self.now < ps[1]:
                    r.order_matters = True
                c = ps[1]
        return r.new_events[c][2]

    __getitem__ = get


class IndexedReplay(_Replay):
    """One replay keeping findings, from the log's index (the module docstring).  ``run`` gives (findings, the
    new log), None where the log does not fit (walk again), or SEQUENTIAL."""

    def __init__(self, reach, region, region_ref, log, predicates, variant, previous: list):
        super().__init__(reach, region, region_ref, log, predicates, variant)
        if log.index is None:
            log.index = LogIndex(log.events)
        self.idx = log.index
        self.previous = previous
        self.links = _Links(self)
        self.ctx = (self.links, {}, region, region_ref)
        self.order_matters = False  # the walk's order matters here (the module docstring): SEQUENTIAL
        self.hot_from: dict = {}  # node -> the index of the change after which its visits are hot
        self.tasks: list = []  # the reports to make: (walk order key, node, step, what, action, conds, facts, n)

    # ------------------------------------------------------------------ where things are
    def state_at(self, n, p: int) -> tuple:
        """(conditions, facts on self) of ``n`` at index ``p``: those of its last change before."""
        ps = self.idx.changes[n]
        e = self.new_events[ps[1] if len(ps) > 1 and ps[1] < p else ps[0]]
        return e[3], e[4]

    def taken_at(self, v: int, c: int) -> float:
        """When phase 2 takes a deferred step of the visit at ``v`` that has ``c`` of the visit's deferred calls
        before it: at the ``"D"`` of the next deferred call, or at the end of phase 2."""
        k = bisect_left(self.log.dvisits, v) + c
        dmarks = self.idx.dmarks
        return dmarks[k] if k < len(dmarks) else self.idx.phase_ends[1]

    def hot(self, n, p: float) -> bool:
        """Whether ``n``'s visit or deferred report at ``p`` is hot."""
        if n in self.worked_out:
            return True
        h = self.hot_from.get(n)
        return h is not None and h < p

    def _file(self, mod: str) -> str:
        return module_file(self.reach, mod)

    # ------------------------------------------------------------------ the replay
    def run(self):
        idx, log, reach = self.idx, self.log, self.reach
        if len(idx.phase_ends) != 2 or len(log.dvisits) != len(idx.dmarks):
            return None
        stale = [n for n in reach.replay_stale_nodes(self.variant) if n in idx.visits]
        stale.sort(key=lambda n: idx.visits[n][0])  # worked out in the walk's order, as walking again does
        for n in stale:
            if self.steps(n) is None:
                return None  # its calls changed: walk again
        if any(b in self.worked_out for b in log.early.values()):
            return SEQUENTIAL
        hot_visits = 0
        for nodes in (self.worked_out, self.hot_from):  # (_heat needs the former's calls made again)
            if nodes is self.hot_from:
                self._heat()
            for n in list(nodes):
                for v in idx.visits[n]:
                    if self.hot(n, v):
                        hot_visits += 1
                        fits = self._hot_visit(n, v)
                        if self.order_matters:
                            return SEQUENTIAL
                        if not fits:
                            return None
        made = self._make(self.tasks, False)
        touched = Touched(reach.replay_by_key, self.previous)
        for _, found in made:
            touched.found(found)
        for node in self.worked_out:
            touched.old_steps(self._file(node.fid.partition(":")[0]), reach.replay_old_steps(node, self.variant))
        self.links.now = _END  # (the paths of the reports of kept visits: as the links are after the walk)
        tasks, stand_ins = self._kept_at(touched)
        again = self._make(tasks, True)
        if self.order_matters:
            return SEQUENTIAL
        # (a kept visit whose reports were made again is not counted kept: as _KeepingReplay counts)
        remade = len({key[0] for key, found in again if found and key[0].__class__ is int})
        made += again
        stand_ins.sort(key=_first)
        made += [(at, found) for at, key in stand_ins for found in [touched.place(key)] if found]
        made.sort(key=_first)
        findings = [f for _, found in made for f in found]
        reach.replay_visits_kept += idx.n_visits - hot_visits - remade
        reach.stats.functions_walked += idx.n_visits
        result = KeptFirst(self.previous, touched, findings + fold_alternatives(findings, self.redo))
        return result, log.replayed_as(self.new_events, dict(log.early), self.fresh)

    def _calls_of(self, n) -> list:
        """The indices of the changes ``n``'s calls made: those right after each of its visits, and the one
        (if any) right after each ``"D"`` that takes one of its deferred calls."""
        events, idx = self.log.events, self.idx
        end = len(events)
        out = []
        for v in idx.visits.get(n, ()):
            j = v + 1
            while j < end and events[j].__class__ is tuple:
                out.append(j)
                j += 1
        dvisits = self.log.dvisits
        v = idx.visits[n][0] if n in idx.visits else end
        k = bisect_left(dvisits, v)
        while k < len(dvisits) and dvisits[k] == v:
            d = idx.dmarks[k] + 1
            if d < end and events[d].__class__ is tuple:
                out.append(d)
            k += 1
        return out

    def _heat(self) -> None:
        """``hot_from``: a node reached by a change a hot node's call made is hot from that change on (in the
        walk's order: the first such change) -- of a node worked out again, a call whose frame moved
        (``frame_moved``: its changes are made again by then)."""
        hot_from, worked_out, events = self.hot_from, self.worked_out, self.log.events
        heap = [(p, events[p][1]) for w in worked_out for p in self._calls_of(w)
                if frame_moved(events[p], self.new_events[p])]
        heapify(heap)
        while heap:
            p, n = heappop(heap)
            if n in worked_out or n in hot_from:
                continue
            hot_from[n] = p
            for q in self._calls_of(n):
                if q > p:
                    heappush(heap, (q, events[q][1]))

    def _hot_visit(self, n, v: int) -> bool:
        """The visit of ``n`` at ``v``, hot: its reports to make, and where ``n`` was worked out again, the
        changes its calls made, made again with their new actions; False where the log does not fit (or,
        with ``order_matters``, where the walk's order matters)."""
        got = self.steps_of.get(n)  # (the nodes worked out again have theirs: run)
        if got is None:
            got = self.steps(n)
            if got is None or got[1] is not None:
                self.order_matters = True  # not a stale node, yet not its logged steps (cannot happen)
                return False
        steps, back = got
        conds_n, facts_n = self.state_at(n, v)
        here = len(conds_n)
        events = self.log.events
        end = len(events)
        for p in self.idx.changes[n]:  # its own state changing while it is visited: the walk's order matters
            if p > v and all(events[q].__class__ is tuple for q in range(v + 1, p + 1)):
                self.order_matters = True
                return False
        phase1 = v < self.idx.phase_ends[0]
        first_d = bisect_left(self.log.dvisits, v)
        c = 0  # its deferred calls so far
        j = v + 1
        for i, (step, what, act, conds) in enumerate(steps):
            if conds and phase1:
                if step != _CHILD:
                    self.tasks.append(((self.taken_at(v, c) - 0.5, v, i), n, step, what, act, conds_n + conds,
                                       facts_n, here))
                    continue
                if back is not None:  # the change its "D" took, made again
                    k = first_d + c
                    if k >= len(self.log.dvisits) or self.log.dvisits[k] != v:
                        return False
                    d = self.idx.dmarks[k] + 1
                    if d < end and events[d].__class__ is tuple and \
                            not self._again(n, d, act, conds_n + conds, facts_n, here, events[d]):
                        return False
                c += 1
            elif step == _CHILD:
                if back is not None:
                    at = back[i]
                    while j < end:
                        change = events[j]
                        if change.__class__ is not tuple or change[0] != at:
                            break
                        if not self._again(n, j, act, conds_n + conds if conds else conds_n, facts_n, here,
                                           (i,) + change[1:]):
                            return False
                        j += 1
            else:
                self.tasks.append(((v, i, 0), n, step, what, act, conds_n + conds if conds else conds_n,
                                   facts_n, here))
        return back is None or j >= end or events[j].__class__ is not tuple

    def _again(self, node, j: int, act, conds: tuple, known, here: int, change: tuple) -> bool:
        """The change ``j`` a call of ``node`` (worked out again) made, made again in the new log."""
        got = self.change_again(node, act, conds, known, here, change, self.idx.changes[change[1]][0] == j)
        if got is None:
            return False
        self.new_events[j] = got
        self.fresh.append(j)
        return True

    def _kept_at(self, touched: Touched) -> tuple:
        """The reports of the kept visits (and of their deferred steps) near the touched sites (Touched.near):
        (those to make again, as ``_make`` takes them; (walk order key, key) where each step whose reports the
        previous finding of its key stands in for (Touched.stand_in) first reports at a visit and after
        phase 1 -- in each the first visit whose guards on ``self`` let it report; the earlier of the two is
        where the key is first met).  (By node: a touched file's nodes are visited hundreds of times.)"""
        files = touched.files()
        sites = touched.near_sites()
        sites = self.reach._replay_sites.setdefault(sites, sites)  # (one object per value: _near_steps's keys)
        idx = self.idx
        tasks, stand_ins = [], []
        p1 = idx.phase_ends[0]
        for mod, nodes in idx.by_module().items():
            path = self._file(mod)
            if path not in files:
                continue
            for n in nodes:
                near = None
                for v in idx.visits[n]:
                    if self.hot(n, v):
                        continue
                    if near is None:
                        near = self._near_steps(n, path, touched, sites)
                        if not near:
                            break
                        placed: set = set()  # (step index, whether deferred) of the stand-ins found
                    conds_n, facts_n = self.state_at(n, v)
                    phase1 = v < p1
                    for i, step, what, act, conds, c, key in near:
                        deferred = bool(conds and phase1)
                        if key is not None and (i, deferred) in placed:
                            continue
                        at = (self.taken_at(v, c) - 0.5, v, i) if deferred else (v, i, 0)
                        all_conds = conds_n + conds if conds else conds_n
                        if key is None:
                            tasks.append((at, n, step, what, act, all_conds, facts_n, len(conds_n)))
                        elif self.against_facts(n, all_conds, facts_n, len(conds_n)) is not None:
                            placed.add((i, deferred))
                            stand_ins.append((at, key))
        return tasks, stand_ins

    def _near_steps(self, n, path: str, touched: Touched, sites: frozenset) -> list:
        """``n``'s hazard and report steps near a touched site that make a finding, each as (index, step, what,
        action, conditions, how many conditional calls come before it -- taken after phase 1 where the visit
        is in it --, the key of the previous finding that stands in for its reports or None).  Which steps are
        near is kept for the scan by the node, its variant and the touched ``sites`` (near_sites, one object
        per value), each with its Reach._reporter_key: an edit's replays touch the same sites and visit the
        same nodes of those files; the node's steps are the logged ones (a node worked out again is hot),
        which the replay keeps in use without looking them up."""
        reach = self.reach
        key = (sites, id(n), id(self.variant))
        got = reach._replay_near.get(key)
        if got is None or got[0] is not n:
            near = []
            c = 0
            for i, (step, what, act, conds) in enumerate(reach._steps(n, self.predicates, self.variant)):
                if step == _CHILD:
                    c += bool(conds)
                elif touched.near(path, act.line) and (step != _HAZARD or reach._hazard_reported(act, n)):
                    parts = reach._reporter_key(step, what, act, n, self.ctx[2])  # (not None: it reports)
                    near.append((i, step, what, act, conds, c, (act.line, parts)))
            # (with the (line, reporter key) pairs Touched.stand_ins takes, made once: it is asked each replay)
            got = reach._replay_near[key] = (n, near, [s[6] for s in near])
        near = got[1]
        if not near:
            return near
        return [s[:6] + (key,) for s, key in zip(near, touched.stand_ins(reach, got[2], n, self.ctx))]

    def _make(self, tasks: list, after_walk: bool) -> list:
        """The reports of ``tasks`` in walk order: [(key, findings)].  Those made again at kept visits are
        made after the walk (their paths as the links are then), as _KeepingReplay makes them."""
        tasks.sort(key=_first)
        out = []
        for key, node, step, what, act, conds, known, here in tasks:
            self.links.now = _END if after_walk else key[0]
            conds = self.against_facts(node, conds, known, here)
            if conds is not None:
                out.append((key, self.emit(node, step, what, act, dedup(conds))))
        return out


def _first(item):
    return item[0]
