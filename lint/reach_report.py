"""How the walk reports a hazard: the finding, its text, its call path as frames, and where a fix goes.

Mixed into ``Reach`` (``lint/reach.py``): the walk decides *that* a hazard is met, under which conditions;
this part says it.
"""
from __future__ import annotations

import functools

from compile_lint.rules import ALL_RULES

from .actions import Action, Node
from .findings import Finding, Frame
from .program import split_id
from .regions import Region
from .ruledef import BREAK, NOTE, SILENT


@functools.lru_cache(maxsize=65536)
def _top_package(path: str, import_roots: tuple = ()) -> str:
    """The top-level package a file belongs to: the first name under its import root (a scanned checkout's
    root, a site-packages), else the directory right under a site-packages.  (Without the import roots a
    checkout's files each looked like their own package, and every region became its own fix point: 65,014
    findings instead of 2,853 on a plain sglang + flashinfer tree.)"""
    norm = path.replace("\\", "/")
    for root in import_roots:
        if norm.startswith(root):
            return norm[len(root):].split("/", 1)[0]
    parts = norm.split("/")
    for i, p in enumerate(parts):
        if p in ("site-packages", "dist-packages"):
            return parts[i + 1] if i + 1 < len(parts) else p
    return "/".join(parts[:-1])


def hazard_detail(act: Action) -> str:
    """What a hazard's message adds for its kind."""
    return " (receiver type not resolved; matched by method name)" if act.kind == "shape" else ""


class BuiltPaths(dict):
    """The paths above the nodes (ReportMixin._prefix) of a logged walk, and which node's report first needed
    each (``by``; ``reporter``, when set, stands for the report that builds them): for a node whose parent
    link changed during the walk, the log keeps whether its path was built before (lint/reach_replay.py)."""

    __slots__ = ("by", "reporter")

    def __init__(self):
        super().__init__()
        self.by: dict = {}
        self.reporter = None


class ReportMixin:
    """Findings, their text and their paths (mixed into ``Reach``)."""

    @staticmethod
    def _hazard_reported(act: Action, node: Node) -> bool:
        """Whether a hazard step of ``node`` makes a finding (a report step always does; a replay keeping the
        previous findings asks before the report: lint/reach_replay.py)."""
        if act.kind == "env" and node.mode == "cached":
            return False  # eager caches the read too: both are frozen at the first call
        return act.kind not in ("random", "mutate") or node.mode == "cached"

    def _hazard(self, act: Action, node: Node, ctx, conditions: tuple = ()) -> list:
        if not self._hazard_reported(act, node):
            return []
        found = self._report(ALL_RULES[act.rule], act, node, ctx, hazard_detail(act), conditions)
        if act.kind == "env" and act.callee != "os.getenv" and act.detail:
            for f in found:  # dropped after the walk if the program sets this key (postwalk.drop_set_env_keys)
                f.env_key = act.detail
        return found

    # ------------------------------------------------------------------- report
    def _report(self, rule, act: Action, node: Node, ctx, detail: str = "", conditions: tuple = ()) -> list:
        parent, prefixes, region, region_ref = ctx
        _, code, severity, path, qualname, message, dynamo, loader_fix_point = self._report_fixed(
            rule, act, node, region, detail, not conditions)
        frames, cached = self._frames(node, act.line, parent, prefixes)
        return [Finding(
            rule=code,
            severity=severity,
            path=path,
            line=act.line,
            col=act.col + 1,
            qualname=qualname,
            message=message,
            dynamo=dynamo,
            region=region_ref,
            trace=tuple(frames),
            callee=act.callee,
            fix_point=loader_fix_point or self._fix_point(frames, cached, region),
            conditions=conditions,
        )]

    def _report_fixed(self, rule, act: Action, node: Node, region: Region, detail: str, certain: bool) -> tuple:
        """(the action, then ``_report_text``'s): what a report says depends on the node, the action and
        fullgraph only; the path to it, on the region.  Actions are keyed by identity (hashing one hashes its
        expressions) and kept in the entry, so that identity is never reused."""
        key = (id(act), node, rule.code, region.fullgraph is True, detail, certain)
        fixed = self._report_memo.get(key)
        if fixed is None:
            fixed = self._report_memo[key] = (act,) + self._report_text(rule, act, node, region.fullgraph, detail,
                                                                        certain)
        return fixed

    def path_fix_point(self, node: Node, ctx) -> str:
        """The fix point of a report in ``node`` that its path decides (``_report``: a node not under a cached
        loader of its own), whatever the line."""
        parent, prefixes, region, _ = ctx
        prefix, cached = self._prefix(node, parent, prefixes)
        # (of the node's own frame the fix point reads its file and function only: line 0 stands for any)
        return self._fix_point(prefix + (self._frame(node, 0),), cached, region)

    def _report_text(self, rule, act: Action, node: Node, fullgraph, detail: str, certain: bool = True) -> tuple:
        """(rule code, severity, path, qualname, message, Dynamo outcome, fix point if a cached loader)."""
        callee = act.callee
        message = rule.message.format(callee=callee, detail=act.detail or "")
        if rule.code == "CL117":
            message = rule.message.format(callee=callee, detail=act.detail)
        if rule.code == "CL202" and act.kind == "mutate":
            message = f"mutates module state `{callee}` inside a cached function: Dynamo ignores the cache, so " \
                      f"the mutation runs at every trace instead of once"
        if rule.code == "CL202" and act.kind == "random":
            message = f"`{callee}` inside a cached function draws new values on every compiled call (eager " \
                      f"returns the cached tensor)"
        if rule.code == "CL201" and act.detail:
            message += f" (key {act.detail!r})"
        message += detail
        kind = rule.kind
        if kind == SILENT and self.verdicts is not None and self.verdicts.stops(callee):
            kind = BREAK  # measured: it does not compile at all here (platform.platform on torch 2.13)
        if node.mode.startswith("tracetime") and rule.code not in ("CL204", "CL301") and kind != NOTE:
            marker = node.mode.split(":", 1)[1]
            inner = rule
            rule = ALL_RULES["CL204"]
            kind = rule.kind
            message = rule.message.format(callee=marker, detail=f"`{callee}` ({inner.code} {inner.name})")
        elif node.mode == "disabled" and rule.code != "CL116":
            message += " (behind torch.compiler.disable: Dynamo does not trace it; the disable is the stop)"
        if kind == BREAK:
            # an error only where every trace of a fullgraph region meets it; behind an undecided branch it may
            # stop Dynamo: a warning that names the branch
            severity = "error" if fullgraph is True and certain else "warning"
            if rule.code == "CL116" and fullgraph is not True:
                severity = "note"
        elif kind == SILENT:
            severity = "warning"
        else:
            severity = "note"
        if node.mode == "disabled":
            severity = "note"  # --show-disabled: Dynamo never runs it; what removing the disable would expose
        f = self.p.function(node.fid)
        mod = self.p.module(split_id(node.fid)[0])
        loader = self.p.function(node.loader) if node.loader else None
        return (rule.code, severity, mod.path if mod else "", f.qualname if f else split_id(node.fid)[1], message,
                rule.outcome_for(callee, self.verdicts) if rule.code not in ("CL204",) else rule.dynamo.describe(),
                loader.qualname if loader else None)

    def _frames(self, node: Node, line: int, parent: dict, prefixes: dict) -> tuple:
        """The call path from the region to ``line`` in ``node``, and which of its frames are cached loaders.

        A node's path is its parent's path plus one frame, so the paths above each node are kept per walk:
        a region reporting 300 hazards below one loader builds the frames above it once."""
        prefix, cached = self._prefix(node, parent, prefixes)
        return list(prefix) + [self._frame(node, line)], list(cached)

    def _frame(self, node: Node, line: int, end: tuple = ()) -> Frame:
        mod = self.p.module(split_id(node.fid)[0])
        f = self.p.function(node.fid)
        key = (mod.path if mod else "", line, f.qualname if f else split_id(node.fid)[1], end)
        # one object per distinct frame: every region builds the paths above its hazards anew, and the
        # benchmark site's walks held 474,671 frame objects of 4,222 values (kept in the incremental state)
        frame = self._frames_interned.get(key)
        if frame is None:
            frame = self._frames_interned[key] = Frame(*key)
        return frame

    def _prefix(self, node: Node, parent: dict, prefixes: dict) -> tuple:
        """(frames from the region down to ``node``'s caller, indices of the frames entered through a cached
        function); iterative, so a deep path cannot exhaust the stack."""
        chain = []
        cur = node
        while cur not in prefixes:
            link = parent.get(cur)
            if link is None:
                prefixes[cur] = ((), ())
                break
            chain.append(cur)
            cur = link[0]
        for n in reversed(chain):
            prev, act = parent[n]
            frames, cached = prefixes[prev]
            if act.target is not None and "cached" in getattr(act.target, "flags", ()):
                cached = cached + (len(frames) + 1,)  # n's own frame: it was entered as a cached loader
            prefixes[n] = (frames + (self._frame(prev, act.line, act.end),), cached)
        by = getattr(prefixes, "by", None)
        if by is not None and chain:
            reporter = prefixes.reporter or node
            for n in chain:
                by[n] = reporter
        return prefixes[node]

    def _fix_point(self, frames, cached_idx, region: Region) -> str:
        if cached_idx:
            return frames[min(cached_idx)].qualname
        region_top = _top_package(region.path, self.import_roots)
        for fr in frames:
            if _top_package(fr.path, self.import_roots) != region_top:  # (memoised: a million calls)
                return fr.qualname
        return frames[-1].qualname if frames else ""
