"""``compile-lint graph``: the resolved call graph from every region, as an adjacency list (PyCG's shape);
with ``--all``, the whole program's (lint/callgraph.py)."""
from __future__ import annotations

from collections import deque

from .engine import ScanOptions, scan
from .program import dotted


def build_graph(options: ScanOptions, everything: bool = False) -> dict:
    """{caller: [callees]} over fully qualified names, every reached node listed (leaves with []).  From the
    compiled regions; with ``everything``, from every function and module of the scanned files."""
    result = scan(options)
    program = result.program
    if everything:
        from .callgraph import CallGraph

        return CallGraph(program, program.scanned_modules).adjacency()
    from .reach import Reach

    reach = Reach(program, None)
    graph: dict = {}
    queue = deque()
    for r in result.regions:
        for fid, self_cls in r.entries:
            queue.append((fid, self_cls))
    seen = set(queue)
    while queue:
        fid, self_cls = queue.popleft()
        name = dotted(fid)
        edges = graph.setdefault(name, set())
        for act in reach.actions(fid, self_cls):  # context-free view: no constant arguments
            if act.kind in ("enter", "cached_property") and act.target is not None:
                tgt = act.target
                edges.add(dotted(tgt.id))
                for node in [(tgt.id, tgt.self_cls)] + [(w, None) for w in tgt.wrappers]:
                    if node not in seen:
                        seen.add(node)
                        queue.append(node)
            elif act.callee and act.kind not in ("stop", "unresolved"):
                edges.add(act.callee)
                graph.setdefault(act.callee, set())
    return {k: sorted(v) for k, v in sorted(graph.items())}


def _match(node: str, want: str) -> bool:
    return node == want or node.endswith("." + want)


def unknown_name(graph: dict, want: str):
    """None if some node of the graph is ``want`` (exactly or by dotted suffix); else the closest names
    (difflib, on the full names and on their last parts), for an error that helps."""
    import difflib

    if any(_match(n, want) for n in graph):
        return None
    names = sorted(graph)
    close = difflib.get_close_matches(want, names, n=3, cutoff=0.6)
    tails: dict = {}
    for n in names:
        tails.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    for t in difflib.get_close_matches(want.rsplit(".", 1)[-1], list(tails), n=3, cutoff=0.6):
        for n in sorted(tails[t], key=lambda x: (x.count("."), x)):  # the module-level function first
            if n not in close:
                close.append(n)
    return close[:3]


def paths_between(graph: dict, src: str, dst: str, limit: int = 20) -> list:
    """Shortest-first simple paths; names match exactly or by suffix (``get_cuda_version``)."""
    match = _match
    starts = [n for n in graph if match(n, src)]
    out = []
    queue = deque([[s] for s in starts])
    while queue and len(out) < limit:
        path = queue.popleft()
        last = path[-1]
        if match(last, dst) and len(path) > 1 or (match(last, dst) and src == dst):
            out.append(path)
            continue
        for nxt in graph.get(last, ()):
            if nxt not in path:
                queue.append(path + [nxt])
    return out
