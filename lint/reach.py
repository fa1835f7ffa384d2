"""Reach: walk from each region with Dynamo's semantics and report every hazard on the way.

The walk is a breadth-first search over ``Node`` = (function, class bound to ``self``, mode), so the first
time a node is reached is by a shortest path; the parent links give the call path of every finding.

It runs in two phases.  The first follows only the calls whose guards are all decided true (or absent): what it
reaches, Dynamo meets every time the region is traced, and a break there is an error under fullgraph.  The
second follows the rest: a hazard reached only through a branch the analyzer could not decide (a config value,
an environment variable, an ``except`` handler) carries those branches as ``conditions`` and is a warning.

What one call site means is worked out once per (function, self class) as a list of ``Action``s
(``actions``, in ``lint/reach_actions.py``); the findings' text and call paths are ``lint/reach_report.py``'s.
How an action is reported depends on the walk's mode:

- ``trace``: ordinary traced code;
- ``cached``: below a ``functools.cache``: Dynamo traces it anyway, env reads agree with eager (both frozen),
  Python side effects and random values do not;
- ``tracetime:<marker>``: below ``allow_in_graph``/``nonstrict_trace``/``assume_constant_result``: the body runs
  while tracing, so its hazards are silent differences (CL204), not breaks;
- ``disabled``: below a ``torch.compiler.disable``, walked only with ``--show-disabled``: Dynamo stops at the
  call (CL116) and never traces the body, so its hazards are notes -- what removing the disable would expose.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from compile_lint.rules import ALL_RULES

from .actions import Action, Node
from .contexts import ContextCaps
from .dynamo import model
from .dynamo.verdicts import load_verdicts
from .exprtext import condition as condition_text
from .findings import BEHIND_DISABLE, CONDITIONAL_WRAPPER, Condition, RegionRef
from .hashonce import HashedTuple
from .implicit import ImplicitCallsMixin
from .program import Program, Scope, split_id
from .reach_actions import CLOSURE, ActionsMixin
from .reach_actions import module_of  # noqa: F401  (re-exported: tests, tools)
from .reach_conditions import (all_alternatives, dedup, either_certain, fold_alternatives, path_condition,
                               self_fact)
from .reach_hooks import ModuleHooksMixin
from .reach_replay import ReplayMixin, WalkLog
from .reach_report import BuiltPaths, ReportMixin, hazard_detail
from .regions import Region
from .values import Const, Func, Instance, SeqVal, TupleVal


@dataclass
class ReachStats:
    """What the walk met.  Call sites are counted once each, whatever the number of contexts (receiver class,
    constant arguments) their function was walked in: a recursion walked under 17 contexts must not weigh 17
    times in the unresolved ratio.  A site is unresolved if it was in any context."""
    sites: set = field(default_factory=set)  # (function id, line, col)
    unresolved_sites: set = field(default_factory=set)
    external_calls: int = 0
    boundaries: int = 0
    functions_walked: int = 0
    unresolved_samples: list = field(default_factory=list)

    @property
    def call_sites(self) -> int:
        return len(self.sites)

    @property
    def unresolved_calls(self) -> int:
        return len(self.unresolved_sites)


# the kinds of step in Reach._steps (compared with ==: an incremental scan's steps come back unpickled)
_CHILD, _HAZARD, _REPORT = "child", "hazard", "report"

MAX_CONST_PARAMS = 6
MAX_CONST_ALTERNATIVES = 4
MAX_CONST_CONTEXTS = 16  # distinct constant contexts per function (Reach._const_args)


def _simple_const(v) -> bool:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return not isinstance(v, str) or len(v) <= 64
    if isinstance(v, tuple):
        return len(v) <= 8 and all(_simple_const(x) for x in v)
    return False


class Reach(ActionsMixin, ReportMixin, ImplicitCallsMixin, ModuleHooksMixin, ReplayMixin):
    def __init__(self, program: Program, trace_rules=None, import_roots=(), torch_version=None,
                 show_disabled: bool = False):
        self.p = program
        # walk into torch.compiler.disable'd callees too (--show-disabled): Dynamo never traces them (the call is
        # the stop, CL116), so what lies there is reported as notes, what removing the disable would expose
        self.show_disabled = show_disabled
        self.trace_rules = trace_rules
        # what Dynamo measurably does with each callee, on the deployment's torch (--torch-version) or this
        # one (or the nearest one measured)
        self.verdicts = load_verdicts(torch_version or getattr(trace_rules, "torch_version", None))
        # "/"-terminated, longest first: a file's top-level package is the first name under its root
        self.import_roots = tuple(sorted({str(r).replace("\\", "/").rstrip("/") + "/" for r in import_roots},
                                         key=len, reverse=True))
        self.stats = ReachStats()
        self._actions: dict = {}
        self._guard_memo: dict = {}
        self._skip_memo: dict = {}
        self._const_memo: dict = {}
        self._hooks_memo: dict = {}  # class id -> the module hooks its methods register (_registered_hooks)
        self._self_calls: dict = {}  # method id -> the (line, col) of its calls on its own `self` (_is_self_call)
        self._const_contexts = ContextCaps(MAX_CONST_CONTEXTS)  # function id -> the constant contexts it is entered with
        self._report_memo: dict = {}  # what a report says, by (action, node, rule, fullgraph): _report
        self._steps_memo: dict = {}
        self._variants: dict = {}  # _variant
        self._hook_sites_memo: dict = {}  # function id -> whether it registers a module hook (_registers_hooks)
        # (path, line, qualname, end) -> the Frame: equal frames are one object (_frame); a value, not a memo --
        # the reads that give the key are made at each call
        self._frames_interned: dict = {}
        # the nodes the steps name, one object per value (_enter): the walk's tables are keyed by node, and
        # a node reached from another caller was an equal object, compared field by field at each lookup
        self._nodes_interned: dict = {}
        # an incremental scan's walk logs (lint/reach_replay.py): where each walk appends its own, the previous
        # scan's to replay, and how a node's steps changed since they were logged
        self.walk_logs: Optional[list] = None
        self.replay_logs: Optional[list] = None
        self.child_steps_moved = None
        self.replayed = 0
        # the region's findings from its previous walk (engine.walk_one's), where a replay may
        # keep those of the hazards the edit did not touch; a node's steps when the log was made; the replays
        # that kept findings so, the visits whose reports they took so, and those that reported every hazard
        # again after all (a path above a report moved: reach_replay._KeepingReplay)
        self.replay_findings: Optional[list] = None
        self.replay_old_steps = None
        self.replays_keeping = 0
        # whether the caller merges a region's findings per key, not reading every path (reach_replay.Touched)
        self.replay_by_key = False
        self.replay_visits_kept = 0
        self.replays_relinked = 0
        # of the replays keeping findings, those that went from the log's index; the nodes of a variant whose
        # steps the edit made stale (lint/incremental.py: reach_replay_indexed.IndexedReplay)
        self.replays_indexed = 0
        self.replay_stale_nodes = None
        # (id of a node's steps, the node) -> (the steps, and what _KeepingReplay._kinds says of them)
        self._replay_kinds: dict = {}
        self._replay_files: dict = {}  # module -> its file, as a finding's path names it (reach_replay)
        self._reporter_keys: dict = {}  # _reporter_key
        # IndexedReplay._near_steps: (touched sites, id(node), id(variant)) -> (node, its near steps), and the
        # touched sites, one object per value
        self._replay_near: dict = {}
        self._replay_sites: dict = {}


    # ------------------------------------------------------------------- walk
    def _undecided(self, act: Action, node: Node, predicates: dict, variant: tuple) -> Optional[tuple]:
        """The guards of ``act`` that the walk cannot decide, as Conditions; ``None`` when one is decided
        false (the call never runs); ``()`` when every guard holds.  ``variant`` (_variant) holds
        ``predicates`` sorted, one object per value: the memo's key takes that one, where a tuple sorted
        anew held its nine pairs again in each of the bench site's 47,385 keys (some 30 MB)."""
        if not act.guards:
            return ()
        key = (node.fid, node.self_cls, node.consts, act.guards, variant[0])
        if key in self._guard_memo:
            return self._guard_memo[key]
        scope = self.scope_of(node.fid, node.self_cls, node.consts)
        open_ = []
        res: Optional[tuple] = ()
        for g in act.guards:
            t, assumed = self.p.truth_and_assumptions(g.cond, scope, predicates)
            if t is None or assumed:
                # undecided, or decided only for the default configuration (a dataclass field read at its
                # default): either way the branch may run, and the finding names which way the test must go
                if not g.validated:
                    open_.append((g, t, assumed))
            elif t != g.polarity:
                res = None
                break
        if res is not None and open_:
            mod = self.p.module(split_id(node.fid)[0])
            path = mod.path if mod else ""
            res = tuple(path_condition(path, g, act, t == g.polarity if assumed else None, assumed)
                        for g, t, assumed in open_)
        self._guard_memo[key] = res
        return res

    def walk(self, region: Region, visited: Optional[set] = None, default_call: bool = False,
             by_site: bool = False) -> list:
        """The findings of one region.  ``visited``, when given, receives the id of every function the walk
        enters (the real-code suite compares it with what Dynamo traced: tests/realcode/).  ``default_call``:
        the entry called with its required arguments only, its optional parameters at their defaults
        (library mode asks which hazard such a call meets first).  ``by_site``: the caller reads the findings
        by hazard site (file, line), in walk order within each -- one per hazard (the most certain, the first
        of equals), or each with every path (the pre-commit hook) -- and not their order across sites (library
        mode's public APIs read their first hazard).

        With ``walk_logs`` set (an incremental scan), each walk appends its WalkLog there, and a walk whose
        previous log is in ``replay_logs`` is replayed from it where the traversal cannot have changed
        (lint/reach_replay.py); ``by_site``, the replay reports again only the hazards the edit may touch."""
        log = None
        if self.walk_logs is not None and visited is None:
            if self.replay_logs:
                old = self.replay_logs.pop(0)
                got = self.replay(region, old, default_call, by_site) if old.default_call == default_call else None
                if got is not None:
                    findings, new_log = got
                    self.walk_logs.append(new_log)
                    self.replayed += 1
                    return findings
                self.replay_logs = None  # the next walks of this region cannot follow the old ones either
            log = WalkLog(default_call)
            self.walk_logs.append(log)
        predicates = dict(model.REGION_PREDICATES)
        predicates.update(region.predicates)
        variant = self._variant(predicates, region)
        region_ref = RegionRef(region.path, region.line, region.qualname, region.fullgraph, region.kind)
        parent: dict = {}  # node -> None (an entry) or (caller node, action, the call's undecided conditions)
        # node -> (frames from the region down to it, indices of cached frames): _frames
        prefixes: dict = BuiltPaths() if log is not None else {}
        conds_of: dict = {}  # node -> the undecided conditions on its path (empty for the certain ones)
        alternatives_seen: dict = {}  # which callees of a many-callee call led to a node: all_alternatives
        # node -> what the guards on its path say of its `self` (_self_facts): `if self.merged: self.unmerge()`
        # makes unmerge's `if not self.merged: warnings.warn(...)` dead (peft's LoRA layers)
        self_facts: dict = {}
        findings: list = []
        ctx = (parent, prefixes, region, region_ref)
        # the log (WalkLog.events): each visit, each change of a node's parent/conditions/facts with the index
        # of the step that made it (-1: none), "D" before a deferred call is taken, "P" at each phase's end
        events = log.events if log is not None else None
        at = -1

        def visit(node: Node, certain_only: bool, deferred: list) -> None:
            nonlocal at
            if visited is not None:
                visited.add(node.fid)
            self.stats.functions_walked += 1
            here = conds_of[node]
            if events is not None:
                pos = len(events)
                events.append(node)
            for i, (step, what, act, conds) in enumerate(self._steps(node, predicates, variant)):
                if conds and certain_only:
                    deferred.append((node, step, what, act, conds))
                    if events is not None and step == _CHILD:
                        log.dvisits.append(pos)  # the visit whose call the "D" taking it stands for
                    continue
                at = i
                take(node, step, what, act, here + conds if conds else here)

        def take(node: Node, step, what, act: Action, conds: tuple) -> None:
            if step == _CHILD and not conds_of.get(what, True):
                return  # already reached on a path with no condition: nothing another path can add
            known = self_facts.get(node)
            here = len(conds_of[node])
            if known and len(conds) > here:
                conds = self._against_self_facts(node, conds, here, known)
                if conds is None:
                    return
            own_conds = conds[here:]  # this call's own guards (before a fold can shorten the path's)
            if step == _CHILD:
                folded = all_alternatives(alternatives_seen, what, conds) if conds else None
                if folded is not None:
                    conds = folded
                if what not in parent:
                    parent[what] = (node, act)
                    conds_of[what] = conds
                    self_facts[what] = self._facts_for_callee(node, what, act, known, own_conds)
                    queue.append(what)
                    if events is not None:
                        events.append((at, what, parent[what], conds, self_facts[what]))
                elif conds_of[what]:
                    # reached again on another path: with no condition, or under the opposite branch
                    # (`if aot: load(a)` / `else: load(b)`): certain, and the hazards below it are reported
                    # again as such
                    # only to certainty (none left): a node is walked again at most once, so a library reached
                    # on many paths under many conditions costs one walk more, not one per combination
                    if either_certain(conds_of[what], conds):
                        if events is not None and what in prefixes:
                            log.early[what] = prefixes.by[what]  # its path was built from the link it had
                        parent[what] = (node, act)
                        conds_of[what] = ()
                        self_facts[what] = self._facts_for_callee(node, what, act, known, ())
                        queue.append(what)
                        if events is not None:
                            events.append((at, what, parent[what], (), self_facts[what]))
            else:
                emit(self._reporter(step, what, act, node, ctx), dedup(conds))

        redo: dict = {}  # id(finding) -> the report again, under other conditions (fold_alternatives)

        def emit(report, conds: tuple) -> None:
            found = report(conds)
            if conds:
                for f in found:
                    redo[id(f)] = report
            findings.extend(found)

        # phase 1: what every trace of the region meets
        queue: deque = deque()
        entries = self._entry_nodes(region, default_call)
        if log is not None:
            log.entries = entries
        for n, conds in entries:
            if n not in parent and not conds:
                parent[n] = None
                conds_of[n] = ()
                queue.append(n)
                if events is not None:
                    events.append((-1, n, None, (), None))
        deferred: list = []
        while queue:
            visit(queue.popleft(), True, deferred)

        def enter(extra: list) -> None:
            """Walk from ``extra`` (node, conditions) entries not yet reached, under their conditions."""
            for n, conds in extra:
                if n not in parent:
                    parent[n] = None
                    conds_of[n] = conds
                    queue.append(n)
                    if events is not None:
                        events.append((-1, n, None, conds, None))
            while queue:
                visit(queue.popleft(), False, deferred)

        # phase 2: what only some traces meet, each under the conditions on its path
        if events is not None:
            events.append("P")
        at = -1
        enter(entries)
        for node, step, what, act, conds in deferred:
            if events is not None and step == _CHILD:
                events.append("D")
            at = -1
            take(node, step, what, act, conds_of[node] + conds)
            while queue:
                visit(queue.popleft(), False, deferred)
        # phase 3: the module hooks the traced code itself registers (transformers' output capturing installs
        # `output_capturing_hook` on the layers while the forward runs): they run at those modules' calls
        hooks = [h for node in list(parent) for h in self._hooks_registered_in(node)]
        if log is not None:
            events.append("P")
            log.hooks = hooks
        at = -1
        enter(hooks)
        return findings + fold_alternatives(findings, redo)

    def _variant(self, predicates: dict, region: Region) -> HashedTuple:
        """What a walk's steps of a node depend on besides the node (its predicates, fullgraph): one object per
        value, so that the steps table's keys compare by identity (a lookup per visit)."""
        v = HashedTuple((tuple(sorted(predicates.items())), region.fullgraph is True))
        return self._variants.setdefault(v, v)

    def _against_self_facts(self, node: Node, conds: tuple, here: int, known) -> Optional[tuple]:
        """``conds`` (the path's, ``here`` of them above ``node``) without the call's own guards that what the
        caller's guards say of ``self`` (``known``) decides true; None where it decides one false."""
        own = self._self_facts(node, conds[here:])
        if any((e, not pol) in known for e, pol in own if e is not None):
            return None  # the caller's guard on `self` decided this branch the other way
        return conds[:here] + tuple(c for c, f in zip(conds[here:], own) if f not in known)

    def _reporter(self, step, what, act: Action, node: Node, ctx):
        """How a hazard or report step is reported under some conditions (kept to report it again when its
        paths fold: fold_alternatives)."""
        if step == _HAZARD:
            return lambda c: self._hazard(act, node, ctx, c)
        return lambda c: self._report(ALL_RULES[what], act, node, ctx, conditions=c)

    def _reporter_key(self, step, what, act: Action, node: Node, region: Region) -> Optional[tuple]:
        """What the merge key of the finding ``_reporter``'s report makes owes to the step alone -- (rule code,
        file, the fix point if ``node`` is a cached loader's: ReportMixin._report_fixed; none of them depends
        on the region or the conditions) -- or None where it makes none; the fix point otherwise is the path's
        (ReportMixin.path_fix_point).  Kept for the scan by the action's and the node's identity (nodes are one
        object per value: _nodes_interned), each kept with it: a replay asks it of many thousand kept reports
        (reach_replay.Touched)."""
        memo_key = (id(act), id(node), step, what)
        got = self._reporter_keys.get(memo_key)
        if got is None or got[0] is not act or got[1] is not node:
            if step == _HAZARD:
                rule, detail = ALL_RULES[act.rule], hazard_detail(act)
            else:
                rule, detail = ALL_RULES[what], ""
            parts = None
            if step != _HAZARD or self._hazard_reported(act, node):
                fixed = self._report_fixed(rule, act, node, region, detail, True)
                parts = (fixed[1], fixed[3], fixed[7])
            got = self._reporter_keys[memo_key] = (act, node, parts)
        return got[2]

    def _alternative_label(self, fid: str) -> str:
        """How a condition names one of a call's callees: its qualified name, or for a module-level function
        defined in one branch of several (``if FLEX: def _call`` / ``else: def _call``), the branch."""
        mod, qual = split_id(fid)
        name = qual.split("@", 1)[0]
        m = self.p.module(mod) if "." not in name else None
        for b in (m.bindings.get(name, ()) if m is not None else ()):
            if b.kind == "def" and b.value == qual and b.guards:
                return f"the {name} defined if {' and '.join(condition_text(g) for g in b.guards)}"
        return qual

    def _self_facts(self, node: Node, conds: tuple) -> list:
        """Each condition of ``node``'s own guards as (expression with its ``self`` spelled ``<self>``, the
        truth it needs), or (None, None) where it does not test an attribute of ``self``."""
        f = self.p.function(node.fid)
        me = f.params[0] if f is not None and f.params and f.class_name else None
        return [self_fact(c, me) for c in conds]

    def _facts_for_callee(self, node: Node, child: Node, act: Action, known, conds: tuple) -> frozenset:
        """What the callee may assume of its ``self``: the caller's facts and the call's own guards on ``self``
        -- only through a call on ``self`` itself (``self.unmerge()``), where the callee's ``self`` is the
        caller's.  (A method that changes the attribute between the test and the call would make this wrong:
        the walk does not follow stores; the guard is taken as the state the callee starts in.)"""
        if child.self_cls is None or child.self_cls != node.self_cls or not self._is_self_call(node, act):
            return _NO_FACTS
        own = {fact for fact in self._self_facts(node, conds) if fact[0] is not None}
        # (``frozenset() | set()`` is a new empty set: a tracked scan's walk logs held a million of them)
        return frozenset(known or ()) | own or _NO_FACTS

    def _is_self_call(self, node: Node, act: Action) -> bool:
        """The call at ``act`` is ``self.method(...)`` on the method's own first parameter."""
        f = self.p.function(node.fid)
        if f is None or not f.params or not f.class_name:
            return False
        on_self = self._self_calls.get(node.fid)
        if on_self is None:
            me = ("name", f.params[0])
            on_self = self._self_calls[node.fid] = frozenset(
                (site.line, site.col) for site in f.calls if site.func[0] == "attr" and site.func[1] == me)
        return (act.line, act.col) in on_self

    def _entry_nodes(self, region: Region, default_call: bool = False) -> list:
        """The compiled functions, and the wrappers their decorators put around them: compiling a decorated
        ``forward`` traces the wrapper first (transformers' ``merge_with_config_defaults``, whose
        ``logger.warning_once`` stops Dynamo under gradient checkpointing)."""
        out = []
        for fid, self_cls in region.entries:
            consts = dict(self._default_consts(fid, self_cls) if default_call else ())
            consts.update(region.bound)  # a partial's arguments, whatever the call
            out.append((Node(fid, self_cls, consts=tuple(sorted(consts.items()))), ()))
            fv = self.p.function_value(fid, Scope(split_id(fid)[0]))
            if isinstance(fv, Func) and fv.id == fid:
                out += [(Node(w, self._wrapper_self(w, Func(fid, self_cls))), self._wrapper_conditions(fv, w))
                        for w in fv.wrappers]
            if self_cls is not None:
                out += [(Node(hook, None), (cond,)) for hook, cond in self._registered_hooks(self_cls)]
        return out

    def _default_consts(self, fid: str, self_cls: Optional[str]) -> tuple:
        """An entry's optional parameters whose defaults are constants, as a node's bound constants."""
        f = self.p.function(fid)
        if f is None or not f.defaults:
            return ()
        out = []
        for name in sorted(f.defaults):
            vals = self.p.eval(f.defaults[name], Scope(split_id(fid)[0]))
            if len(vals) == 1 and all(isinstance(v, Const) and _simple_const(v.value) for v in vals):
                out.append((name, (next(iter(vals)).value,)))
        return tuple(out)  # all of them: one node per entry, not one per call site (MAX_CONST_PARAMS)

    def _disable_condition(self, act: Action, node: Node, child: Node) -> tuple:
        """Entering a ``torch.compiler.disable``d function from traced code (``--show-disabled`` only): Dynamo
        stops at the call (CL116) and never traces the body, so what lies there is reported as a note under this
        condition -- what removing the disable would expose, never a stop (the corpus's c056/c070: measured, the
        call is the stop)."""
        if child.mode != "disabled" or node.mode == "disabled":
            return ()
        mod = self.p.module(split_id(node.fid)[0])
        name = split_id(act.target.id)[1]
        return (Condition(mod.path if mod else "", act.line, f"`{name}` is traced (without its torch.compiler.disable)",
                          (BEHIND_DISABLE, act.target.id)),)

    def _wrapper_conditions(self, fv, wid: str) -> tuple:
        """The condition of entering wrapper ``wid`` of ``fv``: none, unless its decorator installs it on some
        paths only (``Program.conditional_wrappers``)."""
        why = self.p.conditional_wrappers.get(getattr(fv, "id", None), {}).get(wid)
        if why is None:
            return ()
        f = self.p.function(fv.id)
        mod = self.p.module(split_id(fv.id)[0])
        return (Condition(mod.path if mod else "", f.line if f else 0, why, (CONDITIONAL_WRAPPER, wid)),)

    def _steps(self, node: Node, predicates: dict, variant: tuple) -> list:
        """What visiting ``node`` does, in order: (_CHILD, child node, action, conditions), (_HAZARD, None,
        action, conditions) or (_REPORT, rule code, action, conditions), where conditions are the call's
        undecided guards.  It depends on the node and the region's predicates and fullgraph only, so it is
        worked out once and shared by every region that reaches the node (432 regions of a site-packages
        reach the same layers again and again: a million visits, ~60,000 distinct nodes)."""
        key = (node, variant)
        steps = self._steps_memo.get(key)
        if steps is not None:
            return steps
        acts = tuple(a for a in self.actions(node.fid, node.self_cls, node.consts)
                     if a.kind not in ("stop", "unresolved"))
        steps = self._steps_of(node, predicates, variant, acts)
        self._steps_memo[key] = steps
        return steps

    def _steps_of(self, node: Node, predicates: dict, variant: tuple, acts: tuple) -> list:
        """_steps of the node's actions ``acts``: given, not looked up -- an incremental scan
        (lint/tracking.py) runs this in a unit of its own, so that what it works out in the node's scope (its
        guards, the arguments it passes) does not depend on the function's actions, which read its whole
        body: a line added to the body makes the node's steps stale, not every call whose arguments were
        first evaluated here."""
        steps = []
        for act in acts:
            conds = self._undecided(act, node, predicates, variant)
            if conds is None:
                continue
            if act.kind in ("enter", "cached_property"):
                if act.kind == "cached_property":
                    steps.append((_REPORT, "CL115", act, conds))
                if _breaks_at_disable(act.target, node):
                    steps.append((_REPORT, "CL116", act, conds))
                steps += [(_CHILD, child, act, conds + self._wrapper_conditions(act.target, child.fid)
                           + self._disable_condition(act, node, child))
                          for child in self._enter(act, node, fullgraph=variant[1])]
                continue
            steps.append((_HAZARD, None, act, conds))
        return steps

    def _enter(self, act: Action, node: Node, fullgraph: bool) -> list:
        """The nodes a call enters (the callee, and the bodies of decorators seen through)."""
        fv: Func = act.target
        if _breaks_at_disable(fv, node):
            if not self.show_disabled:
                return []  # Dynamo stops at the disable (CL116): what lies behind it runs eagerly, never traced
            mode = "disabled"
        elif node.mode.startswith("tracetime"):
            mode = node.mode
        else:
            tt = next((f for f in fv.flags if f.startswith("tracetime:")), None)
            if tt:
                mode = tt
            elif node.mode == "disabled":
                mode = "disabled"
            elif "cached" in fv.flags or node.mode == "cached":
                mode = "cached"
            else:
                mode = "trace"
        loader = node.loader or (fv.id if "cached" in fv.flags else None)
        consts = self._const_args(act, node, fv)
        one = self._nodes_interned
        children = [Node(fv.id, fv.self_cls or self._self_passed(act, node, fv), mode, loader, consts)]
        children += [Node(w, self._wrapper_self(w, fv), mode, loader) for w in fv.wrappers]
        return [one.setdefault(c, c) for c in children]

    def _self_passed(self, act: Action, node: Node, fv: Func) -> Optional[str]:
        """The class of the instance a call passes as ``self`` to a plain function whose first parameter is
        ``self`` (transformers' experts implementations: ``experts_forward(self, *args, **kwargs)`` calls
        ``grouped_mm_experts_forward(self, ...)``, which reads ``self._apply_gate``)."""
        f = self.p.function(fv.id)
        if f is None or f.class_name is not None or f.params[:1] != ("self",) or not act.args or \
                act.args[0][0] == "starred":
            return None
        vals = self.p.eval(act.args[0], self.scope_of(node.fid, node.self_cls, node.consts))
        classes = {v.cls for v in vals if isinstance(v, Instance)}
        return next(iter(classes)) if len(classes) == 1 and len(vals) == 1 else None

    def _wrapper_self(self, wid: str, fv: Func) -> Optional[str]:
        """The class bound to a method wrapper's ``self`` (``def forward_with_checkpointing(self, *args)``
        around a layer's ``forward``): the wrapped method's, so ``self.training`` reads the layer."""
        w = self.p.function(wid)
        return fv.self_cls if w is not None and w.params[:1] == ("self",) else None

    def _const_args(self, act: Action, node: Node, fv: Func) -> tuple:
        """The callee's parameters that are constants at this call (defaults included), or functions; and,
        for a closure, the functions it closed over (``CLOSURE``)."""
        f = self.p.function(fv.id)
        closed = _closed_functions(fv)
        if f is None or (not act.args and not act.kwargs and not f.defaults and not closed):
            return ()
        key = (node.fid, node.self_cls, node.consts, act.line, act.col, fv)
        if key in self._const_memo:
            return self._const_memo[key]
        scope = self.scope_of(node.fid, node.self_cls, node.consts)
        out = []
        try:
            bound = self.p.bind_args(f, fv, act.args, act.kwargs, scope)
        except RecursionError:
            bound = {}
        for name, vals in bound.items():
            # a parameter bound to one of a few constants (`major` is 12 on the GPU, 0 in the except branch);
            # functions count by what they are, not by what each closure of one closed over
            if not vals or len({v.id if isinstance(v, Func) else v for v in vals}) > MAX_CONST_ALTERNATIVES:
                continue
            if all(isinstance(v, Const) and _simple_const(v.value) for v in vals):
                out.append((name, tuple(sorted((v.value for v in vals), key=repr))))
            elif all(isinstance(v, Func) for v in vals) and not (f.class_name and f.params[:1] == (name,)):
                # a function passed as an argument (`mask_function=and_masks(causal, padding)`): what the
                # callee calls through the parameter, walked per call like a constant
                out.append((name, tuple(sorted(vals, key=repr))))
        res = tuple(sorted(out, key=lambda kv: kv[0]))[:MAX_CONST_PARAMS]
        if closed:
            res += ((CLOSURE, closed),)
        if res:
            # a recursion that counts (`_format_value(v, depth + 1)`, flashinfer's api_logging) would make a
            # new node per value: past a few constant contexts a function is walked without them
            if not self._const_contexts.admit(fv.id, res):
                res = ()
        self._const_memo[key] = res
        return res


_NO_FACTS = frozenset()  # what a callee may assume of its ``self`` where nothing is known: one object


def _breaks_at_disable(fv: Func, node: Node) -> bool:
    """A call into a ``torch.compiler.disable``d function from traced code (at trace time it simply runs)."""
    return "disabled" in fv.flags and not node.mode.startswith("tracetime")


def _closed_functions(fv: Func) -> tuple:
    """What a closure closed over that decides what it calls: the names bound to functions, or to tuples and
    lists of them (transformers' ``and_masks(*mask_functions)`` returns ``and_mask``, which calls each) --
    the functions only, without their own closures, so that the closures one function makes fall into few
    walk contexts (``MAX_CONST_CONTEXTS``)."""
    def functions(vals) -> frozenset:
        out = set()
        for v in vals:
            if isinstance(v, Func):
                out.add(Func(v.id, v.self_cls, v.flags, v.wrappers) if v.closure else v)
            elif isinstance(v, TupleVal):
                items = tuple(functions(i) for i in v.items)
                if any(items):
                    out.add(TupleVal(items))
            elif isinstance(v, SeqVal):
                elems = functions(v.elems)
                if elems:
                    out.add(SeqVal(elems))
        return frozenset(out)

    return tuple((k, fs) for k, vs in (fv.closure or ()) if (fs := functions(vs)))
