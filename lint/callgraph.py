"""``compile-lint graph --all``: the whole-program call graph of the scanned files.

Every function, method, closure and lambda of the scanned modules is a node, and so is each module's top-level
code (named by the module itself, ``main``); a node's edges are every callee the resolver finds for the calls
in its body.  The output is the adjacency list of the established Python call-graph tools (PyCG's
``{"pkg.mod.f": ["pkg.mod.g", ...]}``), with their spelling of names: closures without ``<locals>``
(``main.f.g``), lambdas numbered in source order within their enclosing scope (``main.<lambda1>``).  Callees
outside the scanned code keep the names compile-lint gives them (``builtins.len``, ``os.path.join``).

Unlike a region's walk (``graph`` without ``--all``, lint/graph.py), this one is not about Dynamo: every call is
an edge, whatever Dynamo would do with it.  Functions are walked per *calling context*: the functions, classes
and containers bound to their parameters at a call site (``func1(lambda x: x + 1)`` makes ``a()`` in ``func1``
an edge to that lambda), at most ``MAX_CONTEXTS`` per function.  Every function also starts once with nothing
bound; that start counts only for a function no other function calls (``_walk``).  Then the functions,
classes and instances the calls passed become what an unbound parameter may be (``Program.argument_values``)
and the program is walked again, at most ``MAX_ROUNDS`` times.  At the module's top level, names are read as
the lines above the call left them (``Scope.line``).
"""
from __future__ import annotations

import re
from collections import deque
from typing import Optional

from .program import Program, Scope, dotted, split_id
from .program.calls import CALLABLE_VALUES, HIGHER_ORDER_CALLS, KEY_FUNCTION_CALLS, CallMixin
from .values import Class, Const, DictVal, External, Func, Instance, Op, Partial, SeqVal, TupleVal, Unknown

MAX_CONTEXTS = 8  # distinct argument bindings a function is walked under (then only the context-free walk)
MAX_ROUNDS = 3  # walks of the program while the arguments passed to parameters grow (CallGraph.adjacency)
MAX_PASSED = 4  # functions / classes / instances a parameter may take from the calls (Program.argument_values)

# builtin types a method is wrapped in by its decorator (the resolver keeps them as the function's flags): making
# the descriptor object runs no code of anyone's, so it is no call of the graph
DESCRIPTOR_TYPES = frozenset({"builtins.staticmethod", "builtins.classmethod", "builtins.property"})

_LAMBDA = re.compile(r"<lambda>@(\d+):(\d+)")


class CallGraph:
    """The graph over ``modules`` (scanned module names), built once by ``adjacency()``."""

    def __init__(self, program: Program, modules):
        self.p = program
        self.modules = sorted(modules)
        self._names: dict = {}  # function id -> PyCG-style dotted name
        self._contexts: dict = {}  # function id -> the bound contexts it is walked under
        self._wrapper_edges: dict = {}  # decorator wrapper name -> the names it calls in (_entered)
        self._passed: dict = {}  # function id -> {parameter: values some call passes} (Program.argument_values)

    # ------------------------------------------------------------------ names
    def name(self, fid: str) -> str:
        """``main:<module>`` -> ``main``; ``m:f.<locals>.g`` -> ``m.f.g``; ``m:<lambda>@3:4`` -> ``m.<lambda1>``."""
        hit = self._names.get(fid)
        if hit is not None:
            return hit
        mod, qual = split_id(fid)
        if qual == "<module>":
            out = mod
        else:
            if "<lambda>@" in qual:
                qual = self._numbered_lambdas(mod).get(qual, qual)
            out = dotted(f"{mod}:{qual.replace('.<locals>.', '.')}")
        self._names[fid] = out
        return out

    def _numbered_lambdas(self, mod: str) -> dict:
        """Each lambda's qualname -> the same with ``<lambdaN>``: N counts the lambdas of its enclosing scope
        in source order (line, column), as PyCG numbers them."""
        key = ("lambdas", mod)
        if key in self._names:
            return self._names[key]
        m = self.p.module(mod)
        by_scope: dict = {}
        for qual in (m.functions if m else ()):
            at = _LAMBDA.search(qual)
            if at and at.end() == len(qual):
                by_scope.setdefault(qual[:at.start()], []).append((int(at.group(1)), int(at.group(2)), qual))
        out = {}
        for prefix, found in by_scope.items():
            for n, (_, _, qual) in enumerate(sorted(found), 1):
                out[qual] = f"{prefix}<lambda{n}>"
        self._names[key] = out
        return out

    # ------------------------------------------------------------------ walk
    def nodes(self) -> list:
        """(function id, self class) of every function of the scanned modules, top-level code included."""
        out = []
        for mod in self.modules:
            m = self.p.module(mod)
            if m is None or m.error:
                continue
            for qual, f in m.functions.items():
                out.append((f"{mod}:{qual}", f"{mod}:{f.class_name}" if f.class_name else None))
        return out

    def adjacency(self) -> dict:
        """The graph, walked again while the arguments seen at calls add to what parameters may be: the
        values passed to ``B(c)`` are then what ``self.c`` is in every method of B (at most MAX_ROUNDS)."""
        graph: dict = {}
        for _ in range(MAX_ROUNDS):
            self._contexts, self._wrapper_edges, self._passed = {}, {}, {}
            graph = self._walk()
            # a parameter given many functions or objects is left unknown: one such value set read in a
            # hot function multiplied the contexts of everything downstream (compile-lint's own source)
            passed = {fid: kept for fid, params in self._passed.items()
                      if (kept := {k: v for k, v in params.items() if len(v) <= MAX_PASSED})}
            if passed == self.p.argument_values:
                break
            self.p.argument_values = passed
            self.p.forget_values()
        return graph

    def _walk(self) -> dict:
        # A node is (function id, self class, bound parameters, closure, is-a-start).  Every function starts
        # once with nothing bound, but a function that the program calls gets its edges from the calls'
        # contexts only: its start's edges were for parameters that no call leaves unknown (in
        # `def f(key): ls[key]()` called as f(1), f calls ls[1], not every element of ls).  So the graph is
        # what the *live* nodes call: the starts of functions nothing live calls (a module's top level, an
        # API nobody calls), and every node a live node reaches.
        edges_of: dict = {}
        succ: dict = {}
        start = [(fid, cls, None, (), True) for fid, cls in self.nodes()]
        seen = set(start)
        queue = deque(start)
        while queue:
            node = queue.popleft()
            edges, nexts = edges_of.setdefault(node, set()), succ.setdefault(node, set())
            for callee, nxt in self._callees(*node[:4]):
                if callee is not None:
                    edges.add(callee)
                if nxt is not None:
                    nxt = nxt + (False,)
                    nexts.add(nxt)
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
        # roots: the starts of functions that no other function calls; then the starts of functions still
        # without a live node (called only from dead nodes, or a recursion nobody enters)
        called = {n[0] for m, nexts in succ.items() for n in nexts if n[0] != m[0]}
        live: set = set()
        for roots in ([n for n in start if n[0] not in called], None):
            if roots is None:
                has_live = {n[0] for n in live}
                roots = [n for n in start if n[0] not in has_live]
            stack = list(roots)
            while stack:
                n = stack.pop()
                if n not in live:
                    live.add(n)
                    stack.extend(succ.get(n, ()))
        graph: dict = {}
        for node in start:
            graph.setdefault(self.name(node[0]), set())
        for node in live:
            graph.setdefault(self.name(node[0]), set()).update(edges_of.get(node, ()))
        for wrapper, inner in self._wrapper_edges.items():
            graph.setdefault(wrapper, set()).update(inner)
        for callees in list(graph.values()):
            for c in callees:
                graph.setdefault(c, set())
        return {k: sorted(v) for k, v in sorted(graph.items())}

    def _scope(self, fid: str, self_cls: Optional[str], bindings, closure, line: Optional[int] = None) -> Scope:
        return Scope(split_id(fid)[0], self.p.function(fid), fid, self_cls, dict(bindings) if bindings else None,
                     0, dict(closure) if closure else None, line)

    def _callees(self, fid: str, self_cls: Optional[str], bindings, closure) -> list:
        """(callee name, node to walk or None) for every call of the function's body."""
        f = self.p.function(fid)
        if f is None:
            return []
        scope = self._scope(fid, self_cls, bindings, closure)
        top_level = f.qualname == "<module>"

        def at(line: int) -> Scope:  # the module's top level runs in order: its names as bound above the line
            return self._scope(fid, self_cls, bindings, closure, line) if top_level else scope

        out: list = []
        for site in f.calls:
            here = at(site.line)
            vals = self.p.eval(site.func, here)
            for v in vals:
                out += self._called(v, site.args, site.kwargs, here)
                if isinstance(v, External):
                    out += self._passed_functions(v.name, site, here)
            if site.func[0] == "attr" and not any(isinstance(v, (Func, Class, Instance, Partial, External, Op))
                                                  for v in vals):
                out += self._literal_method(site.func, here)
        for eff in f.effects:
            out += self._effect_callees(eff, at(eff.line))
        out += self._decorations(fid, scope, at)
        return out

    def _passed_functions(self, name: str, site, scope: Scope) -> list:
        """``map(f, xs)``, ``sorted(xs, key=f)``: the external function calls the function it is given."""
        given = []
        if name in HIGHER_ORDER_CALLS:
            given = list(site.args)
        elif name in KEY_FUNCTION_CALLS:
            given = [x for k, x in site.kwargs if k == "key"]
        element = (("__value__", frozenset({Unknown("element")})),)
        return [e for a in given for v in self.p.eval(a, scope) if isinstance(v, CALLABLE_VALUES)
                for e in self._called(v, element, (), scope)]

    def _literal_method(self, func, scope: Scope) -> list:
        """``" ".join(xs)``, ``{...}.items()``: a method of a builtin type, named ``builtins.str.join``, when the
        receiver is a literal's value."""
        out = []
        for base in self.p.eval(func[1], scope):
            t = None
            if isinstance(base, Const) and base.value is not None:
                t = type(base.value).__name__
            elif isinstance(base, DictVal):
                t = "dict"
            elif isinstance(base, (SeqVal, TupleVal)):
                t = "list" if isinstance(base, SeqVal) else "tuple"
            if t is not None:
                out.append((f"builtins.{t}.{func[2]}", None))
        return out

    def _effect_callees(self, eff, scope: Scope) -> list:
        """Calls a statement makes without a call expression: ``for x in obj`` runs ``obj.__iter__`` and the
        iterator's ``__next__``; ``raise A`` instantiates the class A; ``with cm:`` runs ``__enter__`` and
        ``__exit__``."""
        out: list = []
        if eff.kind == "iter":
            for v in self.p.eval(eff.detail, scope):
                if not isinstance(v, Instance):
                    continue
                for it in self.p.member(v.cls, "__iter__", v):
                    out += self._called(it, (), (), scope)
                    for r in self.p.call(it, (), (), scope):
                        if isinstance(r, Instance):
                            for nxt in self.p.member(r.cls, "__next__", r):
                                out += self._called(nxt, (), (), scope)
        elif eff.kind == "raise":
            for v in self.p.eval(eff.detail, scope):
                if isinstance(v, Class):
                    out += self._called(v, (), (), scope)
        elif eff.kind == "with":
            out += self._with_callees(eff.detail, scope)
        return out

    def _with_callees(self, ctx, scope: Scope) -> list:
        out: list = []
        for v in self.p.eval(ctx, scope):
            if isinstance(v, Instance):
                for name in ("__enter__", "__exit__"):
                    for fn in self.p.member(v.cls, name, v):
                        out += self._called(fn, (), (), scope)
        return out

    def _decorations(self, fid: str, scope: Scope, at) -> list:
        """A ``def`` or ``class`` runs its decorators in the enclosing scope: ``@dec def f`` is ``dec(f)``
        called by the code that defines ``f`` (the module's top level for a module-level function)."""
        mod, qual = split_id(fid)
        m = self.p.module(mod)
        if m is None:
            return []
        here = None if qual == "<module>" else qual
        out: list = []
        for q, g in m.functions.items():
            if g.decorators and g.parent == here and q != "<module>" and (
                    g.class_name is None or self._class_parent(m, g.class_name) == here):
                # the decorators apply bottom-up: each is given what the one below returned
                given = frozenset({Func(f"{mod}:{q}")})
                here = at(g.line)
                for d in reversed(g.decorators):
                    dvals = self.p.eval(d, here)
                    for v in dvals:
                        if not (isinstance(v, External) and v.name in DESCRIPTOR_TYPES):
                            out += self._called(v, (("__value__", given),), (), here)
                    given = self.p.apply_decorator(dvals, given, here)
        for q, c in m.classes.items():
            if c.decorators and self._class_parent(m, q) == here:
                given = frozenset({Class(f"{mod}:{q}")})
                for d in c.decorators:
                    for v in self.p.eval(d, at(c.line)):
                        out += self._called(v, (("__value__", given),), (), at(c.line))
        return out

    @staticmethod
    def _class_parent(m, class_qual: str) -> Optional[str]:
        """The function whose body defines the class (None: the module's top level or a class body)."""
        if ".<locals>." in class_qual:
            return class_qual.rsplit(".<locals>.", 1)[0]
        outer = class_qual.rsplit(".", 1)[0] if "." in class_qual else None
        return CallGraph._class_parent(m, outer) if outer and outer in m.classes else None

    def _called(self, v, args, kwargs, scope: Scope) -> list:
        """What calling the value ``v`` runs: (callee name, node to walk or None)."""
        if isinstance(v, Func):
            if "op" in v.flags:
                return [(dotted(v.id), None)]
            return self._entered(v, args, kwargs, scope)
        if isinstance(v, Class):
            out = []
            for init in self.p.member(v.id, "__init__", Instance(v.id)):
                if isinstance(init, Func):
                    out += self._entered(Func(init.id, v.id, init.flags, init.wrappers, init.closure), args, kwargs,
                                         scope)
                elif isinstance(init, External):
                    out.append((init.name, None))
            return out
        if isinstance(v, Instance):
            return [e for t in self.p.callable_members(v) for e in self._entered(t, args, kwargs, scope)]
        if isinstance(v, Partial):
            pargs = tuple(("__value__", a) for a in v.args) + tuple(args)
            pkw = tuple((k, ("__value__", a)) for k, a in v.kwargs) + tuple(kwargs)
            return [e for t in v.target for e in self._called(t, pargs, pkw, scope)]
        if isinstance(v, External):
            return [(v.name, None)]
        if isinstance(v, Op):
            return [(v.name, None)]
        return []

    def _entered(self, v: Func, args, kwargs, scope: Scope) -> list:
        """A call of a function of the scanned code.  A decorated function's call runs its outermost decorator
        wrapper first, which calls the next one in, and the innermost calls the function itself: the edge
        goes to the outermost, and each wrapper gets an edge to the next (``calls._apply_one`` keeps a wrapper
        only if it calls the function it was given)."""
        chain = [v.id] + list(v.wrappers)  # innermost first: calls._apply_one appends each outer wrapper
        for outer, inner in zip(chain[1:], chain[:-1]):
            self._wrapper_edges.setdefault(self.name(outer), set()).add(self.name(inner))
        out = [(self.name(chain[-1]), self._context(chain[-1], v, args, kwargs, scope))]
        if len(chain) > 1:  # the function itself is walked in its calling context too
            out.append((None, self._context(v.id, v, args, kwargs, scope)))
        return out

    def _argument(self, a, scope: Scope):
        """An argument expression, or its values when only some of them matter.  Of a call (`f(Cls())`,
        `f(make_adder(2))`), what a class or a function of the scanned code returns; not what an external
        one does: working out every argument's value (`f(tuple(x for x in ...))`) made the walk of
        compile-lint's own source three times slower, for values a call graph does not use."""
        if a[0] in _BOUND_KINDS:
            return a
        if a[0] == "call" and any(isinstance(v, (Func, Class)) for v in self.p.eval(a[1], scope)):
            return a
        return _UNBOUND

    def _context(self, wid: str, v: Func, args, kwargs, scope: Scope):
        """The node the call walks: the function with its parameters bound to what this call passes (when that
        is something a call graph cares about: functions, classes, instances, containers), else its
        context-free node."""
        self_cls = v.self_cls if wid == v.id else None
        f = self.p.function(wid)
        bindings = None
        if wid == v.id and f is not None:
            args = tuple(self._argument(a, scope) for a in args)
            kwargs = tuple((k, self._argument(x, scope)) for k, x in kwargs)
            bound = CallMixin._widened(self.p.bind_args(f, v, args, kwargs, scope))
            if self_cls is not None and f.params:
                bound.pop(f.params[0], None)  # self / cls: the node's self class already says it
            passed = self._passed.setdefault(wid, {})
            for param, vals in bound.items():
                known = frozenset(x for x in vals if isinstance(x, CALLABLE_VALUES))
                if known:
                    passed[param] = passed.get(param, frozenset()) | known
            if bound:
                try:
                    key = tuple(sorted(bound.items(), key=lambda kv: kv[0]))
                    hash(key)
                except TypeError:
                    key = None
                seen = self._contexts.setdefault(wid, set())
                if key is not None and (key in seen or len(seen) < MAX_CONTEXTS):
                    seen.add(key)
                    bindings = key
        return (wid, self_cls, bindings, v.closure if wid == v.id else ())



# argument expressions evaluated as they are; any other (a call, an operator) is evaluated shallowly
_BOUND_KINDS = frozenset({"name", "attr", "func", "sub", "seq", "dict", "const", "starred", "__value__"})
_UNBOUND = ("__value__", frozenset({Unknown("argument")}))
