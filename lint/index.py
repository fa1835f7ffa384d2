"""Index: one parse per file -> a ``ModuleSummary`` (see ``summary.py``).

We parse with the standard library's ``ast``: it is about nine times faster than libcst on this machine and
gives positions for free, and the index keeps no tree anyway.  libcst is used where formatting matters: in
the fixers.  Nothing here imports or executes the file.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings
from typing import Optional

from .index_expr import ExpressionIndexer, _const_str, _is_environ
from .index_func import FuncBuilder
from .summary import (
    Binding,
    ClassSummary,
    Effect,
    FunctionSummary,
    RAISES,
    Guard,
    ModuleSummary,
    import_raises,
)

MAX_SOURCE_CHARS = 10_000_000  # larger files (generated tables) are skipped with the reason
_SUPPRESS_RE = re.compile(
    r"#\s*(?:compile-lint:\s*(?P<kind>ignore-file|ignore)(?:\[(?P<codes>[A-Z0-9, ]+)\])?|noqa:\s*(?P<noqa>CL[0-9, CL]+))"
)


def _property_accessor(node) -> Optional[str]:
    """"setter" / "deleter" for ``@name.setter def name(...)``: the def rebinds the name to a copy of the
    property with the getter it already had, so reading the attribute still runs the getter."""
    for d in node.decorator_list:
        if isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") and isinstance(d.value, ast.Name) \
                and d.value.id == node.name:
            return d.attr
    return None


def _makes_instance(value) -> bool:
    """``super().__new__(cls)`` / ``object.__new__(cls)`` (a summary expression): a new instance of ``cls``."""
    return value[0] == "call" and value[1][0] == "attr" and value[1][2] == "__new__"


def _dotted_name(node) -> Optional[str]:
    """``obj`` / ``cls._instance`` as text; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted_name(node.value)
        return f"{inner}.{node.attr}" if inner is not None else None
    return None



class Indexer(ExpressionIndexer):
    def __init__(self, module: str, path: str, is_package: bool):
        self.m = ModuleSummary(name=module, path=path, is_package=is_package)
        self.functions: dict = {}
        self.classes: dict = {}
        self.env_set: set = set()
        self.env_removed: set = set()
        self._conv_memo: dict = {}
        self._shared: dict = {}  # hash-consing table (_share)
        self._shared_ids: set = set()
        self._may_declare_global = True  # run() looks at the source

    # ------------------------------------------------------------------ statements
    def block(self, stmts: list, fn: FuncBuilder, guards: tuple, in_try: bool, cls: Optional[ClassSummary] = None) -> None:
        for st in stmts:
            self.stmt(st, fn, guards, in_try, cls)
            if isinstance(st, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                return  # the rest of this block is dead code
            if isinstance(st, ast.If) and not st.orelse and _terminates(st.body):
                # `if cond: return ...` -- what follows runs only when cond is false; after `if cond: raise`
                # (a validation) it runs on every call that does not fail: assumed to hold
                guards = guards + (Guard(self.conv(st.test, fn), False, st.lineno, _raises(st.body)),)
            elif isinstance(st, ast.Assert):
                # `assert isinstance(layer, RoutedExperts)`: a validation too -- what follows runs only where it
                # holds (vLLM's MoE-only quant-method helpers return nothing for a linear layer)
                guards = guards + (Guard(self.conv(st.test, fn), True, st.lineno, True),)

    def stmt(self, st, fn: FuncBuilder, guards: tuple, in_try: bool, cls: Optional[ClassSummary]) -> None:
        t = type(st)
        at_module = fn.s.qualname == "<module>" and cls is None
        if t in (ast.FunctionDef, ast.AsyncFunctionDef):
            for d in st.decorator_list:
                self.collect(d, fn, guards, in_try)
            accessor = _property_accessor(st)
            qual = self.function(st, fn, cls, accessor, self._branch_def_suffix(st, at_module, guards))
            if cls is not None and accessor is None:
                cls.methods[st.name] = qual
            elif at_module:
                self.bind(st.name, Binding("def", qual, st.lineno, guards))
            else:
                fn.add_local(st.name, ("func", qual))
            return
        if t is ast.ClassDef:
            for d in st.decorator_list:
                self.collect(d, fn, guards, in_try)
            qual = self.klass(st, fn, cls)
            if at_module:
                self.bind(st.name, Binding("class", qual, st.lineno, guards))
            elif cls is not None:
                cls.class_attrs.setdefault(st.name, ())
                cls.class_attrs[st.name] += (("classref", qual),)
            else:
                fn.add_local(st.name, ("classref", qual))
            return
        if t in (ast.Import, ast.ImportFrom):
            self.imports(st, fn, guards, at_module)
            if at_module and not guards and not in_try:
                self.m.required_imports += tuple(m for m in self.imported(st) if m not in self.m.required_imports)
            return
        if t is ast.If:
            test = self.conv(st.test, fn)
            self.collect(st.test, fn, guards, in_try)
            # either branch is a validation when the other raises (`if backend == "fa3": ... else: raise`)
            self.block(st.body, fn, guards + (Guard(test, True, st.lineno, _raises(st.orelse)),), in_try, cls)
            self.block(st.orelse, fn, guards + (Guard(test, False, st.lineno, _raises(st.body)),), in_try, cls)
            return
        if t is ast.While:
            test = self.conv(st.test, fn)
            self.collect(st.test, fn, guards, in_try)
            self.block(st.body, fn, guards + (Guard(test, True, st.lineno),), in_try, cls)
            self.block(st.orelse, fn, guards, in_try, cls)
            return
        if t in (ast.For, ast.AsyncFor):
            self.collect(st.iter, fn, guards, in_try)
            # a loop calls iter(x).__iter__ and __next__: an edge of the whole-program call graph
            fn.effects.append(Effect("iter", self.conv(st.iter, fn), st.lineno, st.col_offset, guards))
            self.assign_target(st.target, ("iter", self.conv(st.iter, fn)), fn, guards, cls, at_module, st)
            self.block(st.body, fn, guards, in_try, cls)
            self.block(st.orelse, fn, guards, in_try, cls)
            return
        if t in (ast.With, ast.AsyncWith):
            for item in st.items:
                self.collect(item.context_expr, fn, guards, in_try)
                ctx = self.conv(item.context_expr, fn)
                fn.effects.append(Effect("with", ctx, st.lineno, st.col_offset, guards))
                if item.optional_vars is not None:
                    self.assign_target(item.optional_vars, ("enter", ctx), fn, guards, cls, at_module, st)
            self.block(st.body, fn, guards, in_try, cls)
            return
        if t is ast.Try or t.__name__ == "TryStar":
            self.block(st.body, fn, guards, True, cls)
            imported = tuple(m for s in st.body if isinstance(s, (ast.Import, ast.ImportFrom)) for m in self.imported(s))
            for h in st.handlers:
                if h.name:
                    fn.add_local(h.name, ("unknown", "exception"))
                # a handler runs only if the try body raises: a condition the walk cannot decide -- unless the
                # body imports a module the user says is not installed and the handler catches ImportError
                why = import_raises(imported) if imported and _catches_import_error(h.type) else RAISES
                self.block(h.body, fn, guards + (Guard(why, True, h.lineno),), in_try, cls)
            self.block(st.orelse, fn, guards, in_try, cls)
            self.block(st.finalbody, fn, guards, in_try, cls)
            return
        if t is ast.Match:
            self.collect(st.subject, fn, guards, in_try)
            for case in st.cases:
                self.block(case.body, fn, guards, in_try, cls)
            return
        if t is ast.Return:
            if st.value is not None:
                self.collect(st.value, fn, guards, in_try)
                fn.returns.append(self.conv(st.value, fn))
                fn.return_guards.append(guards)
            return
        if t is ast.Assign:
            self.collect(st.value, fn, guards, in_try)
            value = self.conv(st.value, fn)
            for tgt in st.targets:
                self.assign_target(tgt, value, fn, guards, cls, at_module, st)
            return
        if t is ast.AnnAssign:
            if st.value is not None:
                self.collect(st.value, fn, guards, in_try)
                self.assign_target(st.target, self.conv(st.value, fn), fn, guards, cls, at_module, st)
                if cls is not None and not at_module and isinstance(st.target, ast.Name) and \
                        st.target.id not in cls.fields:
                    cls.fields += (st.target.id,)
            elif isinstance(st.target, ast.Attribute):
                self.assign_target(st.target, ("annot", self.conv(st.annotation, fn)), fn, guards, cls, at_module, st)
            return
        if t is ast.AugAssign:
            self.collect(st.value, fn, guards, in_try)
            self.mutation_target(st.target, fn, guards, st, augmented=True)
            if isinstance(st.target, ast.Name):
                val = ("binop", type(st.op).__name__, ("name", st.target.id), self.conv(st.value, fn))
                if at_module:
                    self.bind(st.target.id, Binding("assign", val, st.lineno, guards))
                else:
                    fn.add_local(st.target.id, val)
            return
        if t is ast.Delete:
            for tgt in st.targets:
                if isinstance(tgt, ast.Subscript) and _is_environ(tgt.value):
                    key = _const_str(tgt.slice)
                    if key is not None:
                        self.env_removed.add(key)
                self.mutation_target(tgt, fn, guards, st)
            return
        if t is ast.Expr:
            self.collect(st.value, fn, guards, in_try)
            v = st.value  # `d.update({"a": f})` on a module-level container: a store of each key
            if (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "update"
                    and isinstance(v.func.value, ast.Name) and len(v.args) == 1 and not v.keywords
                    and isinstance(v.args[0], ast.Dict) and cls is None
                    and (at_module or fn.is_global(v.func.value.id))):
                for k, x in zip(v.args[0].keys, v.args[0].values):
                    if k is not None:
                        self.store(v.func.value.id, (self.conv(k, fn),), self.conv(x, fn), fn, at_module, st.lineno,
                                   guards)
            return
        if t is ast.Raise:
            self.collect(st.exc, fn, guards, in_try)
            if st.exc is not None and not isinstance(st.exc, ast.Call):  # `raise A` instantiates A
                fn.effects.append(Effect("raise", self.conv(st.exc, fn), st.lineno, st.col_offset, guards))
            return
        if t is ast.Assert:
            self.collect(st.test, fn, guards, in_try)
            return
        # Global / Nonlocal / Pass / Break / Continue: nothing to record

    def assign_target(self, tgt, value, fn: FuncBuilder, guards, cls, at_module: bool, st) -> None:
        if isinstance(tgt, ast.Name):
            if at_module:
                self.bind(tgt.id, Binding("assign", value, st.lineno, guards))
            elif cls is not None:
                cls.class_attrs[tgt.id] = cls.class_attrs.get(tgt.id, ()) + (value,)
            else:
                fn.add_local(tgt.id, value)
                if fn.s.name == "__new__" and _makes_instance(value):
                    fn.new_instances.add(tgt.id)
                if tgt.id in fn.global_names:
                    fn.effects.append(Effect("mutate", tgt.id, st.lineno, st.col_offset, guards))
                    # `global lib` / `lib = CDLL(...)` in a function: the module name may hold it afterwards
                    # (a store with no keys: ModuleSummary.stores)
                    self.store(tgt.id, (), value, fn, False, st.lineno, guards)
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            # `a, *b, c = v`: a is v[0], b the list v[1:-1], c is v[-1]
            n = len(tgt.elts)
            star = next((i for i, e in enumerate(tgt.elts) if isinstance(e, ast.Starred)), None)
            for i, e in enumerate(tgt.elts):
                if i == star:
                    part = ("rest", value, i, n - i - 1)
                    e = e.value
                else:
                    part = ("item", value, i - n if star is not None and i > star else i)
                self.assign_target(e, part, fn, guards, cls, at_module, st)
        elif isinstance(tgt, ast.Attribute):
            owner = fn.s.class_name
            made = _dotted_name(tgt.value)
            if fn.s.name == "__new__" and owner in self.classes and made is not None:
                # the singleton idiom: `cls._instance = super().__new__(cls)` then `cls._instance.impl = Impl()`
                # (or `obj = object.__new__(cls)`; `obj.x = v`): a store on the instance `__new__` makes
                if made in fn.new_instances:
                    c = self.classes[owner]
                    c.self_attrs[tgt.attr] = c.self_attrs.get(tgt.attr, ()) + ((value, fn.s.qualname),)
                if _makes_instance(value):
                    fn.new_instances.add(f"{made}.{tgt.attr}")
            if (
                owner is not None
                and isinstance(tgt.value, ast.Name)
                and fn.s.params
                and tgt.value.id == fn.s.params[0]
                and owner in self.classes
            ):
                c = self.classes[owner]
                c.self_attrs[tgt.attr] = c.self_attrs.get(tgt.attr, ()) + ((value, fn.s.qualname),)
            else:
                if isinstance(tgt.value, ast.Name) and tgt.value.id in fn.s.params:
                    fn.s.param_stores += ((tgt.value.id, tgt.attr, value),)
                self.mutation_target(tgt, fn, guards, st)
        elif isinstance(tgt, ast.Subscript):
            if _is_environ(tgt.value):
                key = _const_str(tgt.slice)
                if key is not None:
                    self.env_set.add(key)
            root, path = _subscript_path(tgt)
            if root is not None and cls is None and (at_module or fn.is_global(root)):
                self.store(root, tuple(self.conv(k, fn) for k in path), value, fn, at_module, st.lineno, guards)
            self.mutation_target(tgt, fn, guards, st)

    def mutation_target(self, tgt, fn: FuncBuilder, guards, st, augmented: bool = False) -> None:
        """`G[k] = v`, `G.a = v`, `G += 1` (declared global): mutation of module state.  In a function, a
        store into an object also runs its class's `__setitem__` / `__setattr__` (transformers' ModelOutput
        defines both): an effect, for the walk to enter a scanned one."""
        if fn.s.qualname == "<module>":
            return
        if isinstance(tgt, ast.Subscript) and isinstance(tgt.value, (ast.Name, ast.Attribute)) and \
                not isinstance(tgt.slice, (ast.Slice, ast.Tuple)):
            fn.effects.append(Effect("setitem", (self.conv(tgt.value, fn), self.conv(tgt.slice, fn)),
                                     tgt.lineno, tgt.col_offset, guards))
        elif isinstance(tgt, ast.Attribute) and isinstance(tgt.value, (ast.Name, ast.Attribute)):
            fn.effects.append(Effect("setattr", (self.conv(tgt.value, fn), tgt.attr), tgt.lineno, tgt.col_offset,
                                     guards))
        root = tgt
        while isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        if not isinstance(root, ast.Name):
            return
        name = root.id
        if isinstance(tgt, ast.Name):
            if name in fn.global_names:
                fn.effects.append(Effect("mutate", name, st.lineno, st.col_offset, guards))
            return
        if fn.is_global(name) and name not in ("os",):
            fn.effects.append(Effect("mutate", name, st.lineno, st.col_offset, guards))

    def imports(self, st, fn: FuncBuilder, guards, at_module: bool) -> None:
        if isinstance(st, ast.Import):
            for a in st.names:
                if a.asname:
                    b = Binding("import", (a.name, None), st.lineno, guards)
                    local = a.asname
                else:
                    top = a.name.split(".")[0]
                    b = Binding("import", (top, None), st.lineno, guards)
                    local = top
                    if "." in a.name:
                        # `import a.b.c` also loads the submodules; remember them on the package binding
                        b = Binding("import", (top, None, a.name), st.lineno, guards)
                if at_module:
                    self.bind(local, b)
                else:
                    fn.effects.append(Effect("import", a.name, st.lineno, st.col_offset, guards))
                    fn.add_local(local, ("modref", b.value[0] if not a.asname else a.name))
            return
        module = self.absolute(st.module, st.level)
        if module is None:
            return
        for a in st.names:
            if a.name == "*":
                if at_module:
                    self.m.star_imports += ((module, guards),)
                continue
            local = a.asname or a.name
            if at_module:
                self.bind(local, Binding("import", (module, a.name), st.lineno, guards))
            else:
                fn.effects.append(Effect("import", module, st.lineno, st.col_offset, guards))
                fn.add_local(local, ("importfrom", module, a.name))

    def imported(self, st) -> tuple:
        """The modules an ``import`` / ``from ... import`` statement imports (absolute names)."""
        if isinstance(st, ast.Import):
            return tuple(a.name for a in st.names)
        module = self.absolute(st.module, st.level)
        return (module,) if module else ()

    def absolute(self, module: Optional[str], level: int) -> Optional[str]:
        return absolute_module(self.m.name, self.m.is_package, module, level)

    def bind(self, name: str, b: Binding) -> None:
        self.m.bindings[name] = self.m.bindings.get(name, ()) + (b,)

    def store(self, name: str, keys: tuple, value, fn: FuncBuilder, at_module: bool, line: int, guards: tuple) -> None:
        """``name[k1][k2] = value`` on a module-level container (ModuleSummary.stores)."""
        where = None if at_module else fn.s.qualname
        b = Binding("store", (keys, value, where), line, guards)
        self.m.stores[name] = self.m.stores.get(name, ()) + (b,)

    # ------------------------------------------------------------ definitions
    def _params(self, args: ast.arguments, fn: Optional[FuncBuilder]):
        pos = [a.arg for a in args.posonlyargs + args.args]
        ann = {}
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.annotation is not None:
                ann[a.arg] = self.conv(a.annotation, fn)
        defaults = {}
        for name, d in zip(pos[len(pos) - len(args.defaults):], args.defaults):
            defaults[name] = self.conv(d, fn)
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            if d is not None:
                defaults[a.arg] = self.conv(d, fn)
        return (
            tuple(pos),
            tuple(a.arg for a in args.kwonlyargs),
            args.vararg.arg if args.vararg else None,
            args.kwarg.arg if args.kwarg else None,
            ann,
            defaults,
        )

    def _new_func(self, qual, name, node, params, parent_fn, cls, is_lambda=False) -> FuncBuilder:
        pos, kwonly, vararg, kwarg, ann, defaults = params
        body = node.body if isinstance(node.body, list) else [node.body]
        s = FunctionSummary(
            qualname=qual,
            name=name,
            line=node.lineno,
            end_line=getattr(node, "end_lineno", node.lineno) or node.lineno,
            params=pos,
            kwonly=kwonly,
            vararg=vararg,
            kwarg=kwarg,
            annotations=ann,
            defaults=defaults,
            class_name=cls.qualname if cls is not None else None,
            parent=parent_fn.s.qualname if parent_fn is not None and parent_fn.s.qualname != "<module>" else None,
            is_lambda=is_lambda,
        )
        return FuncBuilder(s, body, frozenset(pos + kwonly + tuple(n for n in (vararg, kwarg) if n)),
                     self._may_declare_global)

    def _branch_def_suffix(self, st, at_module: bool, guards: tuple) -> str:
        """A module-level function defined again under another branch (``if FLEX: def _call(...)`` / ``else: def
        _call(...)``) is a function of its own, ``_call@LINE``: either may be the one bound at run time, so the
        resolver keeps both, each under its branch's guards.  An unguarded redefinition (``@overload`` stubs
        before the real ``def``) replaces the earlier one, as it does in Python."""
        if not at_module:
            return ""
        earlier = [b for b in self.m.bindings.get(st.name, ()) if b.kind == "def"]
        if earlier and (guards or any(b.guards for b in earlier)):
            return f"@{st.lineno}"
        return ""

    def function(self, node, parent_fn: FuncBuilder, cls: Optional[ClassSummary], accessor: Optional[str] = None,
                 suffix: str = "") -> str:
        if cls is not None:
            # a property's setter / deleter is a function of its own: the name stays the getter's
            qual = f"{cls.qualname}.{node.name}" + (f".<{accessor}>" if accessor else "")
        elif parent_fn.s.qualname != "<module>":
            qual = f"{parent_fn.s.qualname}.<locals>.{node.name}"
        else:
            qual = node.name + suffix
        fn = self._new_func(qual, node.name, node, self._params(node.args, parent_fn), parent_fn, cls)
        fn.s.decorators = tuple(self.conv(d, parent_fn) for d in node.decorator_list)
        fn.s.returns_annotation = self.conv(node.returns, parent_fn) if node.returns is not None else None
        for name, d in zip(fn.s.params[len(fn.s.params) - len(node.args.defaults):], node.args.defaults):
            self.collect(d, parent_fn, (), False)
        self.block(node.body, fn, (), False)
        fn.s.is_stub = _is_stub(node.body)
        self.functions[qual] = fn.finish()
        return qual

    def lambda_function(self, node: ast.Lambda, parent_fn: Optional[FuncBuilder]) -> str:
        prefix = parent_fn.s.qualname + "." if parent_fn is not None and parent_fn.s.qualname != "<module>" else ""
        qual = f"{prefix}<lambda>@{node.lineno}:{node.col_offset}"
        if qual in self.functions:
            return qual
        fn = self._new_func(qual, "<lambda>", node, self._params(node.args, parent_fn), parent_fn, None, is_lambda=True)
        self.collect(node.body, fn, (), False)
        fn.returns.append(self.conv(node.body, fn))
        fn.return_guards.append(())
        self.functions[qual] = fn.finish()
        return qual

    def klass(self, node: ast.ClassDef, parent_fn: FuncBuilder, outer: Optional[ClassSummary]) -> str:
        if outer is not None:
            qual = f"{outer.qualname}.{node.name}"
        elif parent_fn.s.qualname != "<module>":
            qual = f"{parent_fn.s.qualname}.<locals>.{node.name}"
        else:
            qual = node.name
        c = ClassSummary(
            qualname=qual,
            name=node.name,
            line=node.lineno,
            bases=tuple(self.conv(b, parent_fn) for b in node.bases),
            decorators=tuple(self.conv(d, parent_fn) for d in node.decorator_list),
            metaclass=next((self.conv(k.value, parent_fn) for k in node.keywords if k.arg == "metaclass"), None),
        )
        self.classes[qual] = c
        # Class bodies run at import time: their calls belong to the enclosing scope.
        self.block(node.body, parent_fn, (), False, c)
        return qual

    # ------------------------------------------------------------------ entry
    def run(self, tree: ast.Module, source: str) -> ModuleSummary:
        top = FunctionSummary(qualname="<module>", name="<module>", line=1, end_line=len(source.splitlines()) or 1)
        self._may_declare_global = "global" in source
        fn = FuncBuilder(top)
        self.block(tree.body, fn, (), False)
        self.functions["<module>"] = fn.finish()
        self.m.functions = self.functions
        self.m.classes = self.classes
        self.m.env_keys_set = tuple(sorted(self.env_set))
        self.m.env_keys_removed = tuple(sorted(self.env_removed))
        all_b = self.m.bindings.get("__all__")
        if all_b:
            names = []
            for b in all_b:
                if b.kind == "assign" and b.value[0] == "seq":
                    names += [e[1] for e in b.value[2] if e[0] == "const" and isinstance(e[1], str)]
            self.m.dunder_all = tuple(names)
        return self.m


def _is_stub(body: list) -> bool:
    for st in body:
        if isinstance(st, ast.Pass):
            continue
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue  # docstring or ...
        if isinstance(st, ast.Raise) and st.exc is not None:
            exc = st.exc.func if isinstance(st.exc, ast.Call) else st.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                continue
        return False
    return True


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(t) -> bool:
    """An ``except`` clause that catches a failed import: bare, or naming ImportError or a base of it."""
    if t is None:
        return True
    if isinstance(t, ast.Tuple):
        return any(_catches_import_error(x) for x in t.elts)
    name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None
    return name in _IMPORT_ERRORS


def _raises(body: list) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _terminates(body: list) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def scan_suppression_comments(source: str) -> list:
    """[(line, col 1-based, file_level, codes, comment text)] for every suppression comment of a file."""
    if ("compile-lint:" not in source and "noqa" not in source) or not _SUPPRESS_RE.search(source):
        return []  # tokenizing (pure Python) is slower than parsing: only for files that may hold one
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    out = []
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        m = _SUPPRESS_RE.search(tok.string)
        if not m:
            continue
        raw = m.group("codes") or m.group("noqa")
        codes = tuple(c.strip() for c in raw.split(",") if c.strip()) if raw else ("*",)
        out.append((tok.start[0], tok.start[1] + 1, m.group("kind") == "ignore-file", codes, m.group(0).strip()))
    return out


def parse_suppressions(source: str):
    """``# compile-lint: ignore[CL101]`` / ``# noqa: CL101`` per line; ``# compile-lint: ignore-file[...]``."""
    per_line: dict = {}
    file_level: list = []
    for line, _col, is_file, codes, _text in scan_suppression_comments(source):
        if is_file:
            file_level.extend(codes)
        else:
            per_line[line] = per_line.get(line, ()) + codes
    return per_line, tuple(file_level)

def index_source(source: str, module: str, path: str, is_package: bool = False) -> ModuleSummary:
    """Summarise one file.  Never raises: a file that cannot be indexed gets ``error`` set."""
    if len(source) > MAX_SOURCE_CHARS:  # a generated file: minutes to index, and no region lives there
        m = ModuleSummary(name=module, path=path, is_package=is_package)
        m.error = f"too large to index ({len(source) / 1e6:.1f} MB; the limit is {MAX_SOURCE_CHARS // 1_000_000} MB)"
        return m
    try:
        with warnings.catch_warnings():  # the scanned code's SyntaxWarnings are not ours to print
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as e:  # ValueError: NUL bytes
        m = ModuleSummary(name=module, path=path, is_package=is_package)
        line = getattr(e, "lineno", None)
        m.error = f"cannot parse: {getattr(e, 'msg', str(e))}" + (f" (line {line})" if line else "")
        return m
    except (RecursionError, MemoryError):  # CPython's parser on very deep expressions
        m = ModuleSummary(name=module, path=path, is_package=is_package)
        m.error = "cannot parse: expression nesting too deep"
        return m
    try:
        summary = Indexer(module, path, is_package).run(tree, source)
        summary.suppressions, summary.file_suppressions = parse_suppressions(source)
        return summary
    except RecursionError:
        m = ModuleSummary(name=module, path=path, is_package=is_package)
        m.error = "expression nesting too deep to index"
        return m
    except Exception as e:  # an indexer bug must not stop the scan: the file is skipped with the reason
        m = ModuleSummary(name=module, path=path, is_package=is_package)
        m.error = f"internal error while indexing: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        return m


def decode_source(data: bytes) -> str:
    """Decode like the interpreter would (PEP 263 cookie, BOM), replacing undecodable bytes."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        encoding = "utf-8"
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return data.decode("utf-8", errors="replace")


def _subscript_path(tgt):
    """``d["a"]["b"]`` -> ("d", [the "a" node, the "b" node]); (None, []) when the container is not a name."""
    keys = []
    while isinstance(tgt, ast.Subscript):
        keys.append(tgt.slice)
        tgt = tgt.value
    return (tgt.id, keys[::-1]) if isinstance(tgt, ast.Name) else (None, [])


def absolute_module(importer: str, is_package: bool, module: Optional[str], level: int) -> Optional[str]:
    """The module ``from <level dots><module> import ...`` names inside ``importer`` (None: above the top)."""
    if not level:
        return module
    parts = importer.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        if level - 1 > len(parts):
            return None
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    if module:
        return f"{base}.{module}" if base else module
    return base or None
