"""Program: the cross-module view, built lazily from summaries.

``Program`` answers "what may this expression refer to?" (``eval``), "what does calling it return?"
(``call``) and "what is ``value.attr``?" (``attr``) over the small expression language of ``summary.py``.
Everything is memoised; recursion is cut, never followed forever.

The data model and the passes are apart (as in PyCG): this file holds ``Program``'s state; each mechanism
is a mixin in its own module.

- ``locator.py``   ModuleLocator (module name -> file), the mention index, ``split_id`` / ``dotted``
- ``scope.py``     Scope, Stats, MAX_CALL_DEPTH, the fixed-order / freezing helpers
- ``resolve.py``   loading modules; names, imports, parameters and annotations -> values
- ``evaluate.py``  expressions -> values; ``value.attr``
- ``classes.py``   MRO, members, subclasses, abstract dispatch
- ``calls.py``     decorators, argument binding, call results, external calls
- ``guards.py``    three-valued truth of conditions; whether guards may hold
- ``fixpoint.py``  cycles of values (f returns g(), g returns f()) solved to their least fixpoint
- ``widening.py``  bounds on derived names and nesting, so that a cycle's rounds settle
- ``facts.py``     the user's facts (--assume, --env): expressions and environment variables with known values
"""
from __future__ import annotations

from typing import Callable

from ..contexts import ContextCaps
from ..values import forget_reprs
from .calls import MAX_CALL_CONTEXTS, CallMixin, _foreign_origins
from .classes import ClassMixin
from .evaluate import EvaluatorMixin
from .fixpoint import FixpointMixin, reset_fixpoint
from .guards import GuardMixin
from .locator import BUILTIN_NAMES, IDENT_RE, STDLIB, ModuleLocator, dotted, split_id
from .resolve import ResolverMixin
from .scope import _BINDING_PAIRS, _SCOPE_KEYS, MAX_CALL_DEPTH, Scope, Stats

# what other modules import from ``compile_lint.program``
__all__ = ["BUILTIN_NAMES", "IDENT_RE", "MAX_CALL_CONTEXTS", "MAX_CALL_DEPTH", "STDLIB", "ModuleLocator", "Program",
           "Scope", "Stats", "dotted", "split_id"]


class Program(ResolverMixin, EvaluatorMixin, ClassMixin, CallMixin, GuardMixin, FixpointMixin):
    """The state every pass shares: loaded summaries, the memo tables, the recursion guard (``_active``) and
    the scan counters.  The mixins hold the passes; none keeps state of its own."""

    def __init__(self, locator: ModuleLocator, load_summary: Callable, arch=None, scanned_modules=(), facts=None):
        self.locator = locator
        self._load_summary = load_summary  # (name, path, is_package) -> ModuleSummary
        self.modules: dict = {}
        self._function_of: dict = {}  # fid -> FunctionSummary or None (function)
        self._class_of: dict = {}  # cid -> ClassSummary or None (klass)
        self.stats = Stats()
        self.scanned_modules = frozenset(scanned_modules)
        self.arch = arch  # optional ArchFacts (--target-arch): folds device queries into constants
        self.facts = facts  # optional UserFacts (--assume, --env): the user's word on the deployment (facts.py)
        self.foreign_origins = _foreign_origins()
        self._global_memo: dict = {}
        self._eval_memo: dict = {}
        self._call_memo: dict = {}
        # Func -> the argument bindings its return value is worked out for precisely (calls.py)
        self._call_contexts = ContextCaps(MAX_CALL_CONTEXTS)
        self._func_value_memo: dict = {}
        # function id -> {wrapper id: why it is conditional}: wrappers that its decorators install on some
        # paths only (flashinfer_api returns the function itself unless FLASHINFER_LOGLEVEL was set at import)
        self.conditional_wrappers: dict = {}
        self._mro_memo: dict = {}
        self._decorating = 0  # class decorators being evaluated (ClassMixin.decorator_stores)
        self._active: set = set()  # the truth and dispatch guards' (cut, not solved: fixpoint.py)
        reset_fixpoint(self)  # the memoised values' computations under way (fixpoint.py)
        self._subclass_memo: dict = {}
        self._value_sets: dict = {}  # interned value sets (_interned)
        # (dotted name, attribute) -> its value set, (type, attribute) -> an instance's: EvaluatorMixin.attr
        self._external_attrs: dict = {}
        self._external_instance_attrs: dict = {}
        self._reads_memo: dict = {}  # id(function) -> id(expr) -> (expr, names it may read): _narrowed
        self._value_reads_memo: dict = {}  # id(function) -> (function, names its value may read): _value_bindings
        self._name_sets: dict = {}  # interned sets of names (_param_reads)
        _SCOPE_KEYS.clear()  # interned scope keys (Scope.key) are per program: a finished scan's go with it
        _BINDING_PAIRS.clear()
        forget_reprs()  # (the values' texts, one object each: values.py)
        self._mention_index: dict = {}  # None (the scanned files) or a package -> _MentionIndex
        self.env_set: set = set()
        self.env_removed: set = set()
        # function id -> {parameter: values passed to it by some call of the program}: what an unbound
        # parameter may be, flow-insensitively (PyCG's assumption).  Filled by the whole-program call graph
        # (lint/callgraph.py) only; empty, parameters without a binding stay unknown.
        self.argument_values: dict = {}

    def forget_values(self) -> None:
        """Drop every value worked out so far (not the loaded modules): after ``argument_values`` grew."""
        for memo in (self._global_memo, self._eval_memo, self._call_memo, self._call_contexts, self._func_value_memo):
            memo.clear()
        reset_fixpoint(self)
