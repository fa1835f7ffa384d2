"""Module hooks in a walk (lint/reach.py): a function that calls ``x.register_forward_hook(fn)`` (or ``_pre_hook``)
makes ``fn`` run inside the compiled forward once it ran, and a class whose methods register one gives its
compiled forward those hooks as entries, under the condition that the registering method ran before compiling
(transformers' ``enable_input_require_grads``, which gradient checkpointing calls)."""
from __future__ import annotations

from .actions import Node
from .findings import Condition
from .program import Scope, dotted, split_id
from .values import Func, ordered

# the nn.Module methods that register a function to run around the module's forward
_HOOK_REGISTRATIONS = frozenset({"register_forward_hook", "register_forward_pre_hook"})


def _hook_sites(f) -> list:
    """The call sites of function summary ``f`` that register a module hook: ``x.register_forward_hook(fn)``."""
    return [s for s in f.calls_named(*_HOOK_REGISTRATIONS) if s.func[0] == "attr" and s.args]


class ModuleHooksMixin:
    """The hooks' half of ``Reach`` (a mixin): it uses the walk's program (``p``), ``scope_of`` and the memo
    tables ``_hook_sites_memo`` and ``_hooks_memo`` (units of their own under incremental analysis:
    lint/tracking.py)."""

    def _hooks_registered_in(self, node: Node) -> list:
        """[(hook node, (Condition,))] for each module hook ``node``'s function registers."""
        if not self._registers_hooks(node.fid):
            return []
        text = f"the module that `{dotted(node.fid)}` hooks is called after the hook is registered"
        return [(Node(hook, None), (cond,)) for hook, cond in self._hook_registrations(
            node.fid, lambda: self.scope_of(node.fid, node.self_cls, node.consts), text)]

    def _registers_hooks(self, fid: str) -> bool:
        """Whether function ``fid`` calls ``x.register_forward_hook(fn)`` (or ``_pre_hook``) at all: the last
        phase of every walk asks it of each node reached, and hardly any does.  Memoised per function; under
        incremental analysis the answer is a unit of its own (lint/tracking.py), like a function's actions."""
        if fid in self._hook_sites_memo:
            return self._hook_sites_memo[fid]
        f = self.p.function(fid)
        found = f is not None and bool(_hook_sites(f))
        self._hook_sites_memo[fid] = found
        return found

    def _hook_registrations(self, fid: str, scope_of, text: str) -> list:
        """[(hook function id, Condition(text))] for each ``x.register_forward_hook(fn)`` (or ``_pre_hook``) in
        function ``fid``, ``fn`` evaluated in ``scope_of()``."""
        f = self.p.function(fid)
        sites = _hook_sites(f) if f is not None else []
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
