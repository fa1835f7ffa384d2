"""Plain-data summaries of one source file: what the later stages need, and nothing else.

A summary is built once per file (see ``index.py``), is picklable, and is cached by content hash, so no
syntax tree is kept past indexing.  Expressions are kept in a small tagged-tuple language (``Expr``) that
the resolver in ``program/`` understands:

    ("name", id)                      ("attr", base, attr)           ("const", value)
    ("call", func, args, kwargs)      ("sub", base, key)             ("dict", ((k, v), ...))
    ("seq", kind, items)              ("comp", element)              ("func", qualname)   # a lambda / local def
    ("binop", op, left, right)        ("cmp", left, ((op, right), ...))
    ("bool", "and"|"or", values)      ("not", operand)               ("ifexp", test, body, orelse)
    ("fstr", parts)                   ("item", value, index)         ("iter", iterable)
    ("rest", value, start, after)     # `*b` of `a, *b, c = value`: value[start:len - after], a list
    ("enter", ctx_manager)            ("starred", value)             ("unknown", node_type)

kwargs are ``((name_or_None, expr), ...)``; ``None`` stands for ``**mapping``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

Expr = tuple  # see the module docstring

SUMMARY_FORMAT = 21  # bump when the shape below changes (invalidates the on-disk cache)

# IMMUTABLE: Guard, CallSite, AttrLoad, Effect and Binding are hashed and never changed after indexing, but
# are not declared frozen: a frozen slotted dataclass unpickles through a Python-level __setstate__ (2.6
# million calls, 8 s of a whole site-packages scan); these unpickle in C.  Slots: a summary of a whole
# site-packages held half its memory in per-instance __dict__s.


@dataclass(slots=True, unsafe_hash=True)  # immutable by convention; not frozen: see IMMUTABLE
class Guard:
    """An enclosing branch condition: the code runs only if ``cond`` is truthy == ``polarity``."""

    cond: Expr
    polarity: bool
    line: int = 0  # the line of the `if` / `while` / conditional expression / `except` (for reports)
    # the other branch raises (`if backend not in table: raise ValueError(...)`): a validation, assumed to pass
    # where the walk cannot decide it -- the code after it runs on every call that does not fail
    validated: bool = False


# The condition of an ``except`` handler's body: the ``try`` body raised.  Undecidable by the walk.
RAISES: Expr = ("unknown", "the try body raises")


def import_raises(modules: tuple) -> Expr:
    """The condition of a handler that catches ``ImportError`` when its ``try`` body imports ``modules``:
    the import fails.  Decided where the user says one of them is not installed (``--not-installed``);
    otherwise as undecidable as ``RAISES``."""
    return ("raises", "import", modules)


def is_raises(cond: Expr) -> bool:
    """A handler's condition: the try body raised (whatever is known of why)."""
    return cond == RAISES or cond[0] == "raises"


@dataclass(slots=True, unsafe_hash=True)  # immutable by convention; not frozen: see IMMUTABLE
class CallSite:
    func: Expr
    args: tuple
    kwargs: tuple
    line: int
    col: int
    end_line: int
    end_col: int
    guards: tuple = ()
    in_try: bool = False


@dataclass(slots=True, unsafe_hash=True)  # immutable by convention; not frozen: see IMMUTABLE
class AttrLoad:
    """``base.attr`` read (not called): may run a property or cached_property getter."""

    base: Expr
    attr: str
    line: int
    col: int
    guards: tuple = ()


@dataclass(slots=True, unsafe_hash=True)  # immutable by convention; not frozen: see IMMUTABLE
class Effect:
    """A statement that matters without being a call.

    kinds: ``with`` (``detail`` = the context-manager expression; ``__enter__`` runs),
    ``contains`` (``detail`` = (container, key): ``key in container``),
    ``subscript`` (``detail`` = (container, key): a read ``container[key]``, where it may run a scanned
    ``__getitem__``: not a slice, not a tuple of indices),
    ``setitem`` / ``setattr`` (``detail`` = (container, key) / (object, attribute name): a store, which runs
    the object's ``__setitem__`` / ``__setattr__``),
    ``mutate`` (``detail`` = root global name being mutated), ``import`` (``detail`` = module name),
    ``iter`` (``detail`` = what a ``for`` loop iterates over), ``raise`` (``detail`` = what ``raise X`` raises,
    when it is not a call: a class raised is instantiated).
    """

    kind: str
    detail: Any
    line: int
    col: int
    guards: tuple = ()


@dataclass(slots=True, unsafe_hash=True)  # immutable by convention; not frozen: see IMMUTABLE
class Binding:
    """One way a module-level name gets its value.  kind: import | assign | def | class."""

    kind: str
    value: Any  # import: (module, name|None); assign: Expr; def/class: qualname
    line: int
    guards: tuple = ()


@dataclass(slots=True)
class FunctionSummary:
    qualname: str  # "f", "C.m", "f.<locals>.g", "<lambda>@12:4", "<module>"
    name: str
    line: int
    end_line: int
    decorators: tuple = ()
    params: tuple = ()  # positional-or-keyword names, in order (incl. self)
    kwonly: tuple = ()
    vararg: Optional[str] = None
    kwarg: Optional[str] = None
    annotations: dict = field(default_factory=dict)  # param -> Expr
    defaults: dict = field(default_factory=dict)  # param -> Expr
    returns_annotation: Optional[Expr] = None
    returns: tuple = ()
    locals: dict = field(default_factory=dict)  # name -> tuple[Expr]
    calls: tuple = ()
    attrs: tuple = ()
    effects: tuple = ()
    class_name: Optional[str] = None  # owning class qualname, for methods
    parent: Optional[str] = None  # enclosing function qualname, for closures
    is_lambda: bool = False
    is_stub: bool = False  # body is only a docstring / pass / ... / raise NotImplementedError (abstract)
    return_guards: tuple = ()  # guards of each entry of ``returns``, same order
    yields: tuple = ()  # yielded expressions (what a @contextmanager's `with ... as x` binds)
    # `param.attr = value` on a parameter that is not `self` (a class decorator's `cls.forward = forward`):
    # ((param, attr, Expr), ...)
    param_stores: tuple = ()

    def calls_named(self, *names: str) -> list:
        """The call sites whose callee is spelled with one of ``names`` last (``f(...)``, ``x.f(...)``).  A
        reader that looks only for such calls (a class's construction sites, a setter called on ``self``)
        asks through here, so that incremental analysis records what it read as those names' calls, not all
        the body's (lint/tracking.py: an edit adding another call does not touch it)."""
        return [s for s in self.calls if callee_name(s.func) in names]


def callee_name(func: Expr) -> Optional[str]:
    """The last name a call's callee is spelled with: ``f`` for ``f(...)`` and ``x.f(...)``, else None."""
    kind = func[0]
    if kind == "name":
        return func[1]
    if kind == "attr":
        return func[2]
    return None


@dataclass(slots=True)
class ClassSummary:
    qualname: str
    name: str
    line: int
    bases: tuple = ()
    decorators: tuple = ()
    methods: dict = field(default_factory=dict)  # name -> function qualname
    class_attrs: dict = field(default_factory=dict)  # name -> tuple[Expr]
    self_attrs: dict = field(default_factory=dict)  # name -> tuple[(Expr, method qualname)]
    metaclass: Optional[Expr] = None  # `class C(Base, metaclass=M)`
    # class attributes declared with an annotation and a value (`feed_forward_proj: str = "relu"`): in a
    # dataclass, fields whose value is the default the constructor may replace
    fields: tuple = ()


@dataclass(slots=True)
class ModuleSummary:
    name: str
    path: str
    is_package: bool
    bindings: dict = field(default_factory=dict)  # name -> tuple[Binding]
    star_imports: tuple = ()  # ((module, guards), ...)
    functions: dict = field(default_factory=dict)  # qualname -> FunctionSummary ("<module>" = top level)
    classes: dict = field(default_factory=dict)  # qualname -> ClassSummary
    dunder_all: Optional[tuple] = None
    # name -> tuple[Binding("store", (keys, value, function qualname or None), line, guards)]: the item
    # assignments ``name[k] = v`` (and ``name.update({k: v})``) to a module-level container, at the top level
    # (None) or in a function that does not bind the name itself; with no keys, the rebinding of the name in a
    # function that declares it ``global``
    stores: dict = field(default_factory=dict)
    # the modules its import always imports (top level, outside any try and branch): where one of them
    # cannot be imported, neither can this module
    required_imports: tuple = ()
    env_keys_set: tuple = ()  # os.environ keys this module assigns
    env_keys_removed: tuple = ()  # os.environ keys this module pops / deletes
    suppressions: dict = field(default_factory=dict)  # line -> tuple of codes ("*" = all)
    file_suppressions: tuple = ()
    error: Optional[str] = None  # why the file could not be indexed
