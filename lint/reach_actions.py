"""What each call site of a function means to the walk: its ``Action``s (``Reach.actions``).

A function's body is turned, once per (function, self class, constant context), into the list of what Dynamo
does at each call, attribute read, branch and effect: enter a callee, stop at a skipped or unsupported callable,
meet a hazard a rule names, or nothing.  The walk (``lint/reach.py``) follows these lists; the findings' text
and paths are ``lint/reach_report.py``'s.
"""
from __future__ import annotations

from typing import Optional

from compile_lint.rules import rule_for_call, rule_for_enter, rule_for_shape
from compile_lint.rules.caching import RANDOM_FACTORIES

from .actions import Action
from .dynamo import model
from .exprtext import source as source_text
from .findings import ALTERNATIVE, ARGUMENT_PASSED
from .implicit import IMPLICIT, builtin_name
from .program import Scope, dotted, split_id
from .program.evaluate import tensor_valued
from .ruledef import BREAK
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
    ordered,
)


# the entry of a node's constants that holds what a closure closed over (Reach.scope_of: Scope.closure)
CLOSURE = "<closure>"


def module_of(name: str) -> str:
    parts = []
    for p in name.split("."):
        if p.endswith("()") or p[:1].isupper():
            break
        parts.append(p)
    if len(parts) == len(name.split(".")):
        parts = parts[:-1]
    return ".".join(parts) or name


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
            # reach_conditions.all_alternatives can fold once every one of the site's callees led to the same place
            text = f"`{spelled}` is {labels[a.target.id]} (one of {len(targets)})"
            why = Guard(("unknown", text, ALTERNATIVE, (site.line, site.col, spelled), len(targets), a.target.id),
                        True, site.line)
            a = Action(a.kind, a.line, a.col, a.guards + (why,), a.target, a.rule, a.callee, a.detail, a.args,
                       a.kwargs, a.end)
        out.append(a)
    return out


class ActionsMixin:
    """The ``Action``s of a function body (mixed into ``Reach``: it reads the program, the trace rules and the
    walk's memos)."""

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
            out = self._body_actions(fid, scope, f.calls, f.attrs, f.effects, f.return_guards)
        self._actions[key] = out
        return out

    def _body_actions(self, fid: str, scope: Scope, calls: tuple, attrs: tuple, effects: tuple,
                      return_guards: tuple) -> list:
        """What the function's calls, attribute reads, effects and branches do, its body's parts given: they
        are read by ``actions`` -- an incremental scan (lint/tracking.py) runs this in a unit of its own, so
        that the values it works out in the function's scope (a local, an argument) do not depend on the
        body's other lines: a line added to the body makes the function's actions stale, not every call
        whose arguments were first evaluated here."""
        out: list = []
        for site in calls:
            self.stats.sites.add((fid, site.line, site.col))
            out += self._call_actions(site, scope)
        for a in attrs:
            out += self._attr_actions(a, scope)
        for eff in effects:
            out += self._effect_actions(eff, scope)
        out += self._branch_actions((*calls, *attrs, *effects), return_guards, scope)
        return out

    def _branch_actions(self, items: tuple, return_guards: tuple, scope: Scope) -> list:
        """CL119: each branch of the function whose test is a tensor's value (``if amax == 0:``).  A branch is
        seen through the guards of the code it holds (calls, attribute reads, effects: ``items``; returns);
        its own enclosing branches are its guards."""
        out, seen = [], set()
        held = [getattr(item, "guards", ()) for item in items] + list(return_guards)
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
