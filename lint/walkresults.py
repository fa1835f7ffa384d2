"""A region walk's result as a tracked full scan keeps it for its incremental state (lint/incremental.py): held
as a run of ints while the scan runs, made objects again when the state is built.

The state keeps every region's own findings (an edit merges the reused regions' again); the scan's merge
holds only the finding it reports for each hazard.  On the benchmark site the 432 walks' 307,660 findings held
149 MB as objects at the walks' end: a Finding, a trace tuple and a conditions tuple each, pointing at few
distinct parts -- 4.38 M frames of 5,779 Frames, 4.09 M conditions of 3,729 Conditions in 83,316 tuples.  A
full scan builds its state after the answer (lint/incstate.py's PendingState, in the child that writes it
behind the command), so the walks' ends keep each finding as ints: its plain fields, region and conditions
tuple numbered in one table of distinct values for the scan (``ResultPacker.parts``), then its trace's Frames.
Made objects again, the findings share the walks' very Frames, Conditions and regions, as the state did when
it kept the walks' objects.  (Pickled and compressed instead, a walk's pickle holds its own copy of every
part: 172 MB, 24 MB compressed, 5.3 s to pack and 6.8 s to read again, and as many more objects in the state
unless they are made one per value again.)

Its walk logs (lint/reach_replay.py's WalkLog) are held so too (LogPacker): a log's events are its visits
(a node), the changes of a node's traversal state (a tuple of the step, the node, its parent link, the path's
conditions and the facts on ``self``) and two markers; their parts are one object per value already
(Incremental._share_log_values), so each event is a few ints numbering them -- on the benchmark site
1,033,934 change tuples, 80 bytes each and 8 for their place in the list, where their ints take 24.

An edit's scan builds its state before the answer and keeps the results as they are; so does a process that
keeps its merges (the daemon: postwalk.keeps_merges), whose merge holds the same lists (postwalk.MergeMemo
folds them by list object).
"""
from __future__ import annotations

import dataclasses
from array import array
from operator import attrgetter

from .findings import Finding

_APART = ("region", "trace", "conditions")  # a Finding's fields numbered apart from the plain ones
_PLAIN = tuple(f.name for f in dataclasses.fields(Finding) if f.name not in _APART)
_plain_fields = attrgetter(*_PLAIN)


class Packed:
    """A walk's result (engine.walk_one's: its findings, the hazard shown first, the functions walked) as ints:
    per finding its plain fields', region's and conditions' numbers, its trace's length and its Frames'."""

    __slots__ = ("codes", "first", "n")

    def __init__(self, codes: array, first, n: int):
        self.codes, self.first, self.n = codes, first, n


class ResultPacker:
    """One full scan's numbering of its findings' parts: ``parts`` holds each distinct value once, the first
    object met of it (Frames, Conditions and regions by their fields, all of them: equality leaves out some
    -- where a call ends, the guard's expression -- that others read)."""

    def __init__(self):
        self.parts: list = []
        # a part's key -> its number, one table per kind of part: plain fields, regions, Conditions, tuples
        # of Conditions (by their numbers), Frames
        self._sites, self._regions, self._conditions, self._condition_tuples, self._frames = {}, {}, {}, {}, {}
        self._by_id: dict = {}  # id(a part held in ``parts``) -> its number (what the walks share, at once)

    def _number(self, obj, key, table: dict) -> int:
        i = self._by_id.get(id(obj))
        if i is None:
            i = table.get(key)
            if i is None:
                i = table[key] = len(self.parts)
                self.parts.append(obj)
                self._by_id[id(obj)] = i
        return i

    def pack(self, result: tuple):
        """``result`` as ints (Packed), or as it is where a part cannot be numbered (a value not hashable)."""
        found, first, n = result
        codes = array("I")
        number, by_id, sites, parts = self._number, self._by_id, self._sites, self.parts
        regions, conditions, condition_tuples, frames = \
            self._regions, self._conditions, self._condition_tuples, self._frames
        try:
            for f in found:
                plain = _plain_fields(f)
                site = sites.get(plain)
                if site is None:
                    site = sites[plain] = len(parts)
                    parts.append(plain)
                r, cs, trace = f.region, f.conditions, f.trace
                codes.append(site)
                codes.append(number(r, (r.path, r.line, r.qualname, r.fullgraph, r.kind), regions))
                c = by_id.get(id(cs))
                if c is None:  # (keyed by its Conditions' numbers: their equality leaves out the guard)
                    c = number(cs, tuple([number(cond, (cond.path, cond.line, cond.text, id(cond.expr),
                                                        cond.polarity), conditions) for cond in cs]),
                               condition_tuples)
                codes.append(c)
                codes.append(len(trace))
                codes.extend([number(fr, (fr.path, fr.line, fr.qualname, fr.end), frames) for fr in trace])
        except TypeError:  # (unhashable: what a fixer sets, after the walks -- never at a walk's end)
            return result
        if first is not None:  # (by its place among the findings, where it is one of them)
            at = next((i for i, f in enumerate(found) if f is first[0]), None)
            first = (at, None if at is not None else first[0], first[1])
        return Packed(codes, first, n)

    def unpack_all(self, walks: list) -> None:
        """Each packed result of ``walks`` ((key, region, unit, result, logs), in place) made objects again."""
        for i, (key, region, uid, result, logs) in enumerate(walks):
            if result.__class__ is Packed:
                walks[i] = (key, region, uid, self._unpack(result), logs)

    def _unpack(self, packed: Packed) -> tuple:
        parts, codes, found = self.parts, packed.codes, []
        i, end = 0, len(codes)
        while i < end:
            site, region, conditions, k = codes[i:i + 4]
            i += 4
            trace = tuple([parts[j] for j in codes[i:i + k]])
            i += k
            found.append(Finding(**dict(zip(_PLAIN, parts[site])), region=parts[region], trace=trace,
                                 conditions=parts[conditions]))
        first = packed.first
        if first is not None:
            at, finding, error = first
            first = (found[at] if at is not None else finding, error)
        return found, first, packed.n


_DEFER, _PHASE, _CHANGE = -1, -2, -3  # a log's "D" and "P" markers, and the tag that leads a change's ints
_NO_PART = -1  # a change's parent link or facts that are None


class LogPacker:
    """One full scan's numbering of its walk logs' parts (a node, a parent link, a path's conditions, the
    facts on ``self``: the one object of each value, numbered by identity).  A visit is its node's number, a
    change ``_CHANGE, step, node, link, conditions, facts``."""

    def __init__(self):
        self.parts: list = []
        self._by_id: dict = {}  # id(a part held in ``parts``) -> its number

    def _number(self, obj) -> int:
        if obj is None:
            return _NO_PART
        i = self._by_id.get(id(obj))
        if i is None:
            i = self._by_id[id(obj)] = len(self.parts)
            self.parts.append(obj)
        return i

    def pack(self, logs: list) -> None:
        """Each new log's events as ints (an ``array``, in place); a log that holds anything else stays a list."""
        number = self._number
        for log in logs:
            if log.fresh is not None:  # (a replay's: never in a full scan)
                continue
            codes = array("i")
            for e in log.events:
                cls = e.__class__
                if cls is tuple:
                    at, child, link, cs, fs = e
                    codes.extend((_CHANGE, at, number(child), number(link), number(cs), number(fs)))
                elif cls is str:
                    if e == "D":
                        codes.append(_DEFER)
                    elif e == "P":
                        codes.append(_PHASE)
                    else:
                        break
                else:
                    codes.append(number(e))
            else:
                log.events = codes

    def unpack_all(self, walks: list) -> None:
        """The packed logs of ``walks`` ((key, region, unit, result, logs)) made lists of events again."""
        parts = self.parts
        for _, _, _, _, logs in walks:
            for log in logs:
                codes = log.events
                if codes.__class__ is not array:
                    continue
                events, i, n = [], 0, len(codes)
                while i < n:
                    c = codes[i]
                    if c >= 0:
                        events.append(parts[c])
                        i += 1
                    elif c == _CHANGE:
                        at, child, link, cs, fs = codes[i + 1:i + 6]
                        events.append((at, parts[child],
                                       *[None if j == _NO_PART else parts[j] for j in (link, cs, fs)]))
                        i += 6
                    else:
                        events.append("D" if c == _DEFER else "P")
                        i += 1
                log.events = events
