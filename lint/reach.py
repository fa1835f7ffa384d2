"""Reach: walk from each region with Dynamo's semantics and report every hazard on the way.

The walk is a breadth-first search over ``Node`` = (function, class bound to ``self``, mode), so the first
time a node is reached is by a shortest path; the parent links give the call path of every finding.

It runs in two phases.  The first follows only the calls whose guards are all decided true (or absent): what it
reaches, Dynamo meets every time the region is traced, and a break there is an error under fullgraph.  The
second follows the rest: a hazard reached only through a branch the analyzer could not decide (a config value,
an environment variable, an ``except`` handler) carries those branches as ``conditions`` and is a warning.

What one call site means is worked out once per (function, self class) as a list of ``Action``s
(``actions``); how an action is reported depends on the walk's mode:

- ``trace``: ordinary traced code;
- ``cached``: below a ``functools.cache``: Dynamo traces it anyway, env reads agree with eager (both frozen),
  Python side effects and random values do not;
- ``tracetime:<marker>``: below ``allow_in_graph``/``nonstrict_trace``/``assume_constant_result``: the body runs
  while tracing, so its hazards are silent differences (CL204), not breaks;
- ``disabled``: below a ``torch.compiler.disable``, walked only with ``--show-disabled``: Dynamo stops at the
  call (CL116) and never traces the body, so its hazards are notes -- what removing the disable would expose.
"""
from __future__ import annotations

import functools
from collections import deque
from dataclasses import dataclass, field
from typing import Optional

from compile_lint.rules import ALL_RULES, rule_for_call, rule_for_enter, rule_for_shape
from compile_lint.rules.caching import RANDOM_FACTORIES

from .actions import Action, Node
from .dynamo import model
from .dynamo.verdicts import load_verdicts
from .exprtext import condition as condition_text
from .exprtext import source as source_text
from .findings import ALTERNATIVE, ARGUMENT_PASSED, BEHIND_DISABLE, CONDITIONAL_WRAPPER, Condition, Finding, Frame, RegionRef
from .implicit import IMPLICIT, ImplicitCallsMixin, builtin_name
from .program import Program, Scope, dotted, split_id
from .program.evaluate import tensor_valued
from .regions import Region
from .ruledef import BREAK, NOTE, SILENT
from .summary import Guard
from .values import (
    Class,
    Const,
    External,
    ExternalInstance,
    Foreign,
    Func,
    Instance,
    Op,
    Partial,
    SeqVal,
    TupleVal,
    ordered,
)


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


_CHILD, _HAZARD, _REPORT = "child", "hazard", "report"  # the kinds of step in Reach._steps

MAX_CONST_PARAMS = 6
MAX_FOLDED_PATHS = 16  # paths to one hazard compared for opposite branches (_fold_alternatives)
MAX_CONST_ALTERNATIVES = 4
MAX_CONST_CONTEXTS = 16  # distinct constant contexts per function (Reach._const_args)


def _simple_const(v) -> bool:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return not isinstance(v, str) or len(v) <= 64
    if isinstance(v, tuple):
        return len(v) <= 8 and all(_simple_const(x) for x in v)
    return False


def module_of(name: str) -> str:
    parts = []
    for p in name.split("."):
        if p.endswith("()") or p[:1].isupper():
            break
        parts.append(p)
    if len(parts) == len(name.split(".")):
        parts = parts[:-1]
    return ".".join(parts) or name


class Reach(ImplicitCallsMixin):
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
        self._const_contexts: dict = {}  # function id -> the constant contexts it was entered with
        self._report_memo: dict = {}  # what a report says, by (action, node, rule, fullgraph): _report
        self._steps_memo: dict = {}

    # ----------------------------------------------------------- call-site meaning
    def scope_of(self, fid: str, self_cls: Optional[str], consts: tuple = ()) -> Scope:
        f = self.p.function(fid)
        bindings = {k: frozenset(v if isinstance(v, Func) else Const(v) for v in vs) for k, vs in consts
                    if k != CLOSURE} if consts else None
        closure = next((dict(vs) for k, vs in consts if k == CLOSURE), None)
        return Scope(split_id(fid)[0], f, fid, self_cls, bindings or None, closure=closure)

    def actions(self, fid: str, self_cls: Optional[str], consts: tuple = ()) -> list:
        key = (fid, self_cls, consts)
        if key in self._actions:
            return self._actions[key]
        self._actions[key] = []  # recursion guard
        f = self.p.function(fid)
        out: list = []
        if f is not None:
            scope = self.scope_of(fid, self_cls, consts)
            for site in f.calls:
                self.stats.sites.add((fid, site.line, site.col))
                out += self._call_actions(site, scope)
            for a in f.attrs:
                out += self._attr_actions(a, scope)
            for eff in f.effects:
                out += self._effect_actions(eff, scope)
            out += self._branch_actions(f, scope)
        self._actions[key] = out
        return out

    def _branch_actions(self, f, scope: Scope) -> list:
        """CL119: each branch of the function whose test is a tensor's value (``if amax == 0:``).  A branch is
        seen through the guards of the code it holds (calls, attribute reads, effects, returns); its own
        enclosing branches are its guards."""
        out, seen = [], set()
        held = [getattr(item, "guards", ()) for item in (*f.calls, *f.attrs, *f.effects)] + list(f.return_guards)
        for guards in held:
            for i, g in enumerate(guards):
                key = (g.line, g.cond)
                if key in seen:
                    continue
                seen.add(key)
                if self._tensor_test(g.cond, scope):
                    out.append(Action("sink", g.line, 0, guards[:i], rule="CL119", callee=source_text(g.cond)))
        return out

    def _tensor_test(self, cond, scope: Scope) -> bool:
        """Whether Python must take ``bool()`` of a tensor to decide ``cond``: a comparison with a tensor
        operand (``is`` / ``in`` excepted), or a tensor as the test itself."""
        k = cond[0]
        if k == "not":
            return self._tensor_test(cond[1], scope)
        if k == "bool":
            return any(self._tensor_test(x, scope) for x in cond[2])
        if k == "cmp":
            if len(cond[2]) != 1 or cond[2][0][0] not in ("Eq", "NotEq", "Lt", "LtE", "Gt", "GtE"):
                return False
            return tensor_valued(self.p.eval(cond[1], scope)) or tensor_valued(self.p.eval(cond[2][0][1], scope))
        if k in ("name", "attr", "call", "sub"):
            return tensor_valued(self.p.eval(cond, scope))
        return False

    def _call_actions(self, site, scope: Scope) -> list:
        spelled = self.p.syntactic_name(site.func, scope)
        if spelled is not None:
            rule = self._sink_rule(model.normalize(spelled))
            if rule is not None and rule.code != "CL201":
                self.stats.external_calls += 1
                return [Action("sink", site.line, site.col, site.guards, rule=rule.code,
                               callee=model.normalize(spelled))]
        vals = self.p.eval(site.func, scope)
        acts = []
        resolved = False
        for v in ordered(vals):
            a = self._classify(v, site, scope)
            if a:
                resolved = resolved or any(x.kind != "unresolved" for x in a)
                acts += a
        if not resolved:
            shape = None
            if site.func[0] == "attr":
                shape = rule_for_shape(site.func[2], len(site.args))
            if shape is not None:
                acts = [Action("shape", site.line, site.col, site.guards, rule=shape.code, callee=f"*.{site.func[2]}")]
            elif site.func[0] == "attr" and site.func[2] in model.TENSOR_METHODS:
                self.stats.boundaries += 1  # a tensor method on a receiver we could not type: in the graph
            else:
                key = (scope.func_id, site.line, site.col)
                if key not in self.stats.unresolved_sites:
                    self.stats.unresolved_sites.add(key)
                    if len(self.stats.unresolved_samples) < 200:
                        self.stats.unresolved_samples.append((scope.func_id, site.line, _text(site.func)))
        acts = [a for a in acts if a.kind != "unresolved"]
        acts = acts if _loop_variable_receiver(site.func, scope) else _alternatives(acts, site, self._alternative_label)
        acts += self._subclass_callback_actions(vals, site, scope)
        for name in {builtin_name(v) for v in vals} - {None}:
            acts += self._builtin_call_actions(name, site, scope)
        if site.func[0] == "attr":  # `self.pos_embed(x)` reads the attribute before calling it
            acts += self._attribute_read_actions(self.p.eval(site.func[1], scope), site.func[2],
                                                 (site.line, site.col, site.guards))
        return acts

    def _classify(self, v, site, scope: Scope) -> list:
        at = (site.line, site.col, site.guards)
        acts = self._classify_value(v, site, scope, at)
        for i, a in enumerate(acts):
            if a.kind == "enter" and a.detail != IMPLICIT:
                acts[i] = Action(a.kind, a.line, a.col, a.guards, a.target, a.rule, a.callee, a.detail,
                                 site.args, site.kwargs, (site.end_line, site.end_col))
        return acts

    def _classify_value(self, v, site, scope: Scope, at) -> list:
        if isinstance(v, (Func, Class)):
            # A sink is a sink even when its package is installed and indexed (filelock.FileLock).
            name = dotted(v.id)
            rule = self._sink_rule(name)
            if rule is not None and rule.code != "CL201":
                return [Action("sink", *at, rule=rule.code, callee=name)]
        if isinstance(v, Func):
            reason = self._skipped_file(v.id)
            if reason and not self._measured_compiles(dotted(v.id)):
                return [Action("skipped", *at, rule="CL117", callee=dotted(v.id), detail=reason)]
            return [Action("enter", *at, target=v, callee=dotted(v.id))]
        if isinstance(v, Op):
            self.stats.boundaries += 1
            return [Action("stop", *at, detail="op")]
        if isinstance(v, Class):
            measured = self._measured_class_call(v.id)
            if measured is not None:
                param = self._default_member_argument(measured, v.id, site, scope)
                if param is not None:  # the default compiles: only a member the caller passes stops Dynamo
                    why = Guard(("unknown", f"`{param}` is passed (Dynamo compiles `{split_id(v.id)[1]}()` of "
                                            f"its default)", ARGUMENT_PASSED), True, site.line)
                    at = (site.line, site.col, site.guards + (why,))
                return [Action("sink", *at, rule="CL118", callee=measured)]
            acts = self._dataclass_init_actions(v.id, at)  # a generated __init__ hides the bases' own
            if not acts:
                for init in ordered(self.p.member(v.id, "__init__", Instance(v.id))):
                    if isinstance(init, Func):
                        acts.append(Action("enter", *at, target=init, callee=dotted(v.id)))
            return acts or [Action("stop", *at, detail="class without __init__")]
        if isinstance(v, Instance):
            targets = self.p.callable_members(v)
            if targets:
                return [Action("enter", *at, target=t, callee=dotted(t.id)) for t in ordered(targets)]
            return [Action("unresolved", *at)]
        if isinstance(v, Partial):
            return [a for t in ordered(v.target) for a in self._classify_value(t, site, scope, at)]
        if isinstance(v, External):
            return self._classify_external(model.normalize(v.name), site, scope)
        if isinstance(v, Foreign):
            return [Action("foreign", *at, rule="CL114", callee=f"{v.origin}(...).{v.path}" if v.path else v.origin)]
        if isinstance(v, ExternalInstance):
            self.stats.external_calls += 1
            return [Action("stop", *at, detail="external object")]
        return [Action("unresolved", *at)]

    def _measured_compiles(self, name: str) -> bool:
        """Measured on this torch to compile when called directly (``re.findall``: Dynamo folds it)."""
        return self.verdicts is not None and self.verdicts.compiles(name)

    def _folded(self, name: str) -> bool:
        """Constant-folded by this torch's Dynamo on constant arguments: one of the model's candidates, measured
        to compile on it (``re.search`` and ``importlib.util.find_spec`` are folded on torch 2.13 and stop
        Dynamo on 2.11).  With no table, the model's list."""
        return name in model.CONSTANT_FOLDED and (self.verdicts is None or self._measured_compiles(name))

    def _sink_rule(self, name: str):
        """The rule naming this callee, unless it is a break that the measured table says compiles."""
        rule = rule_for_call(name)
        if rule is not None and rule.kind == BREAK and self._measured_compiles(name):
            return None
        return rule

    def _skipped_file(self, fid: str) -> Optional[str]:
        """Why the installed torch would skip the file defining ``fid`` (e.g. a package on its skip list)."""
        if self.trace_rules is None:
            return None
        mod = split_id(fid)[0]
        if mod not in self._skip_memo:
            m = self.p.module(mod)
            reason = None
            if m is not None and m.path and mod not in self.p.scanned_modules:
                reason = self.trace_rules.file_skip_reason(m.path)
            self._skip_memo[mod] = reason
        return self._skip_memo[mod]

    def _may_be_dynamic(self, site, scope: Scope) -> bool:
        """Some argument is certainly not a trace-time constant (the result of an external call, a tensor...).

        Parameters are taken as possibly constant: Dynamo constant-folds ``re.*`` on constant arguments, and a
        library helper's arguments are often constants at the real call site (``packaging.version.Version``).
        """
        for a in list(site.args) + [x for _, x in site.kwargs]:
            for v in self.p.eval(a, scope):
                if isinstance(v, ExternalInstance) and v.type.endswith("()") and not v.type.startswith("builtins."):
                    return True
                if isinstance(v, Foreign):
                    return True
        return False

    def _all_const(self, site, scope: Scope) -> bool:
        for a in site.args:
            vals = self.p.eval(a, scope)
            if not vals or not all(isinstance(x, Const) for x in vals):
                return False
        for _, a in site.kwargs:
            vals = self.p.eval(a, scope)
            if not vals or not all(isinstance(x, Const) for x in vals):
                return False
        return True

    def _measured_class_call(self, cid: str) -> Optional[str]:
        """``ActivationType(x)`` for an ``IntEnum`` of the scanned code: calling the class runs its external
        base's metaclass ``__call__`` (EnumType's lookup by value), whose verdict is measured -- it stops Dynamo on
        torch 2.11 (GB0116), compiles on 2.13.  The base's ``__call__`` name, when its verdict stops."""
        if self.verdicts is None:
            return None
        for base in self.p.mro(cid)[1:]:
            if ":" not in base and self.verdicts.stops(f"{base}.__call__"):
                return f"{base}.__call__"
        return None

    def _default_member_argument(self, callee: str, cid: str, site, scope: Scope) -> Optional[str]:
        """``SfLayout(sfLayout)`` where ``sfLayout`` is a parameter whose default is a member of that class
        (FlashInfer's ``mxfp4_quantize(..., sfLayout=SfLayout.layout_128x4)``): the parameter's name when the
        torch measured compiles the call on a default (``...__call__@default-argument``) -- on 2.11 it does,
        while a member read in the trace stops Dynamo (GB0116)."""
        f = scope.func
        if f is None or len(site.args) != 1 or site.kwargs or not self.verdicts.compiles(f"{callee}@default-argument"):
            return None
        arg = site.args[0]
        if arg[0] != "name" or arg[1] not in f.defaults:
            return None
        default = f.defaults[arg[1]]
        if default[0] != "attr" or Class(cid) not in self.p.eval(default[1], Scope(scope.module)):
            return None
        return arg[1]

    def _classify_external(self, name: str, site, scope: Scope) -> list:
        at = (site.line, site.col, site.guards)
        self.stats.external_calls += 1
        rule = self._sink_rule(name)
        if rule is not None:
            if rule.code == "CL201":
                key = None
                if site.args:
                    kv = self.p.eval(site.args[0], scope)
                    if len(kv) == 1 and isinstance(next(iter(kv)), Const):
                        key = next(iter(kv)).value
                return [Action("env", *at, rule=rule.code, callee=name, detail="" if key is None else str(key))]
            if self._folded(name) and self._all_const(site, scope):
                return [Action("stop", *at, detail="constant-folded")]
            return [Action("sink", *at, rule=rule.code, callee=name)]
        if name in RANDOM_FACTORIES:
            return [Action("random", *at, rule="CL202", callee=name)]
        if self._folded(name):
            if self._all_const(site, scope) or not self._may_be_dynamic(site, scope):
                return [Action("stop", *at, detail="constant-folded")]
        if "()" in name:
            return [Action("stop", *at, detail="method of an external object")]
        top = name.split(".")[0]
        if top in model.OPAQUE_PACKAGES and name not in model.CONSTANT_FOLDED:
            if self.verdicts is not None and self.verdicts.stops(name):
                # measured, it beats the package: `generator.get_state()` stops Dynamo (GB7650 on 2.13)
                return [Action("sink", *at, rule="CL118", callee=name)]
            self.stats.boundaries += 1
            return [Action("stop", *at, detail="torch")]
        if top == "builtins":
            return [Action("stop", *at, detail="builtin")]
        if self.trace_rules is not None:
            reason = self.trace_rules.module_skip_reason(module_of(name))
            if reason and not self._measured_compiles(name):
                return [Action("skipped", *at, rule="CL117", callee=name, detail=reason)]
        verdict = self.verdicts.get(name) if self.verdicts is not None else None
        if verdict is not None and verdict.stops:
            if self._on_instance_compiles(name, site, scope):
                return [Action("stop", *at, detail="measured to compile on an instance")]
            return [Action("sink", *at, rule="CL118", callee=name)]
        return [Action("stop", *at, detail="external")]

    def _on_instance_compiles(self, name: str, site, scope: Scope) -> bool:
        """``dataclasses.fields(CFG)`` on an instance of a scanned class where the torch measured compiles that
        (``dataclasses.fields@instance``: torch 2.13 traces it; on the class it stops, GB0180)."""
        if not site.args or not self.verdicts.compiles(f"{name}@instance"):
            return False
        vals = self.p.eval(site.args[0], scope)
        return bool(vals) and all(isinstance(v, Instance) for v in vals)

    def _attr_actions(self, a, scope: Scope) -> list:
        out = []
        for base in ordered(self.p.eval(a.base, scope)):
            if not isinstance(base, Instance):
                continue
            for cid in self.p.mro(base.cls):
                if ":" not in cid:
                    continue
                c = self.p.klass(cid)
                if c is None:
                    continue
                if a.attr in c.methods:
                    mod = split_id(cid)[0]
                    fv = self.p.function_value(f"{mod}:{c.methods[a.attr]}", Scope(mod))
                    if not isinstance(fv, Func):
                        break  # an op: opaque, nothing runs on attribute access
                    bound = Func(fv.id, base.cls, fv.flags, fv.wrappers)
                    if "cached_property" in fv.flags:
                        out.append(Action("cached_property", a.line, a.col, a.guards, target=bound, rule="CL115",
                                          callee=dotted(fv.id)))
                    elif "property" in fv.flags:
                        out.append(Action("enter", a.line, a.col, a.guards, target=bound, callee=dotted(fv.id)))
                    break
                if a.attr in c.class_attrs:
                    break  # an instance's own attribute does not hide a property: that store ran its setter
        return out + self._attribute_read_actions(self.p.eval(a.base, scope), a.attr, (a.line, a.col, a.guards))

    def _effect_actions(self, eff, scope: Scope) -> list:
        at = (eff.line, eff.col, eff.guards)
        if eff.kind == "with":
            out = []
            if eff.detail[0] == "call":
                return out  # `with FileLock(p):` -- the call itself is the reported site
            for v in ordered(self.p.eval(eff.detail, scope)):
                if isinstance(v, ExternalInstance):
                    r = rule_for_enter(model.normalize(v.type))
                    if r is not None:
                        out.append(Action("sink", *at, rule=r.code, callee=f"{v.type}.__enter__"))
                elif isinstance(v, Instance):
                    r = rule_for_call(dotted(v.cls))
                    if r is not None:
                        out.append(Action("sink", *at, rule=r.code, callee=f"{dotted(v.cls)}.__enter__"))
                        continue
                    for name in ("__enter__", "__exit__"):
                        for fn in ordered(self.p.member(v.cls, name, v)):
                            if isinstance(fn, Func):
                                out.append(Action("enter", *at, target=fn, callee=dotted(fn.id)))
            return out
        if eff.kind == "contains":
            container, key = eff.detail
            vals = self.p.eval(container, scope)
            membership = self._membership_actions(vals, at)
            if any(isinstance(v, External) and model.normalize(v.name) == "os.environ" for v in vals):
                kv = self.p.eval(key, scope)
                k = next(iter(kv)).value if len(kv) == 1 and isinstance(next(iter(kv)), Const) else None
                return [Action("env", *at, rule="CL201", callee="os.environ.__contains__",
                               detail="" if k is None else str(k))]
            return membership
        if eff.kind == "mutate":
            return [Action("mutate", *at, rule="CL202", callee=eff.detail)]
        if eff.kind == "subscript":
            return self._dunder_actions(eff.detail[0], "__getitem__", at, scope)
        if eff.kind == "iter":
            return self._iteration_actions(eff.detail, at, scope)
        if eff.kind in ("setitem", "setattr"):
            return self._dunder_actions(eff.detail[0], "__" + eff.kind + "__", at, scope)
        return []

    # ------------------------------------------------------------------- walk
    def _undecided(self, act: Action, node: Node, predicates: dict) -> Optional[tuple]:
        """The guards of ``act`` that the walk cannot decide, as Conditions; ``None`` when one is decided
        false (the call never runs); ``()`` when every guard holds."""
        if not act.guards:
            return ()
        key = (node.fid, node.self_cls, node.consts, act.guards, tuple(sorted(predicates.items())))
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
            res = tuple(_condition(path, g, act, t == g.polarity if assumed else None, assumed)
                        for g, t, assumed in open_)
        self._guard_memo[key] = res
        return res

    def walk(self, region: Region, visited: Optional[set] = None, default_call: bool = False) -> list:
        """The findings of one region.  ``visited``, when given, receives the id of every function the walk
        enters (the real-code suite compares it with what Dynamo traced: tests/realcode/).  ``default_call``:
        the entry called with its required arguments only, its optional parameters at their defaults
        (library mode asks which hazard such a call meets first)."""
        predicates = dict(model.REGION_PREDICATES)
        predicates.update(region.predicates)
        variant = (tuple(sorted(predicates.items())), region.fullgraph is True)
        region_ref = RegionRef(region.path, region.line, region.qualname, region.fullgraph, region.kind)
        parent: dict = {}  # node -> None (an entry) or (caller node, action, the call's undecided conditions)
        prefixes: dict = {}  # node -> (frames from the region down to it, indices of cached frames): _frames
        conds_of: dict = {}  # node -> the undecided conditions on its path (empty for the certain ones)
        alternatives_seen: dict = {}  # which callees of a many-callee call led to a node: _all_alternatives
        # node -> what the guards on its path say of its `self` (_self_facts): `if self.merged: self.unmerge()`
        # makes unmerge's `if not self.merged: warnings.warn(...)` dead (peft's LoRA layers)
        self_facts: dict = {}
        findings: list = []
        ctx = (parent, prefixes, region, region_ref)

        def visit(node: Node, certain_only: bool, deferred: list) -> None:
            if visited is not None:
                visited.add(node.fid)
            self.stats.functions_walked += 1
            here = conds_of[node]
            for step, what, act, conds in self._steps(node, predicates, variant):
                if conds and certain_only:
                    deferred.append((node, step, what, act, conds))
                    continue
                take(node, step, what, act, here + conds if conds else here)

        def take(node: Node, step, what, act: Action, conds: tuple) -> None:
            known = self_facts.get(node)
            here = len(conds_of[node])
            if known and len(conds) > here:
                own = self._self_facts(node, conds[here:])
                if any((e, not pol) in known for e, pol in own if e is not None):
                    return  # the caller's guard on `self` decided this branch the other way
                conds = conds[:here] + tuple(c for c, f in zip(conds[here:], own) if f not in known)
            own_conds = conds[here:]  # this call's own guards (before a fold can shorten the path's)
            if step is _CHILD:
                folded = _all_alternatives(alternatives_seen, what, conds) if conds else None
                if folded is not None:
                    conds = folded
                if what not in parent:
                    parent[what] = (node, act)
                    conds_of[what] = conds
                    self_facts[what] = self._facts_for_callee(node, what, act, known, own_conds)
                    queue.append(what)
                elif conds_of[what]:
                    # reached again on another path: with no condition, or under the opposite branch
                    # (`if aot: load(a)` / `else: load(b)`): certain, and the hazards below it are reported
                    # again as such
                    # only to certainty (none left): a node is walked again at most once, so a library reached
                    # on many paths under many conditions costs one walk more, not one per combination
                    weaker = () if not conds else _either(conds_of[what], conds)
                    if weaker == ():
                        parent[what] = (node, act)
                        conds_of[what] = weaker
                        self_facts[what] = self._facts_for_callee(node, what, act, known, ())
                        queue.append(what)
            elif step is _HAZARD:
                emit(lambda c: self._hazard(act, node, ctx, c), _dedup(conds))
            else:
                emit(lambda c: self._report(ALL_RULES[what], act, node, ctx, conditions=c), _dedup(conds))

        redo: dict = {}  # id(finding) -> the report again, under other conditions (_fold_alternatives)

        def emit(report, conds: tuple) -> None:
            found = report(conds)
            if conds:
                for f in found:
                    redo[id(f)] = report
            findings.extend(found)

        # phase 1: what every trace of the region meets
        queue: deque = deque()
        entries = self._entry_nodes(region, default_call)
        for n, conds in entries:
            if n not in parent and not conds:
                parent[n] = None
                conds_of[n] = ()
                queue.append(n)
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
            while queue:
                visit(queue.popleft(), False, deferred)

        # phase 2: what only some traces meet, each under the conditions on its path
        enter(entries)
        for node, step, what, act, conds in deferred:
            take(node, step, what, act, conds_of[node] + conds)
            while queue:
                visit(queue.popleft(), False, deferred)
        # phase 3: the module hooks the traced code itself registers (transformers' output capturing installs
        # `output_capturing_hook` on the layers while the forward runs): they run at those modules' calls
        enter([h for node in list(parent) for h in self._hooks_registered_in(node)])
        return findings + _fold_alternatives(findings, redo)

    def _hooks_registered_in(self, node: Node) -> list:
        """[(hook node, (Condition,))] for each module hook ``node``'s function registers."""
        text = f"the module that `{dotted(node.fid)}` hooks is called after the hook is registered"
        return [(Node(hook, None), (cond,)) for hook, cond in self._hook_registrations(
            node.fid, lambda: self.scope_of(node.fid, node.self_cls, node.consts), text)]

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

    def _hook_registrations(self, fid: str, scope_of, text: str) -> list:
        """[(hook function id, Condition(text))] for each ``x.register_forward_hook(fn)`` (or ``_pre_hook``) in
        function ``fid``, ``fn`` evaluated in ``scope_of()``."""
        f = self.p.function(fid)
        sites = [s for s in (f.calls if f is not None else ()) if s.func[0] == "attr"
                 and s.func[2] in _HOOK_REGISTRATIONS and s.args]
        if not sites:
            return []
        scope = scope_of()
        mod = self.p.module(split_id(fid)[0])
        out = []
        for site in sites:
            cond = Condition(mod.path if mod else "", site.line, text, ("unknown", text), True)
            out += [(hv.id, cond) for hv in ordered(self.p.eval(site.args[0], scope))
                    if isinstance(hv, Func) and self.p.function(hv.id) is not None]
        return out

    def _self_facts(self, node: Node, conds: tuple) -> list:
        """Each condition of ``node``'s own guards as (expression with its ``self`` spelled ``<self>``, the
        truth it needs), or (None, None) where it does not test an attribute of ``self``."""
        f = self.p.function(node.fid)
        me = f.params[0] if f is not None and f.params and f.class_name else None
        return [_self_fact(c, me) for c in conds]

    def _facts_for_callee(self, node: Node, child: Node, act: Action, known, conds: tuple) -> frozenset:
        """What the callee may assume of its ``self``: the caller's facts and the call's own guards on ``self``
        -- only through a call on ``self`` itself (``self.unmerge()``), where the callee's ``self`` is the
        caller's.  (A method that changes the attribute between the test and the call would make this wrong:
        the walk does not follow stores; the guard is taken as the state the callee starts in.)"""
        if child.self_cls is None or child.self_cls != node.self_cls or not self._is_self_call(node, act):
            return frozenset()
        own = {fact for fact in self._self_facts(node, conds) if fact[0] is not None}
        return frozenset(known or ()) | own

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

    def _registered_hooks(self, cid: str) -> list:
        """The module hooks the class's own methods register (transformers' ``enable_input_require_grads``:
        ``input_embeddings.register_forward_hook(make_inputs_require_grads)``, which gradient checkpointing
        calls before training): they run inside the compiled forward -- where that method ran before compiling,
        which the walk cannot know, so each is an entry under that condition.  [(hook id, Condition)]"""
        if cid in self._hooks_memo:
            return self._hooks_memo[cid]
        out = []
        for c_id in self.p.mro(cid):
            c = self.p.klass(c_id) if ":" in c_id else None
            if c is None:
                continue
            mod = split_id(c_id)[0]
            for qual in c.methods.values():
                fid = f"{mod}:{qual}"
                out += self._hook_registrations(
                    fid, lambda fid=fid: Scope(mod, self.p.function(fid), fid, cid),
                    f"`{qual}` registered it as a module hook before compiling")
        self._hooks_memo[cid] = out = sorted(set(out), key=lambda hc: (hc[0], hc[1].line))
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
        steps = []
        for act in self.actions(node.fid, node.self_cls, node.consts):
            if act.kind in ("stop", "unresolved"):
                continue
            conds = self._undecided(act, node, predicates)
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
        self._steps_memo[key] = steps
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
        children = [Node(fv.id, fv.self_cls or self._self_passed(act, node, fv), mode, loader, consts)]
        children += [Node(w, self._wrapper_self(w, fv), mode, loader) for w in fv.wrappers]
        return children

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
            seen = self._const_contexts.setdefault(fv.id, set())
            if res not in seen and len(seen) >= MAX_CONST_CONTEXTS:
                res = ()
            else:
                seen.add(res)
        self._const_memo[key] = res
        return res

    def _hazard(self, act: Action, node: Node, ctx, conditions: tuple = ()) -> list:
        rule = ALL_RULES[act.rule]
        if act.kind == "env" and node.mode == "cached":
            return []  # eager caches the read too: both are frozen at the first call
        if act.kind in ("random", "mutate") and node.mode != "cached":
            return []
        detail = ""
        if act.kind == "shape":
            detail = " (receiver type not resolved; matched by method name)"
        found = self._report(rule, act, node, ctx, detail, conditions)
        if act.kind == "env" and act.callee != "os.getenv" and act.detail:
            for f in found:  # dropped after the walk if the program sets this key (engine._drop_set_env_keys)
                f.env_key = act.detail
        return found

    # ------------------------------------------------------------------- report
    def _report(self, rule, act: Action, node: Node, ctx, detail: str = "", conditions: tuple = ()) -> list:
        parent, prefixes, region, region_ref = ctx
        # what a report says depends on the node, the action and fullgraph only; the path to it, on the region.
        # Actions are keyed by identity (hashing one hashes its expressions) and kept in the entry, so that
        # identity is never reused.
        certain = not conditions
        key = (id(act), node, rule.code, region.fullgraph is True, detail, certain)
        fixed = self._report_memo.get(key)
        if fixed is None:
            fixed = self._report_memo[key] = (act,) + self._report_text(rule, act, node, region.fullgraph, detail,
                                                                        certain)
        _, code, severity, path, qualname, message, dynamo, loader_fix_point = fixed
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
        return Frame(mod.path if mod else "", line, f.qualname if f else split_id(node.fid)[1], end)

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
        return prefixes[node]

    def _fix_point(self, frames, cached_idx, region: Region) -> str:
        if cached_idx:
            return frames[min(cached_idx)].qualname
        region_top = _top_package(region.path, self.import_roots)
        for fr in frames:
            if _top_package(fr.path, self.import_roots) != region_top:  # (memoised: a million calls)
                return fr.qualname
        return frames[-1].qualname if frames else ""


def _breaks_at_disable(fv: Func, node: Node) -> bool:
    """A call into a ``torch.compiler.disable``d function from traced code (at trace time it simply runs)."""
    return "disabled" in fv.flags and not node.mode.startswith("tracetime")


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


def _text(e) -> str:
    k = e[0]
    if k == "name":
        return e[1]
    if k == "attr":
        return f"{_text(e[1])}.{e[2]}"
    if k == "call":
        return f"{_text(e[1])}(...)"
    if k == "sub":
        return f"{_text(e[1])}[...]"
    return f"<{k}>"


def _loop_variable_receiver(func, scope: Scope) -> bool:
    """``for layer in self.layers: layer(x)`` (or ``layer.step(x)``): the loop calls every element, not one of
    them, so the several classes a container holds are no alternatives."""
    while func[0] == "attr":
        func = func[1]
    if func[0] != "name" or scope.func is None:
        return False
    local = scope.func.locals

    def loop_var(name: str) -> bool:
        assigned = local.get(name)
        return bool(assigned) and all(e[0] == "iter" for e in assigned)

    def element(e) -> bool:  # `for i in range(n): layer = self.layers[i]` too
        return e[0] == "iter" or e[0] == "sub" and e[2][0] == "name" and loop_var(e[2][1])

    assigned = local.get(func[1])
    return bool(assigned) and all(element(e) for e in assigned)


# the nn.Module methods that register a function to run around the module's forward
_HOOK_REGISTRATIONS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
# the entry of a node's constants that holds what a closure closed over (Reach.scope_of: Scope.closure)
CLOSURE = "<closure>"


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


def _self_fact(c: Condition, me: Optional[str]) -> tuple:
    """(``self.merged`` as ``<self>.merged``, True) for a condition ``self.merged`` / ``not self.merged``
    (False) / ``self.x is None`` kept as it is; (None, None) for any other."""
    e, pol = c.expr, c.polarity
    if not me or not isinstance(e, tuple) or not e:
        return (None, None)
    while e[0] == "not":
        e, pol = e[1], not pol
    spelled = _respell_self(e, me)
    return (spelled, pol) if spelled is not None else (None, None)


def _respell_self(e, me: str):
    """``e`` with its root ``me`` (a method's first parameter) spelled ``<self>``; None unless ``e`` is an
    attribute chain on it (``self.a.b``) or a comparison of one with a constant."""
    if e[0] == "attr":
        if e[1] == ("name", me):
            return ("attr", ("name", "<self>"), e[2])
        inner = _respell_self(e[1], me)
        return ("attr", inner, e[2]) if inner is not None and inner[0] == "attr" else None
    if e[0] == "cmp" and len(e[2]) == 1 and e[2][0][1][0] == "const":
        left = _respell_self(e[1], me)
        return ("cmp", left, e[2]) if left is not None and left[0] == "attr" else None
    return None


def _alternatives(acts: list, site, label=lambda fid: split_id(fid)[1]) -> list:
    """A call that may run one of several functions (``self.quant_method.apply(...)`` with 22 quantization
    methods in view, a registry lookup) runs one of them: each is entered only if the callee is that one, a
    condition the walk cannot decide.  One function, whatever the receiver's class, is no alternative."""
    # the dunders a call runs besides its callee (a dataclass's __post_init__) are no alternative of it
    targets = {a.target.id for a in acts if a.kind == "enter" and a.detail != IMPLICIT}
    if len(targets) < 2:
        return acts
    spelled = _text(site.func)
    labels = {t: label(t) for t in targets}
    if len(set(labels.values())) < len(labels):  # one name in two modules (star imports under two branches)
        labels = {t: dotted(t) for t in targets}
    out = []
    for a in acts:
        if a.kind == "enter" and a.detail != IMPLICIT:
            # ("unknown", text, ALT, the site, how many, which): Reach._undecided makes it a Condition that
            # Reach._all_alternatives can fold once every one of the site's callees led to the same place
            text = f"`{spelled}` is {labels[a.target.id]} (one of {len(targets)})"
            why = Guard(("unknown", text, ALTERNATIVE, (site.line, site.col, spelled), len(targets), a.target.id),
                        True, site.line)
            a = Action(a.kind, a.line, a.col, a.guards + (why,), a.target, a.rule, a.callee, a.detail, a.args,
                       a.kwargs, a.end)
        out.append(a)
    return out


def _condition(path: str, g: Guard, act: Action, by_default: Optional[bool] = None,
               assumed: frozenset = frozenset()) -> Condition:
    """The Condition a guard the walk did not decide puts on the path.  A guard the configuration defaults
    decide (``assumed``) says which: ``by_default`` True -- the default configuration takes this way (``assumes
    T5Config.feed_forward_proj = 'relu'``); False -- only another configuration does."""
    c = g.cond
    if c[0] == "unknown" and len(c) == 6 and c[2] == ALTERNATIVE:
        # one of a call's callees: the site and their number are the branch, the callee is the way it goes
        return Condition(path, g.line or act.line, c[1], (ALTERNATIVE, path, c[3], c[4]), c[5])
    text = condition_text(g)
    if assumed:
        defaults = ", ".join(sorted(assumed))
        text += f" (assumes the default {defaults})" if by_default else f" (not the default {defaults})"
    return Condition(path, g.line or act.line, text, g.cond, g.polarity)


def _all_alternatives(seen: dict, node, conds: tuple) -> Optional[tuple]:
    """``node`` reached under ``conds``; ``seen`` remembers, per (node, the other conditions, call site), which
    callees of a site with several led here.  When every one of them has (``get_fp4_quantization_module``'s
    ``backend_modules[backend]()``: each of the 8 generators probes ``nvcc``), the site's condition is no
    condition: the other conditions are returned, else None."""
    for c in conds:
        if not (c.expr and c.expr[0] == ALTERNATIVE):
            continue
        rest = tuple(x for x in conds if x is not c)
        got = seen.setdefault((node, rest, c.expr), set())
        got.add(c.polarity)
        if len(got) >= c.expr[3]:
            return rest
    return None


def _dedup(conds: tuple) -> tuple:
    """The path's conditions, each once, in path order (a guard met twice on the way is one condition)."""
    if len(conds) < 2:
        return conds
    return tuple(dict.fromkeys(conds))


def _fold_alternatives(findings: list, redo: dict) -> list:
    """One hazard reached on several paths of a region, each under its own conditions (``load("a")`` under
    ``if aot:``, ``load("b")`` under ``else:``): the hazard is met when any of them holds.  Where that is fewer
    conditions (none at all, for both branches of one ``if``), the hazard is reported again with them; the
    engine keeps the most certain report."""
    groups: dict = {}
    for f in findings:
        if f.conditions and id(f) in redo:
            groups.setdefault((f.rule, f.path, f.line, f.fix_point), []).append(f)
    extra = []
    for group in groups.values():
        if len(group) < 2:
            continue
        # one round over the pairs of the first few paths: a fold of folds could grow without end on a
        # library whose hazards are reached on hundreds of paths (flashinfer's JIT loaders)
        sets = {f.conditions: f for f in group[:MAX_FOLDED_PATHS]}
        have = set(sets)
        folded = {}
        for a in have:
            for b in have:
                if a != b:
                    both = _either(a, b)
                    if both is not None and both not in have:
                        folded.setdefault(both, sets[a])
        if folded:
            best = min(folded, key=len)
            if len(best) < min(len(c) for c in have):
                extra += redo[id(folded[best])](best)
    return extra


def _either(old: tuple, new: tuple) -> Optional[tuple]:
    """The conditions under which a node reached under ``old`` or under ``new`` is reached, when that is
    fewer conditions than ``old`` (else None): ``new`` itself when it asks for less (a subset), or what both
    share when they differ only by one branch taken both ways."""
    so, sn = set(old), set(new)
    if sn < so:
        return _dedup(new)
    only_old, only_new = so - sn, sn - so
    if len(only_old) == 1 and len(only_new) == 1 and next(iter(only_old)).opposes(next(iter(only_new))):
        return tuple(c for c in old if c in sn)
    return None
