"""The index's expressions (lint/index.py): an AST expression -> a summary expression (``summary.py``), one object
per distinct expression of a module; and what one expression does -- its calls, attribute reads and effects
(``in`` tests, subscripts, environment writes, containers filled on ``self`` or a local) -- recorded on the
function being indexed (``FuncBuilder``)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Optional

from .summary import AttrLoad, CallSite, Effect, Guard

if TYPE_CHECKING:
    from .index_func import FuncBuilder

MAX_SEQ_ITEMS = 64
MAX_DICT_ITEMS = 256
_ADDING_METHODS = frozenset({"append", "insert", "extend"})  # what a container gains: _container_added
_MUTATING_METHODS = frozenset(
    {"append", "extend", "update", "add", "pop", "popitem", "setdefault", "clear", "insert", "remove", "discard"}
)


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _may_run_getitem(n: ast.Subscript) -> bool:
    """Whether ``x[k]`` is worth an effect: the read runs ``type(x).__getitem__``, a scanned method when ``x``
    is an instance of a scanned class.  Slices and tuples of indices are tensor indexing, nearly always."""
    return isinstance(n.value, (ast.Name, ast.Attribute, ast.Subscript)) and not isinstance(
        n.slice, (ast.Slice, ast.Tuple))


def _const_str(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None



class ExpressionIndexer:
    """The expressions' half of ``Indexer`` (a mixin): it uses the indexer's ``classes`` (the module's classes
    so far), ``env_set`` / ``env_removed`` and ``lambda_function``, and keeps ``_conv_memo``, ``_shared`` and
    ``_shared_ids``."""

    # ----------------------------------------------------------------- expressions
    def conv(self, node, fn: Optional[FuncBuilder] = None):
        """AST expression -> Expr (see summary.py).  Lambdas become separate functions.

        Memoised per node: collecting a chain like ``a.b.c.d()`` converts each prefix once, not once per
        enclosing attribute."""
        if node is None:
            return ("const", None)
        key = id(node)
        hit = self._conv_memo.get(key)
        if hit is not None and hit[0] is node:
            return hit[1]
        out = self._share(self._conv(node, fn))
        self._conv_memo[key] = (node, out)
        return out

    def _share(self, t: tuple) -> tuple:
        """One object per distinct expression of the module (hash-consing): ``self``, ``torch.float16``,
        ``self.config`` recur hundreds of times in a file, and summaries of a whole site-packages held 2 GB,
        mostly such tuples.  Shared objects also pickle once per file.  Keys hold the children's identities
        and the scalars' types (a str as itself), so ``("const", 1)`` and ``("const", True)`` (equal tuples) stay
        apart."""
        ids = self._shared_ids
        key = []
        # t's items with its child tuples shared, from the first one that was not (rare: ``conv`` shares bottom-up)
        parts = None
        for x in t:
            tx = type(x)
            if tx is tuple:
                if id(x) not in ids:
                    if parts is None:
                        parts = list(t[:len(key)])
                    x = self._share(x)
                key.append(id(x))
            elif tx is str:
                key.append(x)  # (a str is never equal to an id nor to a (type, value) pair)
            else:
                key.append((tx, x))
            if parts is not None:
                parts.append(x)
        try:
            shared = self._shared.setdefault(tuple(key), t if parts is None else tuple(parts))
        except TypeError:  # an unhashable constant: kept as it is
            return t
        ids.add(id(shared))
        return shared

    def _conv(self, node, fn: Optional[FuncBuilder] = None):
        t = type(node)
        if t is ast.Name:
            return ("name", node.id)
        if t is ast.Attribute:
            return ("attr", self.conv(node.value, fn), node.attr)
        if t is ast.Call:
            return (
                "call",
                self.conv(node.func, fn),
                tuple(self.conv(a, fn) for a in node.args),
                tuple((k.arg, self.conv(k.value, fn)) for k in node.keywords),
            )
        if t is ast.Constant:
            v = node.value
            if v is Ellipsis:
                return ("unknown", "Ellipsis")
            return ("const", v)
        if t is ast.Subscript:
            return ("sub", self.conv(node.value, fn), self.conv(node.slice, fn))
        if t is ast.Dict:
            if len(node.keys) > MAX_DICT_ITEMS:
                return ("unknown", "bigdict")
            return (
                "dict",
                tuple((self.conv(k, fn) if k is not None else None, self.conv(v, fn)) for k, v in zip(node.keys, node.values)),
            )
        if t in (ast.List, ast.Tuple, ast.Set):
            if len(node.elts) > MAX_SEQ_ITEMS:
                return ("unknown", "bigseq")
            return ("seq", t.__name__.lower(), tuple(self.conv(e, fn) for e in node.elts))
        if t in (ast.ListComp, ast.GeneratorExp, ast.SetComp):
            return ("comp", self.conv(node.elt, fn))
        if t is ast.DictComp:
            return ("comp", self.conv(node.value, fn))
        if t is ast.Lambda:
            return ("func", self.lambda_function(node, fn))
        if t is ast.BinOp:
            return ("binop", type(node.op).__name__, self.conv(node.left, fn), self.conv(node.right, fn))
        if t is ast.Compare:
            return (
                "cmp",
                self.conv(node.left, fn),
                tuple((type(o).__name__, self.conv(c, fn)) for o, c in zip(node.ops, node.comparators)),
            )
        if t is ast.BoolOp:
            return ("bool", "and" if isinstance(node.op, ast.And) else "or", tuple(self.conv(v, fn) for v in node.values))
        if t is ast.UnaryOp:
            if isinstance(node.op, ast.Not):
                return ("not", self.conv(node.operand, fn))
            if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) and isinstance(
                node.operand.value, (int, float)
            ):
                return ("const", -node.operand.value)
            return ("unknown", "UnaryOp")
        if t is ast.IfExp:
            return ("ifexp", self.conv(node.test, fn), self.conv(node.body, fn), self.conv(node.orelse, fn))
        if t is ast.JoinedStr:
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(("const", v.value))
                elif isinstance(v, ast.FormattedValue):
                    parts.append(self.conv(v.value, fn))
            return ("fstr", tuple(parts))
        if t is ast.NamedExpr:
            return self.conv(node.value, fn)
        if t is ast.Await:
            return self.conv(node.value, fn)
        if t is ast.Starred:
            return ("starred", self.conv(node.value, fn))
        if t is ast.Slice and node.step is None and all(
                b is None or isinstance(b, ast.Constant) and type(b.value) is int for b in (node.lower, node.upper)):
            # `ls[1:3]`: the bounds kept, for a list literal's positions (evaluate.py: _subscript)
            return ("unknown", "Slice", *(None if b is None else b.value for b in (node.lower, node.upper)))
        return ("unknown", t.__name__)

    # ------------------------------------------------------------ call collection
    def collect(self, node, fn: FuncBuilder, guards: tuple, in_try: bool) -> None:
        """Record the calls, attribute reads and effects inside one expression."""
        stack = [(node, guards)]
        while stack:
            n, g = stack.pop()
            if n is None:
                continue
            t = type(n)
            if t is ast.Call:
                fn.calls.append(
                    CallSite(
                        func=self.conv(n.func, fn),
                        args=self._share(tuple(self.conv(a, fn) for a in n.args)),
                        kwargs=self._share(tuple((k.arg, self.conv(k.value, fn)) for k in n.keywords)),
                        line=n.lineno,
                        col=n.col_offset,
                        end_line=n.end_lineno or n.lineno,
                        end_col=n.end_col_offset or n.col_offset,
                        guards=g,
                        in_try=in_try,
                    )
                )
                f = n.func
                if isinstance(f, ast.Attribute):
                    self._note_env_call(f, n)
                    self._note_mutating_call(f, fn, n, g)
                    self._note_self_container_add(f, fn, n)
                    self._note_local_container_add(f, fn, n)
                    stack.append((f.value, g))
                elif isinstance(f, ast.Name):
                    self._note_self_setattr(f, fn, n)
                else:
                    stack.append((f, g))
                stack.extend((a, g) for a in n.args)
                stack.extend((k.value, g) for k in n.keywords)
            elif t is ast.Attribute:
                if isinstance(n.ctx, ast.Load):
                    base = self.conv(n.value, fn)
                    key = (base, n.attr, g)
                    if key not in fn.attrs:
                        fn.attrs[key] = AttrLoad(base, n.attr, n.lineno, n.col_offset, g)
                stack.append((n.value, g))
            elif t is ast.Lambda:
                self.lambda_function(n, fn)
            elif t is ast.IfExp:
                test = self.conv(n.test, fn)
                stack.append((n.test, g))
                stack.append((n.body, g + (Guard(test, True, n.lineno),)))
                stack.append((n.orelse, g + (Guard(test, False, n.lineno),)))
            elif t is ast.Compare:
                for op, comp in zip(n.ops, n.comparators):
                    if isinstance(op, (ast.In, ast.NotIn)):
                        fn.effects.append(
                            Effect("contains", (self.conv(comp, fn), self.conv(n.left, fn)), n.lineno, n.col_offset, g)
                        )
                stack.append((n.left, g))
                stack.extend((c, g) for c in n.comparators)
            elif t is ast.Subscript:
                if isinstance(n.ctx, ast.Load) and (_is_environ(n.value) or _may_run_getitem(n)):
                    fn.effects.append(
                        Effect("subscript", (self.conv(n.value, fn), self.conv(n.slice, fn)), n.lineno, n.col_offset, g)
                    )
                stack.append((n.value, g))
                stack.append((n.slice, g))
            elif t is ast.NamedExpr:
                fn.add_local(n.target.id, self.conv(n.value, fn))
                stack.append((n.value, g))
            elif t in (ast.Yield, ast.YieldFrom):
                if n.value is not None:
                    value = self.conv(n.value, fn)  # `yield from x` yields x's elements
                    fn.yields.append(("iter", value) if t is ast.YieldFrom else value)
                    stack.append((n.value, g))
            elif t in (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp):
                for gen in n.generators:
                    stack.append((gen.iter, g))
                    stack.extend((c, g) for c in gen.ifs)
                    if isinstance(gen.target, ast.Name):
                        fn.add_local(gen.target.id, ("iter", self.conv(gen.iter, fn)))
                if t is ast.DictComp:
                    stack.append((n.key, g))
                    stack.append((n.value, g))
                else:
                    stack.append((n.elt, g))
            else:  # the expression children, in field order (ast.iter_child_nodes, without a generator per node)
                for field in n._fields:
                    v = getattr(n, field, None)
                    if type(v) is list:
                        stack.extend((c, g) for c in v if isinstance(c, ast.expr))
                    elif isinstance(v, ast.expr):
                        stack.append((v, g))

    def _note_env_call(self, f: ast.Attribute, call: ast.Call) -> None:
        if _is_environ(f.value) and call.args:
            key = _const_str(call.args[0])
            if key is not None:
                if f.attr == "setdefault":
                    self.env_set.add(key)
                elif f.attr == "pop":
                    self.env_removed.add(key)
        elif isinstance(f.value, ast.Name) and f.value.id == "os" and call.args:
            key = _const_str(call.args[0])
            if key is not None and f.attr == "putenv":
                self.env_set.add(key)
            elif key is not None and f.attr == "unsetenv":
                self.env_removed.add(key)

    def _note_self_container_add(self, f: ast.Attribute, fn: FuncBuilder, call: ast.Call) -> None:
        """`self.layer.append(T5LayerFF(config))` (transformers' T5Block, diffusers' FeedForward `self.net`):
        the container an instance attribute holds gains what is appended, inserted or extended -- recorded as
        one more value of the attribute, the list of those elements, beside what `self.layer = ...` stored."""
        v = f.value
        owner = fn.s.class_name
        if not (isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and fn.s.params
                and v.value.id == fn.s.params[0] and owner in self.classes):
            return
        added = self._container_added(f, fn, call)
        if added is not None:
            c = self.classes[owner]
            c.self_attrs[v.attr] = c.self_attrs.get(v.attr, ()) + ((added, fn.s.qualname),)

    def _note_local_container_add(self, f: ast.Attribute, fn: FuncBuilder, call: ast.Call) -> None:
        """`attentions = []`, then `attentions.append(Transformer2DModel(...))` in a loop, then
        `self.attentions = nn.ModuleList(attentions)` (diffusers' CrossAttnDownBlock2D): the list a local
        name holds gains what is appended, inserted or extended -- one more value of the local, the list of
        those elements, beside what `attentions = ...` assigned (flow-insensitively, as every local)."""
        v = f.value
        if f.attr not in _ADDING_METHODS or not isinstance(v, ast.Name) or v.id in fn._params or \
                fn.is_global(v.id):
            return  # (the method first: whether a name is global takes a pass over the function's body)
        added = self._container_added(f, fn, call)
        if added is not None:
            fn.add_local(v.id, added)

    def _container_added(self, f: ast.Attribute, fn: FuncBuilder, call: ast.Call):
        """What ``container.append(x)`` / ``.insert(i, x)`` / ``.extend(xs)`` adds, as a list expression."""
        if call.keywords:
            return None
        if f.attr == "append" and len(call.args) == 1:
            return ("seq", "list", (self.conv(call.args[0], fn),))
        if f.attr == "insert" and len(call.args) == 2:
            return ("seq", "list", (self.conv(call.args[1], fn),))
        if f.attr == "extend" and len(call.args) == 1:
            return self.conv(call.args[0], fn)
        return None

    def _note_self_setattr(self, f: ast.Name, fn: FuncBuilder, call: ast.Call) -> None:
        """`setattr(self, "impl", Impl())` with a constant name in a method is `self.impl = Impl()`."""
        owner = fn.s.class_name
        if f.id != "setattr" or len(call.args) != 3 or call.keywords or not fn.s.params or owner not in self.classes:
            return
        obj, name = call.args[0], _const_str(call.args[1])
        if not (isinstance(obj, ast.Name) and obj.id == fn.s.params[0]) or name is None or not name.isidentifier():
            return
        c = self.classes[owner]
        c.self_attrs[name] = c.self_attrs.get(name, ()) + ((self.conv(call.args[2], fn), fn.s.qualname),)

    def _note_mutating_call(self, f: ast.Attribute, fn: FuncBuilder, call: ast.Call, g: tuple) -> None:
        if f.attr in _MUTATING_METHODS and isinstance(f.value, ast.Name) and fn.is_global(f.value.id):
            if f.value.id not in ("os", "self", "cls"):
                fn.effects.append(Effect("mutate", f.value.id, call.lineno, call.col_offset, g))
